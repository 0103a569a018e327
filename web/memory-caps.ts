/**
 * Every memory cap of the server, declared once (docs/architecture.md#memory-caps): what it holds and
 * how much, in bytes counted as the cache counts them (a buffer's whole allocation, docs/decisions.md#memory)
 * or in entries where an entry is small and fixed. The caches are built from these values, and the
 * docs' table of caps is checked against them by a test.
 */
import { DEFAULTS, MiB } from "ident-resolver";

export type MemoryCap = {
  /** How much: bytes, or entries. */
  cap: number;
  unit: "bytes" | "entries";
  /** What it holds, in words. */
  holds: string;
  /** Where it is kept. */
  in: string;
};

export const MEMORY_CAPS = {
  documents: {
    cap: DEFAULTS.cacheBytes,
    unit: "bytes",
    holds: "fetched documents and outcomes, the in-process tier (Redis holds the fleet's)",
    in: "lib/fetch/cache.ts",
  },
  pages: { cap: 32 * MiB, unit: "bytes", holds: "warm pages whole, each part also compressed once", in: "web/page-cache.ts" },
  apiLookups: { cap: 16 * MiB, unit: "bytes", holds: "warm /api/resolve answers, as sent", in: "web/api.ts" },
  apiSearches: { cap: 8 * MiB, unit: "bytes", holds: "/api/search answers of the last 10 s", in: "web/api.ts" },
  previews: { cap: 8 * MiB, unit: "bytes", holds: "drawn preview images (PNG), 25 to 80 KB each", in: "web/preview-image-render.tsx" },
  badges: { cap: 2 * MiB, unit: "bytes", holds: "drawn badges (SVG) of the last minute, about 1.5 KB each", in: "web/badge.ts" },
  versions: { cap: 10_000, unit: "entries", holds: "the digest of each warm page's and answer's version", in: "web/versions.ts" },
} as const satisfies Record<string, MemoryCap>;

export type MemoryCapName = keyof typeof MEMORY_CAPS;
