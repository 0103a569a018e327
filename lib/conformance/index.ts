/**
 * `ident-resolver/conformance` (docs/library.md#conformance): the protocol's cases as data, their
 * publishers on loopback, and a runner any implementation can use through a small adapter.
 */
export { CASES, PROTOCOL_RULES, rulesOf, type ConformanceCase, type ExpectedClaim, type ExpectedEntity, type Published } from "./cases.ts";
export { createTestCa, type TestCa } from "./ca.ts";
export { startPublishers, type Publishers } from "./publishers.ts";
export {
  CASE_DEADLINE_MS,
  runConformance,
  type CaseOutcome,
  type ConformanceAdapter,
  type ConformanceAnswer,
  type ConformanceOptions,
  type ConformanceReport,
} from "./runner.ts";
