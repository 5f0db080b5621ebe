/**
 * `boothjs/node`: the parts of Booth that need Node's file system (tested on Node).
 * Everything else — `boothjs`, its machine, adapters, test kit, visualizers, `memoryStore` and
 * `boothjs/redis` — imports no Node built-in, so it runs in browsers, edge runtimes and Workers too.
 */
export { fileStore, type FileStoreOptions } from './file-store.js';
