import pkg from "./package.json" with { type: "json" };

/** The resolver's version, sent as `User-Agent: ident-resolver/<version>` (docs/decisions.md#fetching). */
export const VERSION: string = pkg.version;
export const USER_AGENT = `ident-resolver/${VERSION}`;

/** What every record names as its maker (docs/library.md#versions). */
export const RESOLVER = { name: "ident-resolver" as const, version: VERSION };
