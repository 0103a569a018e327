import { z } from "zod";
import { extend } from "../objects.ts";
import { keptMessage } from "./display-limits.ts";

/** A finding about a document or claim (docs/decisions.md#the-result-record). */
export const Problem = z.object({
  code: z.string(),
  severity: z.enum(["error", "warning"]),
  message: z.string(),
  path: z.string().optional(),
  /** A library's own words behind `message`, such as a TLS error; never the explanation (docs/decisions.md#reasons). */
  detail: z.string().optional(),
});
export type Problem = z.infer<typeof Problem>;

/** A problem; its message, which may quote a publisher, kept to its length (docs/decisions.md#validation). */
const problem = (code: string, severity: Problem["severity"], message: string, path?: string): Problem =>
  path === undefined ? { code, severity, message: keptMessage(message) } : { code, severity, message: keptMessage(message), path };
export const warning = (code: string, message: string, path?: string): Problem => problem(code, "warning", message, path);
export const error = (code: string, message: string, path?: string): Problem => problem(code, "error", message, path);

/** `problem` with the library's words behind it, when there are any, kept to a message's length. */
export const withDetail = (problem: Problem, detail: string | undefined): Problem =>
  detail ? extend(problem, { detail: keptMessage(detail) }) : problem;
