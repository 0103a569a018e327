/**
 * Where a CLI command writes (docs/decisions.md#interfaces); `color` when standard output is a
 * terminal that wants colour. Passed in to each command, so `main.ts` and `check.ts` share it without
 * importing each other.
 */
import type { Writable } from "node:stream";

export type Io = {
  out: (text: string) => void;
  err: (text: string) => void;
  color?: boolean;
  /** Standard output as a stream, for what is too large to hold (an export); else `out` takes it. */
  stdout?: Writable;
  /** Whether standard error is a terminal: long work (an export, an import) shows its progress there. */
  progress?: boolean;
};
