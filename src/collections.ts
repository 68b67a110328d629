// `tracepipe/collections`: bounded memory for what a component remembers about the traces and runs
// passing through it. `TtlMap` expires entries a fixed time after their last write and holds at
// most a fixed number; `UuidMap` keeps the same rules for UUID keys and values outside the JS heap;
// the UUID word helpers (`parseUuid`, `writeUuid`, `hashWords`) are what such compact tables key
// their typed arrays with. The `batch` and `genai` processors and the agent server are built on it.
//
// Everything exported here is public API under semantic versioning; api/tracepipe.api.md lists
// it, and a test fails when it changes without that file being updated.

export { TtlMap } from './collections/ttl-map.ts';
export type { UuidMapOptions } from './collections/uuid-map.ts';
export { UuidMap } from './collections/uuid-map.ts';
export { UUID_CHARS, hashWords, parseUuid, writeUuid } from './collections/uuid-words.ts';
