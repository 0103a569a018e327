import { z } from "zod";
import { extend } from "../objects";

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

export const warning = (code: string, message: string, path?: string): Problem =>
  path === undefined ? { code, severity: "warning", message } : { code, severity: "warning", message, path };
export const error = (code: string, message: string, path?: string): Problem =>
  path === undefined ? { code, severity: "error", message } : { code, severity: "error", message, path };

/** `problem` with the library's words behind it, when there are any. */
export const withDetail = (problem: Problem, detail: string | undefined): Problem => (detail ? extend(problem, { detail }) : problem);
