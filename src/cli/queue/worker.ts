import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { acheck } from '../../api/acheck.js';
import { retryAfterOf } from '../../decide/call-retries.js';
import type { CheckpointStore } from '../../stores/store.js';
import { untilNextMacrotask } from '../../util/macrotask.js';
import { quotedText } from '../../util/values.js';
import type { AsyncCallFn } from '../../decide/model-call.js';
import { redisStore } from '../../stores/redis-store.js';
import type { BatchCheckOptions } from '../batch/input.js';
import { resultRow } from '../batch/output.js';
import type { RunRecord } from '../batch/run-record.js';
import { bullmqTiming, isWrongType, type LockTiming, lockTiming, MAX_LOCK_MS, type QuestionJob, QUEUE_PREFIX, type QueueLibraries, runKeys, WORKER_ENTRY_STALE, workersKeyError } from './queue.js';

/**
 * `booth worker`: takes the jobs of one run from BullMQ and checks each question with
 * `acheck`, its checkpoint in Redis under the run and the job. A worker that dies leaves its
 * jobs locked until the lock lapses; BullMQ's stalled-job check then hands them to another
 * worker, which resumes each from its checkpoint: finished attempts are not called again.
 */

export interface WorkerSettings {
  readonly libraries: QueueLibraries;
  readonly client: Redis;
  readonly name: string;
  readonly concurrency: number;
  /** Jobs started per `durationMs` by all the run's workers together (BullMQ's limiter); null for no limit. */
  readonly rate: { readonly max: number; readonly durationMs: number } | null;
  /** How long a job stays with a worker that stopped renewing its lock (BullMQ's lockDuration); see lockTiming. */
  readonly lockMs: number;
  readonly callFn: AsyncCallFn;
  readonly check: BatchCheckOptions;
  /** What each of its lines records it was made with. */
  readonly run: RunRecord;
  /** What every worker of the run must share, by flag: the first worker's is kept in Redis. */
  readonly shared: Readonly<Record<string, JsonScalar>>;
  readonly warn: (message: string) => void;
}

type JsonScalar = string | number | boolean | null;

export interface RunningWorker {
  /**
   * Stops taking jobs. Without `now`, the jobs in flight are finished first; with it, they
   * are stopped where they are and go back to the queue, their checkpoints kept.
   */
  stop(now: boolean): Promise<void>;
  /** Settles once the worker has stopped. */
  readonly stopped: Promise<void>;
}

/**
 * A 429 with Retry-After puts off only its own job: the job goes back to BullMQ's delayed
 * set and frees its slot, rather than waiting in it. This many times per job, then the
 * 429 reaches the check as a failed call like any other, so a model that never recovers
 * cannot keep a question in the queue for ever.
 */
export const MAX_DELAYS = 10;

/** Why a worker leaves a job before its check ends: the reason the check is aborted with. */
type Leave =
  /** The worker is stopping now: the job goes back to the queue. */
  | { readonly kind: 'stop' }
  /** The model answered 429 with Retry-After: the job waits in the delayed set until then. */
  | { readonly kind: 'delay'; readonly until: number }
  /** The worker lost the job's lock (paused longer than --lock-ms): another worker has the job. */
  | { readonly kind: 'lost' };

class Leaving extends Error {
  constructor(readonly leave: Leave) {
    super(`left the job (${leave.kind})`);
  }
}

/** A refusal to join a run whose first worker was started with other check flags. */
export class RunSettingsError extends Error {
  override readonly name = 'RunSettingsError';
}

/**
 * Writes happen only while the writer holds the job's lock (BullMQ's `<job>:lock` key holds
 * its token): a worker paused past its lock — a long GC pause, a frozen VM — then finds its
 * job taken over, and must not overwrite the checkpoint or the result of the worker that has it.
 */
const SAVE_IF_LOCKED = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
return 1`;
/** The result, its place in the stream and the end of the checkpoint: all at once, or nothing. */
const FINISH_IF_LOCKED = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('XADD', KEYS[3], '*', 'job', ARGV[2])
redis.call('DEL', KEYS[4])
return 1`;

export async function startWorker(settings: WorkerSettings): Promise<RunningWorker> {
  const { libraries, client, name } = settings;
  const keys = runKeys(name);
  const timing = lockTiming(settings.lockMs);
  await joinRun(client, keys.settings, name, settings.shared);
  // Job id → the controller of its check, to leave it.
  const inFlight = new Map<string, AbortController>();

  const processJob = async (job: Job<QuestionJob>, token: string | undefined): Promise<void> => {
    const jobId = job.id as string;
    const question = job.data;
    const controller = new AbortController();
    inFlight.set(jobId, controller);
    const lockKey = `${QUEUE_PREFIX}:${name}:${jobId}:lock`;
    const leave = (why: Leave): never => {
      controller.abort(new Leaving(why));
      throw controller.signal.reason;
    };
    const started = performance.now();
    try {
      const checkpointKey = `${keys.checkpoints}${jobId}`;
      // What the job starts from, in one round trip: its result if it has one, its checkpoint, its lock.
      const [finished, savedText, holder] = ((await client.pipeline().hexists(keys.results, jobId).get(checkpointKey).get(lockKey).exec()) ?? []).map(
        ([error, value]) => {
          if (error) throw error;
          return value;
        },
      );
      // The lock was just read: the first call needs no second look.
      let lockChecked = holder === token;
      const holdsLock = async () => lockChecked || (await client.get(lockKey)) === token;
      // redisStore keeps the job's checkpoint, over a client that serves the checkpoint already
      // read and writes only while this worker holds the job's lock.
      const store = redisStore(
        {
          get: async () => savedText as string | null,
          // With its default expiry (a week), redisStore always saves with EX and the seconds.
          set: async (key: string, value: string, _ex?: 'EX', seconds?: number) => {
            if ((await client.eval(SAVE_IF_LOCKED, 2, lockKey, key, token ?? '', value, seconds ?? 0)) !== 1) leave({ kind: 'lost' });
          },
          del: async () => undefined,
        },
        { prefix: keys.checkpoints },
      );
      const checkpoint: CheckpointStore = {
        load: store.load,
        locate: store.locate,
        // A run that has ended is saved by FINISH_IF_LOCKED, with its result: one write instead of
        // two, and the same promise as every other attempt's, durable once written.
        save: (key, saved) => ((saved.snapshot as { status?: unknown }).status === 'done' ? undefined : store.save(key, saved)),
        // The worker deletes a checkpoint itself, with the result (FINISH_IF_LOCKED): deleted
        // earlier, a kill between the two would leave neither, and the question would start over.
        delete: () => undefined,
      };
      // Each model of the cascade alike.
      const guarded = (call: AsyncCallFn): AsyncCallFn => async (prompt, info) => {
        // A call costs money and may not be idempotent: none is made for a job this worker no longer has.
        if (!(await holdsLock())) leave({ kind: 'lost' });
        lockChecked = false;
        try {
          return await call(prompt, info);
        } catch (error) {
          const waitMs = retryAfterOf429(error);
          if (waitMs !== null && (question.delays ?? 0) < MAX_DELAYS) leave({ kind: 'delay', until: Date.now() + waitMs });
          throw error;
        }
      };
      const callFn = guarded(settings.callFn);
      const escalate = settings.check.escalate?.map((step) => ({ call: guarded(step.call), name: step.name }));
      // Written before a kill that came just before BullMQ heard the job was done: nothing to do again.
      if (finished === 1) return;
      const result = await acheck(callFn, question.prompt, {
        threshold: settings.check.threshold,
        maxRetries: settings.check.maxRetries,
        timeoutMs: settings.check.timeoutMs,
        callRetries: settings.check.callRetries,
        samples: settings.check.samples,
        confidenceFrom: settings.check.confidenceFrom,
        schema: settings.check.schema,
        system: settings.check.system,
        telemetry: settings.check.telemetry,
        modelName: settings.check.modelName,
        escalate,
        budget: settings.check.budget,
        checkpoint,
        key: jobId,
        signal: controller.signal,
      });
      // The prompts stay in Redis: the batch that collects the line decides whether to keep them.
      const row = resultRow(question, Math.round(performance.now() - started), result, true, settings.run);
      const keysOfFinish = [lockKey, keys.results, keys.finished, checkpointKey];
      // A line with samples carries every reply: 20 replies of 2 MB make 130 MB, seconds of
      // JSON.stringify in one stretch, during which no lock of this worker's could be renewed.
      const line = await jsonInSlices(row);
      if ((await client.eval(FINISH_IF_LOCKED, 4, ...keysOfFinish, token ?? '', jobId, line)) !== 1) leave({ kind: 'lost' });
    } catch (error) {
      const reason: unknown = controller.signal.reason;
      if (!controller.signal.aborted || !(reason instanceof Leaving)) throw error;
      switch (reason.leave.kind) {
        case 'stop':
          await job.moveToWait(token);
          throw new libraries.WaitingError();
        case 'delay':
          await job.updateData({ ...question, delays: (question.delays ?? 0) + 1 });
          await job.moveToDelayed(reason.leave.until, token);
          throw new libraries.DelayedError();
        case 'lost':
          settings.warn(`question ${JSON.stringify(question.id)}: this worker lost its lock on the job (paused longer than --lock-ms?) and left it to the worker that took it over`);
          throw error;
      }
    } finally {
      inFlight.delete(jobId);
    }
  };

  const worker = new libraries.Worker<QuestionJob, void>(name, processJob, {
    connection: client,
    prefix: QUEUE_PREFIX,
    concurrency: settings.concurrency,
    ...(settings.rate ? { limiter: { max: settings.rate.max, duration: settings.rate.durationMs } } : {}),
    ...bullmqTiming(timing),
    // BullMQ fails a job after one stall by default, taking it for the job that killed its worker.
    // Here a stall costs at most the call in flight, and one dead machine can stall a job once
    // per restart: a few are allowed before the job is given up.
    maxStalledCount: 5,
    // Started below, once the worker is in the run's hash: a failed write then leaves no job taken.
    autorun: false,
  });
  // The batch reads a lock's worker from its token, and this, to tell a lock that is renewed from one left to lapse.
  try {
    await sayRunning(client, keys.workers, worker.id, timing);
  } catch (error) {
    // Not yet running, the worker still holds connections that would keep the process alive after the error.
    await worker.close(true);
    throw isWrongType(error) ? workersKeyError(name, keys.workers) : error;
  }
  // Rewritten every lock, so that an entry no one rewrites is a dead worker's, which the next rewrite removes.
  let toldRewrite = false;
  const rewrite = setInterval(() => {
    sayRunning(client, keys.workers, worker.id, timing).catch((error: unknown) => {
      // Without Redis the client says so itself; a key overwritten since the start is said once: only the batch's note misses this worker.
      if (!isWrongType(error) || toldRewrite) return;
      toldRewrite = true;
      settings.warn(workersKeyError(name, keys.workers).message);
    });
  }, timing.lockMs);
  const stopped = new Promise<void>((resolve) =>
    worker.once('closed', () => {
      clearInterval(rewrite);
      resolve();
    }),
  );
  worker.on('failed', (job, error) => {
    if (job && !(error instanceof Leaving)) settings.warn(`question ${JSON.stringify(job.data.id)} failed: ${error.message}`);
  });
  // A check whose lock could not be renewed stops at once: its next call would be another worker's to make.
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const jobId of jobIds) inFlight.get(jobId)?.abort(new Leaving({ kind: 'lost' }));
  });
  // Connection errors are said once by the client, and a lost lock by the job; anything else here is BullMQ's own trouble.
  worker.on('error', (error) => {
    if (!/ECONNREFUSED|Connection is closed|ECONNRESET|Missing lock|Missing key/.test(error.message)) settings.warn(`worker: ${error.message}`);
  });
  // As BullMQ's autorun does: an error of its main loop is the worker's.
  worker.run().catch((error: unknown) => worker.emit('error', error as Error));
  await worker.waitUntilReady();
  return {
    stopped,
    stop: async (now) => {
      if (now) for (const controller of inFlight.values()) controller.abort(new Leaving({ kind: 'stop' }));
      // Not awaited: without Redis it would wait for ever. Sent before the QUIT that ends the worker,
      // it goes first; left behind, it names a worker whose locks are gone, misleading no one, until the
      // next worker's rewrite removes it. No rewrite is sent after it.
      clearInterval(rewrite);
      client.hdel(keys.workers, worker.id).catch(() => undefined);
      await worker.close();
    },
  };
}

/**
 * Writes the worker's entry in the run's hash, its LockTiming and `at` (now, by Redis's clock:
 * the workers' machines may disagree), and removes every entry not rewritten for
 * WORKER_ENTRY_STALE of its own locks, or that no worker wrote: SIGKILLed workers leave theirs
 * behind, and without this the hash of a long run would only grow. Pruned here rather than by
 * a TTL on the hash, which any live worker would keep renewing for the dead ones' entries too;
 * and by the workers rather than the batch, which need not be running. One script, so that the
 * entries read are the entries pruned. An entry of an older Booth's worker, without `at`, goes
 * too: the batch's note then misses that worker's held questions, which is all the entry is for.
 */
const SAY_RUNNING = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local entries = redis.call('HGETALL', KEYS[1])
for i = 1, #entries, 2 do
  local ok, entry = pcall(cjson.decode, entries[i + 1])
  local live = ok and type(entry) == 'table' and type(entry.at) == 'number' and type(entry.lockMs) == 'number'
    and entry.lockMs > 0 and entry.lockMs <= tonumber(ARGV[4]) and math.abs(now - entry.at) <= tonumber(ARGV[3]) * entry.lockMs
  if not live then redis.call('HDEL', KEYS[1], entries[i]) end
end
local timing = cjson.decode(ARGV[2])
timing.at = now
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(timing))
return 1`;

async function sayRunning(client: Redis, key: string, id: string, timing: LockTiming): Promise<void> {
  await client.eval(SAY_RUNNING, 1, key, id, JSON.stringify(timing), WORKER_ENTRY_STALE, MAX_LOCK_MS);
}

/**
 * `Buffer.from(JSON.stringify(value))`, the same bytes, made a piece at a time: it descends
 * into arrays and plain objects and hands every other value to `JSON.stringify` whole, and once
 * a stretch of work has lasted `sliceMs` it encodes what it wrote so far and waits for the
 * next macrotask, so that timers (BullMQ's lock renewal among them) run in between. Bytes, not
 * a string: joining a 130 MB string and encoding it for Redis would be two long stretches more.
 * For JSON data, as a result line is: a value with its own `toJSON` inside an array or plain
 * object is stringified whole, its `toJSON` given no key.
 */
export async function jsonInSlices(value: unknown, sliceMs = 10): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let parts: string[] = [];
  // The objects being written, outermost first: JSON.stringify refuses a cycle, and so does this.
  const open = new Set<object>();
  let since = performance.now();
  const write = async (item: unknown): Promise<void> => {
    if (performance.now() - since >= sliceMs) {
      // Well-formed JSON.stringify escapes lone surrogates, so each piece encodes as the whole would.
      chunks.push(Buffer.from(parts.join('')));
      parts = [];
      await untilNextMacrotask();
      since = performance.now();
    }
    const list = Array.isArray(item) && typeof (item as { toJSON?: unknown }).toJSON !== 'function';
    if (!list && !isPlainData(item)) {
      parts.push(JSON.stringify(item) ?? 'null');
      return;
    }
    if (open.has(item as object)) throw new TypeError('Converting circular structure to JSON');
    open.add(item as object);
    let first = true;
    parts.push(list ? '[' : '{');
    for (const [key, member] of list ? (item as unknown[]).entries() : Object.entries(item as object)) {
      const skipped = member === undefined || typeof member === 'function' || typeof member === 'symbol';
      // As JSON.stringify: an array writes null for what it cannot write, an object leaves the key out.
      if (skipped && !list) continue;
      if (!first) parts.push(',');
      first = false;
      if (!list) parts.push(`${JSON.stringify(key)}:`);
      if (skipped) parts.push('null');
      else await write(member);
    }
    parts.push(list ? ']' : '}');
    open.delete(item as object);
  };
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') throw new TypeError(`Expected a JSON value to write, got ${typeof value}.`);
  await write(value);
  chunks.push(Buffer.from(parts.join('')));
  // Not Buffer.concat: writing 130 MB of fresh memory at once costs a third of a second here,
  // page faults mostly; copied in slices, the pages are touched a slice at a time.
  const bytes = Buffer.allocUnsafe(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    if (performance.now() - since >= sliceMs) {
      await untilNextMacrotask();
      since = performance.now();
    }
    offset += chunk.copy(bytes, offset);
  }
  return bytes;
}

/** An object JSON.stringify writes key by key: a plain one, without a `toJSON` of its own. */
function isPlainData(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/** The wait a 429 asks for with Retry-After, read as call retries read it; null for any other error. */
function retryAfterOf429(error: unknown): number | null {
  return (error as { status?: unknown } | null)?.status === 429 ? retryAfterOf(error) : null;
}

/**
 * Keeps the first worker's check flags as the run's, and refuses a worker started with
 * others: its checkpoints would not resume theirs, and its results would not be the run's.
 */
async function joinRun(client: Redis, key: string, name: string, shared: Readonly<Record<string, JsonScalar>>): Promise<void> {
  const mine = JSON.stringify(shared);
  await client.set(key, mine, 'NX');
  const theirs = await client.get(key);
  if (theirs === null || theirs === mine) return;
  const run = readRunSettings(theirs, (problem) => {
    throw new RunSettingsError(
      `run ${name} has check flags in Redis that no worker wrote: ${key} ${problem}. If nothing else uses that key, stop the workers, delete it in Redis and start them again.`,
    );
  });
  // Only this worker's flags are named: a key of the run's it does not know came from a newer Booth, or from
  // whoever else writes to Redis, and is not printed, as a flag or otherwise.
  const differing = Object.keys(shared).filter((flag) => JSON.stringify(Object.hasOwn(run, flag) ? run[flag] : null) !== JSON.stringify(shared[flag]));
  // Unknown keys set to something other than "not given" mean checks this worker cannot make as the run's are made.
  const unknown = Object.keys(run).filter((flag) => !Object.hasOwn(shared, flag) && run[flag] !== null).length;
  // Written by a Booth that did not know some flags, the run's settings lack them: not given is what they were.
  if (differing.length === 0 && unknown === 0) return;
  // Values are Redis's: quoted, so no escape in them reaches the terminal.
  const valueText = (value: JsonScalar | undefined) => (value === undefined || value === null ? '(not given)' : typeof value === 'string' ? quotedText(value) : String(value));
  const show = (flags: Readonly<Record<string, JsonScalar>>) => differing.map((flag) => `${flag} ${valueText(Object.hasOwn(flags, flag) ? flags[flag] : undefined)}`).join(', ');
  const others = unknown === 0 ? '' : `${differing.length === 0 ? '' : ' and '}${unknown} setting${unknown === 1 ? '' : 's'} this Booth does not know (written by a newer Booth, or not by Booth)`;
  throw new RunSettingsError(
    `run ${name} is checked with ${show(run)}${others}, as its first worker was started; this worker has ${differing.length === 0 ? 'none of them' : show(shared)}. ` +
      `Start it with the same flags (and the same Booth), or give the batch another --name; if the first worker's were a mistake, stop the workers and delete ${key} in Redis.`,
  );
}

/**
 * The run's check flags as its first worker wrote them: a JSON object of scalars. Redis is
 * shared and its contents are not to be trusted: anything else fails with the field and the
 * kind of value found, never the value.
 */
function readRunSettings(text: string, fail: (problem: string) => never): Readonly<Record<string, JsonScalar>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail('is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return fail(`holds ${parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : `a ${typeof parsed}`}, not a JSON object of check flags such as {"--threshold":0.7}`);
  }
  for (const [flag, value] of Object.entries(parsed)) {
    if (value !== null && typeof value === 'object') return fail(`gives ${JSON.stringify(flag)} ${Array.isArray(value) ? 'an array' : 'an object'}, where a flag has a string, number, boolean or null`);
  }
  return parsed as Record<string, JsonScalar>;
}
