import { type CheckpointSecret, signedStore } from './signed-store.js';
import { CheckpointError, type CheckpointStore, corruptCheckpoint, FORMAT } from './store.js';
import { readShape } from '../options/read-options.js';
import { describeValue } from '../util/values.js';

/**
 * `boothjs/redis`: checkpoints in Redis, so a run stopped on one machine resumes on another.
 * Its own entry point, and typed structurally rather than against ioredis, so that neither
 * `boothjs` nor its declaration files need a Redis client unless this module is used.
 */

/**
 * The three commands the store sends, with ioredis's signatures: an ioredis `Redis` or
 * `Cluster` instance fits, and so does any client that answers them the same way.
 */
export interface RedisClientLike {
  get(key: string): PromiseLike<string | null>;
  set(key: string, value: string): PromiseLike<unknown>;
  set(key: string, value: string, secondsToken: 'EX', seconds: number): PromiseLike<unknown>;
  del(key: string): PromiseLike<unknown>;
}

export interface RedisStoreOptions {
  /** Put before every run's key; two stores with different prefixes never see each other's runs. Default `"booth:checkpoint:"`. */
  readonly prefix?: string;
  /**
   * Seconds a checkpoint outlives its last save; `null` keeps it until the run completes.
   * Default 604 800 (7 days).
   */
  readonly ttlSeconds?: number | null;
  /**
   * Signs each checkpoint (HMAC-SHA-256, with Web Crypto) and refuses one whose signature is
   * missing or does not match, before any call: anyone who can write the server could
   * otherwise hand a run any snapshot. At least 16 bytes; 32 random bytes is right.
   */
  readonly secret?: CheckpointSecret | undefined;
}

const DEFAULT_PREFIX = 'booth:checkpoint:';
/**
 * Every save restarts the expiry, so this is how long a run may sit untouched, not how long
 * it may take: a week outlasts a weekend or a holiday with the workers down, and still clears
 * a run nobody will resume long before weeks of them crowd the server's memory.
 */
const DEFAULT_TTL_SECONDS = 7 * 24 * 60 * 60;
const OPTION_KEYS = ['prefix', 'ttlSeconds', 'secret'] as const;

/**
 * Keeps one Redis string per run, at `prefix + key`, holding the checkpoint's JSON. A save
 * is a single SET (with EX when there is an expiry), which Redis applies whole: a reader
 * sees the previous checkpoint or the new one, never half of one, and the expiry never lags
 * behind the value it belongs to.
 */
export function redisStore(client: RedisClientLike, options: RedisStoreOptions = {}): CheckpointStore {
  const methods = ['get', 'set', 'del'] as const;
  if (
    (typeof client !== 'object' && typeof client !== 'function') ||
    client === null ||
    methods.some((m) => typeof (client as unknown as Record<string, unknown>)[m] !== 'function')
  ) {
    throw new TypeError(
      `Expected \`client\` to be a Redis client with get, set and del, such as \`new Redis(url)\` from ioredis, got ${describeValue(client)}.`,
    );
  }
  const given = readShape(options, OPTION_KEYS, '`options`', 'redisStore');
  const prefix = given['prefix'] === undefined ? DEFAULT_PREFIX : given['prefix'];
  if (typeof prefix !== 'string') {
    throw new TypeError(`Expected \`prefix\` to be a string put before every key, such as "myapp:booth:", got ${describeValue(prefix)}.`);
  }
  const ttlSeconds = readTtl(given);

  const nameOf = (key: string) => `${prefix}${key}`;
  const locate = (key: string) => `redis key ${nameOf(key)}`;
  return signedStore(given['secret'], 'redisStore', {
    locate,
    load: async (key) => {
      const text = await client.get(nameOf(key));
      if (text === null) return undefined;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw corruptCheckpoint(key, locate(key), error, 'Delete the key to start the run afresh.');
      }
      if ((parsed as { format?: unknown } | null)?.format !== FORMAT) {
        throw new CheckpointError(key, locate(key), 'is not a Booth checkpoint. Delete the key or change the prefix to start the run afresh.');
      }
      return parsed;
    },
    save: async (key, checkpoint) => {
      const text = JSON.stringify(checkpoint);
      await (ttlSeconds === null ? client.set(nameOf(key), text) : client.set(nameOf(key), text, 'EX', ttlSeconds));
    },
    delete: async (key) => {
      await client.del(nameOf(key));
    },
  });
}

function readTtl(given: Record<string, unknown>): number | null {
  const value = given['ttlSeconds'];
  if (value === undefined) return DEFAULT_TTL_SECONDS;
  if (value === null) return null;
  // Redis refuses an expiry it cannot hold in milliseconds; a safe integer never overflows it.
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new TypeError(
      `Expected \`ttlSeconds\` to be a whole number of seconds, such as 86400 for a day, or null for no expiry, got ${describeValue(value)}.`,
    );
  }
  if (value < 1) {
    throw new RangeError(
      `Expected \`ttlSeconds\` to be 1 or more, got ${describeValue(value)}; Redis refuses an expiry that is not in the future. Pass null to keep checkpoints until their run completes.`,
    );
  }
  return value;
}
