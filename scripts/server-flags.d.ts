// The types of scripts/server-flags.js, for TypeScript that reads it (the bench, the tests).
export declare const SERVER_NODE_FLAGS: readonly string[];
export declare const HEAP_GROWING_FLAG: string;
