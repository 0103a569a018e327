/** scripts/prepare-package.js: what the package's tests and the bench read. */
export const PREPARED: string;
export type Prepared = { tarball: string; consumer: string; installed: { names: string[]; bytes: number } };
export function prepared(): Prepared;
