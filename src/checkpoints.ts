import { randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type CheckpointSecret, signedStore } from './checkpoint-signing.js';
import { readShape } from './options.js';

/**
 * Durable checks: `acheck(…, { checkpoint, key })` saves the machine's snapshot after
 * every finished attempt and resumes from it, so a crash repeats at most the call that
 * was in flight, never a finished attempt.
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

  constructor(key: string, location: string | null, problem: string) {
    super(`Booth checkpoint for key ${JSON.stringify(key)}${location ? ` in ${location}` : ''} ${problem}`);
    this.key = key;
    this.location = location;
  }
}

/** Keeps checkpoints in this process, as JSON text, so nothing is shared with the running machine. */
export function memoryStore(): CheckpointStore & { readonly size: number } {
  const saved = new Map<string, string>();
  return {
    load: (key) => {
      const text = saved.get(key);
      return text === undefined ? undefined : JSON.parse(text);
    },
    save: (key, checkpoint) => {
      saved.set(key, JSON.stringify(checkpoint));
    },
    delete: (key) => {
      saved.delete(key);
    },
    get size() {
      return saved.size;
    },
  };
}

export interface FileStoreOptions {
  /**
   * Signs each checkpoint (HMAC-SHA-256) and refuses one whose signature is missing or does
   * not match: for a directory that others can write. At least 16 bytes; 32 random bytes is
   * right. With it, `load` and `save` return Promises, which `acheck()` awaits.
   */
  readonly secret?: CheckpointSecret | undefined;
}

/**
 * Keeps one JSON file per key in `directory`. A save is atomic — written to a temporary
 * file, flushed to disk, then renamed over the old one — so a crash leaves either the
 * previous checkpoint or the new one, never half of one.
 */
export function fileStore(directory: string, options: FileStoreOptions = {}): CheckpointStore {
  const { secret } = readShape(options, ['secret'], '`options`', 'fileStore');
  const root = resolve(directory);
  const fileOf = (key: string) => join(root, `${encodeURIComponent(key)}.json`);
  return signedStore(secret, 'fileStore', {
    locate: fileOf,
    load: (key) => {
      const file = fileOf(key);
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (error) {
        if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
        throw error;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new CheckpointError(key, file, `is corrupt: ${(error as Error).message}. Delete the file to start the run afresh.`);
      }
      if ((parsed as { format?: unknown } | null)?.format !== FORMAT) {
        throw new CheckpointError(key, file, `is not a Booth checkpoint. Delete or move the file to start the run afresh.`);
      }
      return parsed;
    },
    save: (key, checkpoint) => {
      mkdirSync(root, { recursive: true });
      const file = fileOf(key);
      const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`;
      const fd = openSync(temporary, 'w');
      try {
        writeSync(fd, JSON.stringify(checkpoint));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temporary, file);
      // The rename itself must survive a power cut: flush the directory entry too.
      const dir = openSync(root, 'r');
      try {
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
    },
    delete: (key) => {
      rmSync(fileOf(key), { force: true });
    },
  });
}
