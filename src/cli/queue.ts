// Types only: BullMQ and ioredis are optional peers, imported at run time just for --queue and `worker`.
import type { DelayedError, Queue, WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { CommanderError, InvalidArgumentError } from 'commander';
import { encodeKey } from '../checkpoints.js';
import { isMissingPackage } from '../optional-peers.js';
import type { JsonValue } from '../json-objects.js';

/**
 * What `booth batch --queue` and `booth worker` share: the libraries, the run's keys in
 * Redis, and how a question travels as a job.
 *
 * A run named N keeps, besides BullMQ's own keys (`booth:queue:N:…`, one job per question):
 * - `booth:run:N:questions`, a hash of job id → the question's id and a digest of its prompt and
 *   expected answer: the run's questions, for `--collect` and to refuse a name used again for others;
 * - `booth:run:N:results`, a hash of job id → result line: written once per question, in the
 *   same transaction that deletes the question's checkpoint;
 * - `booth:run:N:finished`, a stream of job ids in the order their results were written,
 *   which the waiting batch reads from a cursor instead of scanning the results;
 * - `booth:run:N:settings`, the check flags the first worker was started with;
 * - `booth:run:N:checkpoint:<job id>`, each question's checkpoint while it is under way.
 */

/** What `--queue` and `booth worker` need besides Booth. */
export const QUEUE_PACKAGES = ['bullmq', 'ioredis'] as const;

export interface QueueLibraries {
  readonly Queue: typeof Queue;
  readonly Worker: typeof Worker;
  readonly DelayedError: typeof DelayedError;
  readonly WaitingError: typeof WaitingError;
  readonly Redis: typeof Redis;
}

/** BullMQ and ioredis, imported now; without them the flag is bad usage naming what installs them. */
export async function loadQueueLibraries(flag: string, usage: number): Promise<QueueLibraries> {
  try {
    const [bullmq, ioredis] = await Promise.all([import('bullmq'), import('ioredis')]);
    return { Queue: bullmq.Queue, Worker: bullmq.Worker, DelayedError: bullmq.DelayedError, WaitingError: bullmq.WaitingError, Redis: ioredis.Redis };
  } catch (error) {
    if (!QUEUE_PACKAGES.some((name) => isMissingPackage(error, name))) throw error;
    throw new CommanderError(usage, 'booth.queue', `error: ${flag} runs on BullMQ and ioredis, which are optional: npm i ${QUEUE_PACKAGES.join(' ')}`);
  }
}

/** `--queue`: where Redis is. */
export function redisUrl(value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    // Reported below, with the same message as a URL of another scheme.
  }
  if (url?.protocol !== 'redis:' && url?.protocol !== 'rediss:') {
    throw new InvalidArgumentError('expected a Redis URL such as redis://127.0.0.1:6379/0 (rediss:// for TLS).');
  }
  return value;
}

/** `--name`: letters, digits, `.`, `_` and `-`, since it becomes part of Redis keys and BullMQ refuses `:` in a queue's name. */
export function runName(value: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(value)) {
    throw new InvalidArgumentError('expected a name of letters, digits, ".", "_" and "-" (up to 100), such as run-1.');
  }
  return value;
}

/** The URL as messages show it: without its password. */
export function shownUrl(value: string): string {
  const url = new URL(value);
  if (url.password) url.password = '***';
  return url.href;
}

export const QUEUE_PREFIX = 'booth:queue';

export interface RunKeys {
  readonly questions: string;
  readonly results: string;
  readonly finished: string;
  readonly settings: string;
  /** Put before a job id to name its checkpoint. */
  readonly checkpoints: string;
}

export function runKeys(name: string): RunKeys {
  const run = `booth:run:${name}`;
  return { questions: `${run}:questions`, results: `${run}:results`, finished: `${run}:finished`, settings: `${run}:settings`, checkpoints: `${run}:checkpoint:` };
}

/** A question, as a job carries it. */
export interface QuestionJob {
  readonly id: string | number;
  readonly prompt: string;
  readonly expected?: JsonValue;
  /** Times the job was put off because the model answered 429 with Retry-After. */
  readonly delays?: number;
}

/**
 * The job that checks question `id`. Adding a job whose id exists is a no-op in BullMQ, so
 * enqueuing a question twice is harmless. BullMQ refuses ids that are whole numbers or hold
 * a `:`, which question ids may be: hence the `q-` and the percent-encoding. A JSON string
 * may hold a lone surrogate, which encodeURIComponent refuses: it becomes `%u` and its code,
 * which no other id encodes to (a `%` of the id is encoded as `%25`).
 */
export const jobIdOf = (id: string | number): string => `q-${encodeKey(String(id))}`;

/**
 * A connection that has answered, or an Error naming the URL and the fix. Once up it
 * reconnects for as long as it takes and its commands wait meanwhile (BullMQ needs
 * `maxRetriesPerRequest: null` for that); each loss and each return is said once.
 */
export async function connectRedis(libraries: QueueLibraries, url: string, warn: (message: string) => void): Promise<Redis> {
  const client = new libraries.Redis(url, { maxRetriesPerRequest: null });
  let lastError: Error | null = null;
  let up = false;
  let lost = false;
  client.on('error', (error: Error) => {
    lastError = error;
    if (up && !lost) {
      lost = true;
      warn(`lost the connection to Redis at ${shownUrl(url)} (${error.message}); reconnecting`);
    }
  });
  client.on('ready', () => {
    if (lost) warn(`reconnected to Redis at ${shownUrl(url)}`);
    lost = false;
  });
  let answered = false;
  try {
    answered = await Promise.race([client.ping().then(() => true), new Promise<false>((resolve) => setTimeout(resolve, CONNECT_TIMEOUT_MS, false).unref())]);
  } catch (error) {
    lastError = error as Error;
  }
  // A reply error before the first answer is Redis refusing the URL's password or database:
  // reconnecting does not cure it, and ioredis would retry the password for ever, or go on in
  // database 0 after a SELECT it refused.
  const refused = (lastError as Error | null)?.name === 'ReplyError';
  if (!answered || refused) {
    client.disconnect();
    const reason = (lastError as Error | null)?.message ?? `no answer in ${CONNECT_TIMEOUT_MS / 1000} s`;
    throw new Error(
      refused
        ? `Redis at ${shownUrl(url)} (--queue) refused it: ${reason}. Give --queue the right password and database.`
        : `cannot reach Redis at ${shownUrl(url)} (--queue): ${reason}. Start redis-server there, or give --queue the right address.`,
    );
  }
  up = true;
  return client;
}

const CONNECT_TIMEOUT_MS = 5_000;
