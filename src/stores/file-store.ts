import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { replaceFile } from './atomic-file.js';
import { type CheckpointSecret, signedStore } from './signed-store.js';
import { readShape } from '../options/read-options.js';
import { describeValue } from '../util/values.js';
import { type CheckpointStore, CheckpointError, corruptCheckpoint, FORMAT } from './store.js';

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
 *
 * A key is the file's name, percent-encoded (`a/b c` is `a%2Fb%20c.json`), so no key
 * leaves the directory. A key whose encoding is too long for a file name (over 250
 * characters) is kept under a SHA-256 of the key instead; the file holds the key, and a
 * file there holding another key is refused.
 */
export function fileStore(directory: string, options: FileStoreOptions = {}): CheckpointStore {
  const { secret } = readShape(options, ['secret'], '`options`', 'fileStore');
  const root = resolve(directory);
  const fileOf = (key: string) => join(root, fileNameOf(key));
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
        throw corruptCheckpoint(key, file, error, 'Delete the file to start the run afresh.');
      }
      if ((parsed as { format?: unknown } | null)?.format !== FORMAT) {
        throw new CheckpointError(key, file, `is not a Booth checkpoint. Delete or move the file to start the run afresh.`);
      }
      // A hashed name does not spell its key: only the key inside says whose run the file is.
      const saved = (parsed as { key?: unknown }).key;
      if (fileNameOf(key).startsWith(HASHED_PREFIX) && saved !== key) {
        throw new CheckpointError(key, file, `holds the checkpoint of another key (${describeValue(saved)}), which shares its file name. Delete or move the file to start the run afresh.`);
      }
      return parsed;
    },
    save: (key, checkpoint) => {
      const file = fileOf(key);
      mkdirSync(root, { recursive: true });
      replaceFile(file, JSON.stringify(checkpoint));
    },
    delete: (key) => {
      rmSync(fileOf(key), { force: true });
    },
  });
}

/**
 * The longest encoded key kept as its own file name: with `.json`, the 255 bytes most file
 * systems allow in a name. (The temporary file of a save has a short name of its own, so
 * it does not lower this bound.) Keys up to here keep the names they always had.
 */
const LONGEST_PLAIN_NAME = 250;

/**
 * Starts the name of a key kept under its hash. A key's encoding never holds `%s` (a `%`
 * of its own is `%25`), so no key's plain name can be a hashed one.
 */
const HASHED_PREFIX = '%sha256-';

/** The file name of `key` in a file store; a TypeError for a key no run can be named by. */
export function fileNameOf(key: string): string {
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(`Expected the checkpoint \`key\` to be a non-empty string naming the run, got ${describeValue(key)}.`);
  }
  const encoded = encodeKey(key);
  if (encoded.length <= LONGEST_PLAIN_NAME) return `${encoded}.json`;
  // The encoding, not the key: hashed as UTF-8, two keys differing only in a lone surrogate would both be U+FFFD.
  return `${HASHED_PREFIX}${createHash('sha256').update(encoded).digest('hex')}.json`;
}

/** A lone surrogate: a high one not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * `key` percent-encoded, as encodeURIComponent does, except that a lone surrogate (which a
 * JSON string or a JavaScript one may hold, and which encodeURIComponent refuses with a
 * URIError) becomes `%u` and its code in hex: no other key encodes to that, since a `%` of
 * the key is `%25`. Well-formed keys keep the encoding they always had.
 */
export function encodeKey(key: string): string {
  if (!LONE_SURROGATE.test(key)) return encodeURIComponent(key);
  return Array.from(key, (char) => (/^[\ud800-\udfff]$/.test(char) ? `%u${char.charCodeAt(0).toString(16)}` : encodeURIComponent(char))).join('');
}
