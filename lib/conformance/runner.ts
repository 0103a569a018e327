/**
 * Runs the conformance cases against any resolver (docs/library.md#conformance): the publishers
 * start on loopback, the adapter resolves each case's query on them, and each expected verdict is
 * compared with what it answered. An implementation of the protocol writes the adapter: a function
 * from a query and where the publishers are to an answer of the shape below.
 */
import { CASES, type ConformanceCase, type ExpectedEntity } from "./cases.ts";
import { startPublishers, type Publishers } from "./publishers.ts";

/** The least of an answer the runner reads: the record `/api/resolve` answers has it all. */
export type ConformanceAnswer = {
  results: {
    entity: { domain: string; status: string };
    properties?: { verified: boolean }[];
    credentials?: { verified: boolean }[];
    connections?: { verified: boolean }[];
    focus?: { verified: boolean };
  }[];
};

/** Resolves `query` on the publishers: trust `caPem`, and send each host where `connectTo` says. */
export type ConformanceAdapter = (
  query: string,
  publishers: Pick<Publishers, "port" | "caPem" | "hosts" | "connectTo">,
) => Promise<unknown>;

export type CaseOutcome = { id: string; rule: string; says: string; passed: boolean; problems: string[] };
export type ConformanceReport = { passed: number; failed: number; outcomes: CaseOutcome[] };

const isAnswer = (value: unknown): value is ConformanceAnswer =>
  typeof value === "object" && value !== null && Array.isArray((value as { results?: unknown }).results);

/** What differs between one expected entity and the answer. */
function differences(expected: ExpectedEntity, answer: ConformanceAnswer): string[] {
  const result = answer.results.find((r) => r.entity.domain.toLowerCase() === expected.domain);
  if (!result) return [`no result for ${expected.domain}`];
  const problems: string[] = [];
  const accepted = result.entity.status === "accepted";
  if (accepted !== expected.accepted)
    problems.push(`${expected.domain}: ${expected.accepted ? "should be accepted" : "should not be accepted"}, is ${result.entity.status}`);
  for (const claim of expected.claims ?? []) {
    const got = result[claim.list]?.[claim.index];
    if (!got) problems.push(`${expected.domain}: no ${claim.list}[${claim.index}]`);
    else if (got.verified !== claim.verified)
      problems.push(`${expected.domain}: ${claim.list}[${claim.index}] should ${claim.verified ? "" : "not "}verify`);
  }
  if (expected.claims && accepted) {
    const counted = (result.properties?.length ?? 0) + (result.credentials?.length ?? 0) + (result.connections?.length ?? 0);
    if (counted !== expected.claims.length) problems.push(`${expected.domain}: ${counted} claims, ${expected.claims.length} expected`);
  }
  if (expected.focus && result.focus?.verified !== expected.focus.verified) {
    problems.push(`${expected.domain}: the claim asked about should ${expected.focus.verified ? "" : "not "}verify`);
  }
  return problems;
}

/** How long an adapter may take to answer one case before the case fails, unless told otherwise. */
export const CASE_DEADLINE_MS = 30_000;

export type ConformanceOptions = {
  /** @default every case */
  cases?: readonly ConformanceCase[];
  /** @default {@link CASE_DEADLINE_MS} */
  caseDeadlineMs?: number;
};

/** Rejects after `ms`, saying so. */
const deadline = (ms: number) =>
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms).unref?.());

/** One case: the adapter's answer against the expected verdicts; a throw, a malformed answer or none in time fails it. */
async function runCase(c: ConformanceCase, adapter: ConformanceAdapter, publishers: Publishers, deadlineMs: number): Promise<CaseOutcome> {
  const outcome = { id: c.id, rule: c.rule, says: c.says };
  try {
    const answer = await Promise.race([adapter(c.query, publishers), deadline(deadlineMs)]);
    if (!isAnswer(answer)) return Object.assign(outcome, { passed: false, problems: ["the answer has no results[]"] });
    const problems = c.expect.flatMap((e) => differences(e, answer));
    if (answer.results.length !== c.expect.length) problems.push(`${answer.results.length} results, ${c.expect.length} expected`);
    for (const [url, most] of Object.entries(c.requestsAtMost ?? {})) {
      const asked = publishers.requests.get(url) ?? 0;
      if (asked > most) problems.push(`${url} was requested ${asked} times, at most ${most} expected`);
    }
    return Object.assign(outcome, { passed: problems.length === 0, problems });
  } catch (err) {
    return Object.assign(outcome, { passed: false, problems: [`the adapter threw: ${err instanceof Error ? err.message : String(err)}`] });
  }
}

/** Runs the cases (all of them by default) through `adapter`, all at once, and says which passed and why not. */
export async function runConformance(adapter: ConformanceAdapter, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const { cases = CASES, caseDeadlineMs = CASE_DEADLINE_MS } = options;
  const publishers = await startPublishers(cases);
  try {
    const outcomes = await Promise.all(cases.map((c) => runCase(c, adapter, publishers, caseDeadlineMs)));
    const passed = outcomes.filter((o) => o.passed).length;
    return { passed, failed: outcomes.length - passed, outcomes };
  } finally {
    await publishers.close();
  }
}
