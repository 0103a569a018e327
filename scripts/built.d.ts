// The types of scripts/built.js, for TypeScript that reads it (the tests).
export declare const BUILT_DIR: string;
export declare const BUILT_CLI: string;
export declare const BUILT_CHECK_CONFIG: string;
export declare const BUILT_SOURCES: string;
export declare function builtFile(root: string, file: string): string | null;
