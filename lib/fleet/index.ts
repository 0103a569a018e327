/** `ident-resolver/redis` (docs/library.md): the link to Redis and the documents a fleet shares through it. */
export { connectRedis, KEY_PREFIX, type FleetLink, type FleetLinkOptions } from "../redis.ts";
export { createSharedDocuments, type SharedDocuments, type SharedDocumentsOptions } from "./shared-documents.ts";
