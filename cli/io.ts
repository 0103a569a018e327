/**
 * Where a CLI command writes (docs/decisions.md#interfaces); `color` when standard output is a
 * terminal that wants colour. Passed in to each command, so `main.ts` and `check.ts` share it without
 * importing each other.
 */
export type Io = { out: (text: string) => void; err: (text: string) => void; color?: boolean };
