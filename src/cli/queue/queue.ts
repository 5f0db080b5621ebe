// Types only: BullMQ and ioredis are optional peers, imported at run time just for --queue and `worker`.
import type { DelayedError, Queue, WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { CommanderError, InvalidArgumentError } from 'commander';
import { encodeKey } from '../../stores/file-store.js';
import { isMissingPackage } from '../../util/optional-peers.js';
import { shownUrl } from '../../util/urls.js';
import type { JsonValue } from '../../reply/json-objects.js';

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
 * - `booth:run:N:workers`, a hash of BullMQ worker id → its LockTiming and when it last said it
 *   runs (`at`, Redis's clock): rewritten by each worker every lock, and an entry left unrefreshed
 *   (a worker SIGKILLed) is removed by the next worker's rewrite (see WORKER_ENTRY_STALE);
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

/** The URL as messages show it: the one redaction every URL Booth shows goes through. */
export { shownUrl };

/**
 * Where Redis is and how to log in, as `--queue` and `--queue-env` give it. A password from
 * the environment travels apart from the URL, as ioredis options: put into a URL it would
 * have to be percent-encoded (and ioredis decodes it, so a `%` of the password would be
 * misread), and a URL with a username but no password would override it with an empty one.
 */
export interface RedisTarget {
  /** What ioredis is given: with --queue-env alone, the variable's URL as it is. */
  readonly url: string;
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  /** The URL as messages show it: any password is `***`. */
  readonly shown: string;
}

/** Thrown for a `--queue-env` that cannot serve; the message never holds the variable's value. */
export class QueueEnvError extends Error {
  override readonly name = 'QueueEnvError';
}

/**
 * The Redis to use, from `--queue <url>` and `--queue-env <var>`. The variable holds the whole
 * URL when `--queue` is left out, or only the password, for a `--queue` URL without one: either
 * way the password stays out of the command line, which every local user can read (`ps`).
 * A variable that is unset or empty, or that does not hold what its use needs, is a
 * `QueueEnvError` naming the variable and never its value.
 */
export function redisTarget(queue: string | undefined, queueEnv: string | undefined, env: NodeJS.ProcessEnv = process.env): RedisTarget {
  if (queueEnv === undefined) {
    if (queue === undefined) throw new QueueEnvError("give --queue <url>, or --queue-env <var> naming an environment variable that holds the Redis URL");
    return { url: redisUrl(queue), shown: shownUrl(queue) };
  }
  const value = env[queueEnv];
  const holds = queue === undefined ? 'the Redis URL' : 'the Redis password';
  if (value === undefined) throw new QueueEnvError(`option '--queue-env ${queueEnv}': $${queueEnv} is not set; set it to ${holds}.`);
  if (value === '') throw new QueueEnvError(`option '--queue-env ${queueEnv}': $${queueEnv} is empty; set it to ${holds}.`);
  if (queue === undefined) {
    try {
      redisUrl(value);
    } catch (error) {
      // Not the value: a URL that fails to parse may still hold the password.
      throw new QueueEnvError(`option '--queue-env ${queueEnv}': $${queueEnv} is not a Redis URL: ${(error as Error).message} (Or give the URL without its password to --queue, and only the password in $${queueEnv}.)`);
    }
    return { url: value, shown: shownUrl(value) };
  }
  const url = new URL(redisUrl(queue));
  if (url.password !== '') {
    throw new QueueEnvError(`option '--queue-env ${queueEnv}' gives the password, but the --queue URL holds one too; leave it out of --queue, where every local user can read it (ps).`);
  }
  if (/^rediss?:\/\//i.test(value)) {
    throw new QueueEnvError(`option '--queue-env ${queueEnv}': with --queue, $${queueEnv} holds only the password, but it holds a Redis URL; leave --queue out to take the whole URL from $${queueEnv}.`);
  }
  let username: string | undefined;
  try {
    username = url.username === '' ? undefined : decodeURIComponent(url.username);
  } catch {
    throw new QueueEnvError(`the username of the --queue URL is not valid percent-encoding.`);
  }
  url.username = '';
  const bare = url.href;
  if (username !== undefined) url.username = encodeURIComponent(username);
  url.password = '***';
  return { url: bare, username, password: value, shown: url.href };
}

export const QUEUE_PREFIX = 'booth:queue';

export interface RunKeys {
  readonly questions: string;
  readonly results: string;
  readonly finished: string;
  readonly settings: string;
  readonly workers: string;
  /** Put before a job id to name its checkpoint. */
  readonly checkpoints: string;
}

export function runKeys(name: string): RunKeys {
  const run = `booth:run:${name}`;
  return { questions: `${run}:questions`, results: `${run}:results`, finished: `${run}:finished`, settings: `${run}:settings`, workers: `${run}:workers`, checkpoints: `${run}:checkpoint:` };
}

/**
 * `--lock-ms` by default. A job whose worker died waits for its lock to lapse, at most this
 * long after the kill, then for one stalled-job check (a fifth of it): 6 s at most, where
 * BullMQ's defaults (a 30 s lock, looked for every 30 s) took up to a minute.
 */
export const DEFAULT_LOCK_MS = 5_000;

/**
 * The longest `--lock-ms`, and so the longest time of a LockTiming: an hour. A question held
 * longer by a dead worker is no use to anyone, and a timing read from Redis beyond it (up to
 * Infinity, as JSON's 1e999 reads) was not written by a worker, and is passed over.
 */
export const MAX_LOCK_MS = 3_600_000;

/**
 * An entry of `booth:run:N:workers` is removed once it has gone this many of its worker's
 * locks without being rewritten. It is needed only to judge that worker's locks and to bound
 * the wait after they lapse: a dead worker's last rewrite came at most one lock before its
 * death, its locks lapse at most one lock after it, and one stalled-job check (a fifth) plus a
 * late timer (a second, as the batch allows) follows: four locks cover that, a lock being a second
 * at least, and leave room for a rewrite that a loaded machine runs late.
 */
export const WORKER_ENTRY_STALE = 4;

/**
 * `booth:run:N:workers` holding something other than a hash (WRONGTYPE): written by something
 * other than Booth, as a foreign run settings key is, and refused the same way, naming the key
 * and the fix. Not passed over: no worker can write its entry there, so the run cannot go on.
 */
export function workersKeyError(name: string, key: string): Error {
  return new Error(
    `run ${name}: ${key} in Redis is not a hash of the run's workers, so no worker can say it runs there: something other than Booth wrote it. If nothing else uses that key, delete it in Redis and start the workers again; or give the batch another --name.`,
  );
}

/** Whether a Redis error is WRONGTYPE: a key holding another kind of value than the command's. */
export const isWrongType = (error: unknown): boolean => error instanceof Error && /\bWRONGTYPE\b/.test(error.message);

/**
 * How a worker holds its jobs, all from `--lock-ms`: BullMQ's lock lasts `lockMs` and is renewed
 * every `renewMs`, by a timer that runs while the check does, however long it takes; so only a
 * worker whose event loop stood still for `lockMs - renewMs` (4 s by default: a frozen VM, a
 * long GC pause) loses a job, and that worker then stops the check before its next call or
 * write. Every `stalledMs` some worker of the run moves the jobs whose locks lapsed back to
 * the queue: a dead worker's jobs come back within `lockMs + stalledMs` of its last renewal.
 */
export interface LockTiming {
  readonly lockMs: number;
  readonly renewMs: number;
  readonly stalledMs: number;
}

/**
 * A fifth of the lock for both: renewing that often keeps four fifths of the lock as the margin
 * for a stalled event loop, where BullMQ's default (half) keeps half; and looking for lapsed
 * locks that often keeps the wait after a lapse short. Each is one small script a second.
 */
export function lockTiming(lockMs: number): LockTiming {
  const step = Math.max(1, Math.round(lockMs / 5));
  return { lockMs, renewMs: step, stalledMs: step };
}

/** The options of a BullMQ Worker that hold jobs as `timing` says. */
export const bullmqTiming = (timing: LockTiming) => ({ lockDuration: timing.lockMs, lockRenewTime: timing.renewMs, stalledInterval: timing.stalledMs });

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
 *
 * Before that first answer, an error ends the wait at once: a refused connection or an
 * unknown host is not cured by waiting, and a reply error is Redis refusing the URL's
 * password or database (ioredis would retry the password for ever, or go on in database 0
 * after a SELECT it refused). A host that does not answer at all is waited for until
 * CONNECT_TIMEOUT_MS after the command started, so that it too is reported within that time.
 */
export async function connectRedis(libraries: QueueLibraries, target: RedisTarget, warn: (message: string) => void): Promise<Redis> {
  const credentials = target.password === undefined ? {} : { password: target.password, ...(target.username === undefined ? {} : { username: target.username }) };
  // disconnectTimeout: after a failed first connection ioredis waits this long for a socket that has already closed before it lets the process end.
  const client = new libraries.Redis(target.url, { maxRetriesPerRequest: null, disconnectTimeout: 100, ...credentials });
  const shown = target.shown;
  let up = false;
  let lost = false;
  let failed: (error: Error) => void = () => undefined;
  const failure = new Promise<Error>((resolve) => (failed = resolve));
  client.on('error', (error: Error) => {
    if (!up) return failed(error);
    if (!lost) {
      lost = true;
      warn(`lost the connection to Redis at ${shown} (${error.message}); reconnecting`);
    }
  });
  client.on('ready', () => {
    if (lost) warn(`reconnected to Redis at ${shown}`);
    lost = false;
  });
  const waitMs = Math.max(MIN_CONNECT_WAIT_MS, CONNECT_TIMEOUT_MS - performance.now());
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    client.ping().then(() => null, (error: Error) => error),
    failure,
    new Promise<Error>((resolve) => (timer = setTimeout(() => resolve(new Error(`no answer in ${(waitMs / 1000).toFixed(1)} s`)), waitMs))),
  ]);
  clearTimeout(timer);
  if (outcome !== null) {
    client.disconnect();
    throw new Error(
      outcome.name === 'ReplyError'
        ? `Redis at ${shown} (--queue) refused it: ${outcome.message}. Give --queue (or --queue-env) the right password and database.`
        : `cannot reach Redis at ${shown} (--queue): ${outcome.message}. Start redis-server there, or give --queue the right address.`,
    );
  }
  up = true;
  return client;
}

/** Redis is reported unreachable within this long of the command's start (docs/cli.md says so). */
const CONNECT_TIMEOUT_MS = 5_000;
/** However long the command took to start, a silent Redis is given this long to answer. */
const MIN_CONNECT_WAIT_MS = 1_000;
