/**
 * SHA-256 of a text's UTF-8, in hex, synchronous and without `node:crypto`, so the core runs where
 * only `fetch` exists (docs/library.md#runtimes). A lone surrogate is encoded as U+FFFD, as
 * `node:crypto` does, so a key hashed before is hashed the same now.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

export const sha256Hex = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)));
