import { type Checkpoint, CheckpointError, type CheckpointStore } from './store.js';

/**
 * Signed checkpoints, for stores that machines share (a Redis server, a shared disk): whoever
 * can write there could otherwise hand a run any snapshot. With a secret, each checkpoint is
 * saved with an HMAC-SHA-256 of its JSON, and one whose signature is missing or does not
 * match is refused, as a CheckpointError, before the run makes any call.
 *
 * Web Crypto (`globalThis.crypto.subtle`), not node:crypto, so that a store works wherever
 * Booth does (Node, Deno, Bun, workers). Web Crypto is asynchronous, and so are a signed
 * store's `load` and `save`: the store interface allows it, and checkpoints are `acheck()`'s
 * alone (`check()` refuses them), which awaits every store call.
 */

/** What is used of Web Crypto, typed here: Booth's types need neither the DOM's nor Node's. */
interface HmacCrypto {
  importKey(format: 'raw', key: Uint8Array, algorithm: { name: 'HMAC'; hash: 'SHA-256' }, extractable: false, usages: ['sign', 'verify']): Promise<unknown>;
  sign(algorithm: 'HMAC', key: unknown, data: Uint8Array): Promise<ArrayBuffer>;
  verify(algorithm: 'HMAC', key: unknown, signature: Uint8Array, data: Uint8Array): Promise<boolean>;
}

/** A store's secret: text (its UTF-8 bytes) or bytes. */
export type CheckpointSecret = string | Uint8Array;

/** The fewest bytes a secret may have: a shorter HMAC key can be guessed. */
const MIN_SECRET_BYTES = 16;
/** Says which MAC signed, so that another can follow without misreading this one. */
const SCHEME = 'hmac-sha256:';

/**
 * `store` with each checkpoint signed under `secret` as it is saved and checked as it is
 * loaded; `store` itself when there is no secret. The signature is the checkpoint's last
 * field, over the JSON of the fields before it: the JSON a store writes and reads back is
 * the same text, so the loaded object stringified again is what was signed.
 */
export function signedStore(secret: unknown, entry: string, store: CheckpointStore): CheckpointStore {
  if (secret === undefined || secret === null) return store;
  const bytes = secretBytes(secret, entry);
  const subtle = (globalThis as { crypto?: { subtle?: HmacCrypto } }).crypto?.subtle;
  if (subtle === undefined) {
    throw new TypeError(`\`secret\` of ${entry}() needs Web Crypto (globalThis.crypto.subtle), which this runtime lacks; Node 20 and later, Deno, Bun and browsers have it.`);
  }
  // Imported on first use: a failure then belongs to a load or save, which reports it.
  let imported: Promise<unknown> | undefined;
  const key = () => (imported ??= subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']));
  const encoder = new TextEncoder();
  const refuse = (name: string, problem: string): never => {
    throw new CheckpointError(name, store.locate?.(name) ?? null, `${problem} Delete it to start the run afresh.`);
  };
  return {
    ...(store.locate ? { locate: store.locate } : {}),
    load: async (name) => {
      const loaded: unknown = await store.load(name);
      if (loaded === undefined || loaded === null) return loaded;
      const { signature, ...checkpoint } = loaded as { signature?: unknown };
      if (signature === undefined) {
        refuse(name, 'carries no signature, and this store has a secret: it was not saved through a store with the secret, or it was changed.');
      }
      const mac = typeof signature === 'string' && signature.startsWith(SCHEME) ? fromHex(signature.slice(SCHEME.length)) : null;
      // verify() compares in constant time: a guess learns nothing from how long it took.
      if (mac === null || !(await subtle.verify('HMAC', await key(), mac, encoder.encode(signedText(checkpoint))))) {
        refuse(name, "has a signature that does not match this store's secret: it was changed after it was saved, or saved with another secret.");
      }
      return checkpoint;
    },
    save: async (name, checkpoint: Checkpoint) => {
      const mac = new Uint8Array(await subtle.sign('HMAC', await key(), encoder.encode(JSON.stringify(checkpoint))));
      await store.save(name, { ...checkpoint, signature: `${SCHEME}${toHex(mac)}` } as Checkpoint);
    },
    delete: (name) => store.delete(name),
  };
}

/**
 * The JSON a signature covers. A stored value nested deeper than JSON.stringify can recurse
 * (a RangeError) was never written by Booth, which saves nothing deeper than its reader keeps:
 * it is text that cannot match, so the signature check refuses it like any changed checkpoint.
 */
function signedText(checkpoint: object): string {
  try {
    return JSON.stringify(checkpoint);
  } catch {
    return '';
  }
}

function secretBytes(secret: unknown, entry: string): Uint8Array {
  // Never the secret itself in a message: only its kind and its length.
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret instanceof Uint8Array ? new Uint8Array(secret) : null;
  const expected = `Expected \`secret\` of ${entry}() to be a string or a Uint8Array of at least ${MIN_SECRET_BYTES} bytes, such as 32 random bytes (openssl rand -base64 32)`;
  if (bytes === null) throw new TypeError(`${expected}, got ${Array.isArray(secret) ? 'an array' : `a ${typeof secret}`}.`);
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new RangeError(`${expected}, got ${typeof secret === 'string' ? 'a string' : 'a Uint8Array'} of ${bytes.length} bytes.`);
  }
  return bytes;
}

function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}

/** The bytes of a lowercase hex MAC, or null for anything else. */
function fromHex(hex: string): Uint8Array | null {
  if (!/^(?:[0-9a-f]{2})+$/.test(hex)) return null;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i += 1) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}
