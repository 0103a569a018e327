/** Where the CLI writes; `color` when standard output is a terminal that wants colour. Passed to each command. */
export type Io = { out: (text: string) => void; err: (text: string) => void; color?: boolean };
