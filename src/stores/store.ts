/**
 * Durable checks: `acheck(…, { checkpoint, key })` saves the machine's snapshot after
 * every finished attempt and resumes from it, so a crash repeats at most the call that
 * was in flight, never a finished attempt. This file is the contract every store keeps:
 * what a checkpoint is, the store's three methods, and the error a bad checkpoint raises.
 */

/** What a store keeps per key: the persisted snapshot of the checkpoint machine, with what it is. */
export interface Checkpoint {
  readonly format: typeof FORMAT;
  readonly version: typeof VERSION;
  readonly key: string;
  /** XState's persisted snapshot of the checkpoint machine: plain JSON. */
  readonly snapshot: unknown;
}

/** Where checkpoints live. Any of the methods may be async. */
export interface CheckpointStore {
  /** The checkpoint saved under `key`, or undefined (or null) when there is none. */
  load(key: string): unknown;
  save(key: string, checkpoint: Checkpoint): unknown;
  delete(key: string): unknown;
  /** Where `key` is kept, for error messages (a file store names the file). */
  locate?(key: string): string;
}

export const FORMAT = 'booth.checkpoint';
export const VERSION = 1;

/** A checkpoint that cannot be used: corrupt, from something else, or from a different run. */
export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
  /** The run's key. */
  readonly key: string;
  /** Where the checkpoint is kept, when the store can say. */
  readonly location: string | null;

  constructor(key: string, location: string | null, problem: string, options?: { cause?: unknown }) {
    super(`Booth checkpoint for key ${JSON.stringify(key)}${location ? ` in ${location}` : ''} ${problem}`, options);
    this.key = key;
    this.location = location;
  }
}

/**
 * The first 8 hex digits of the SHA-256 of `text`: names a prompt in a message without quoting it.
 * Web Crypto, so that it runs in every runtime Booth does; its digest is asynchronous. Null where
 * Web Crypto has no digest (a page that is not a secure context).
 */
export async function digest(text: string): Promise<string | null> {
  // A page served over plain HTTP has no crypto.subtle: the message then names no digest, and is still a CheckpointError.
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) return null;
  const hash = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return Array.from(hash.subarray(0, 4), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * A stored checkpoint that is not JSON. JSON.parse's message can quote the text around
 * the fault, and that text is a prompt or a reply: the message gives only where it is.
 */
export function corruptCheckpoint(key: string, location: string | null, error: unknown, fix: string): CheckpointError {
  const position = /at position (\d+)/.exec(String((error as { message?: unknown } | null)?.message))?.[1];
  const where = position === undefined ? '' : ` at character ${position}`;
  return new CheckpointError(key, location, `is corrupt: it is not JSON${where}. ${fix}`, { cause: error });
}
