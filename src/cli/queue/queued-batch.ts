import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { type BatchOutput, ResultLines } from '../batch/output.js';
import { type BatchSummary, summarize } from '../batch/summary.js';
import { type Question, readEarlierResults, readQuestions } from '../batch/input.js';
import { DEFAULT_LOCK_MS, isWrongType, jobIdOf, type LockTiming, lockTiming, MAX_LOCK_MS, type QuestionJob, QUEUE_PREFIX, type QueueLibraries, runKeys, workersKeyError } from './queue.js';

/**
 * `booth batch --queue`: puts one BullMQ job per question in Redis, then waits while the
 * workers check them, writing each result line to the output as it is finished. The output
 * is the record of what is written, as for a local batch: a rerun, or `--collect` from any
 * machine, writes only the lines it lacks, so every question gets exactly one.
 */

export interface QueueBatchSettings extends BatchOutput {
  readonly libraries: QueueLibraries;
  readonly client: Redis;
  readonly name: string;
  /** The questions file; null with `--collect` alone, which takes the run's questions from Redis. */
  readonly input: string | null;
  /** Only collect: put no job in the queue. */
  readonly collect: boolean;
  readonly retryFailed: boolean;
  readonly withPrompts: boolean;
  /** Shows beside the progress bar what the counts cannot: the questions held by a worker that stopped answering ('' for none). */
  readonly note: (text: string) => void;
}

/** How often the batch looks for new results when there were none. */
const POLL_MS = 200;
/** How often, while no result comes, it looks for questions the workers gave up on or Redis lost. */
const LOOK_MS = 2_000;
/** How often it looks at the locks of the questions under way, results coming or not. */
const HELD_LOOK_MS = 1_000;
const CHUNK = 1_000;

export async function runQueueBatch(settings: QueueBatchSettings): Promise<BatchSummary> {
  const { client, name, warn } = settings;
  const keys = runKeys(name);
  const questions = settings.input === null ? await questionsOfRun(client, keys.questions, name) : readQuestions(settings.input, warn);
  const wanted = new Set(questions.map((q) => String(q.id)));
  // Collecting checks nothing, so there is nothing to check again: failed lines stay.
  const earlier = readEarlierResults(settings.output, settings.retryFailed && !settings.collect, wanted, warn);
  const pending = questions.filter((q) => !earlier.done.has(String(q.id)));
  const queue = new settings.libraries.Queue<QuestionJob>(name, { connection: client, prefix: QUEUE_PREFIX });
  const lines = new ResultLines(settings.output, earlier.tallies, pending.length, settings.progress);
  // Job id → question, for the questions still without a line.
  const waiting = new Map(pending.map((q) => [jobIdOf(q.id), q]));
  const toldFailed = new Set<string>();
  let toldLost = false;
  try {
    if (!settings.collect) {
      await recordQuestions(client, keys.questions, name, questions, earlier.redoneIds);
      await forget(queue, client, keys.results, [...earlier.redoneIds].map((id) => jobIdOf(id)));
      await queue.retryJobs({ state: 'failed' });
      await addJobs(queue, pending);
    }
    lines.showProgress();
    let cursor = '0';
    let lastLook = performance.now();
    let lastHeldLook = performance.now();
    const held = new HeldJobs(client, name);
    while (waiting.size > 0 && !settings.signal.aborted) {
      const read = await client.xread('COUNT', CHUNK, 'STREAMS', keys.finished, cursor);
      const entries = read?.[0]?.[1] ?? [];
      const jobIds = [...new Set(entries.map(([, fields]) => fields[1] as string).filter((jobId) => waiting.has(jobId)))];
      if (entries.length > 0) cursor = (entries.at(-1) as [string, string[]])[0];
      // Results may keep coming from the other workers while a dead one's questions wait: looked at either way.
      if (performance.now() - lastHeldLook >= HELD_LOOK_MS) {
        lastHeldLook = performance.now();
        settings.note(await held.look(waiting));
      }
      const rows = jobIds.length > 0 ? await client.hmget(keys.results, ...jobIds) : [];
      jobIds.forEach((jobId, index) => {
        const text = rows[index];
        if (text === null || text === undefined) return;
        const row = resultOf(text, jobId, keys.results);
        // As the file writes it: "1" and 1 are one question (one job), but the line keeps the file's.
        row['id'] = (waiting.get(jobId) as Question).id;
        if (!settings.withPrompts) delete row['prompts'];
        lines.write(row);
        waiting.delete(jobId);
      });
      if (entries.length > 0) continue;
      if (performance.now() - lastLook >= LOOK_MS) {
        lastLook = performance.now();
        const lost = await lookForTrouble(queue, waiting, toldFailed, warn);
        if (lost.length > 0 && settings.collect && !toldLost) {
          toldLost = true;
          warn(`${lost.length} of the run's questions have no result and no job in Redis (did it lose its data?); run the batch with its questions file to queue them again`);
        }
        if (lost.length > 0 && !settings.collect) {
          await recordQuestions(client, keys.questions, name, lost, new Set());
          await requeue(queue, lost);
          // Lost jobs mean Redis lost data: results written since may sit before the cursor.
          cursor = '0';
        }
      }
      await sleep(POLL_MS, undefined, { signal: settings.signal }).catch(() => undefined);
    }
  } finally {
    lines.close();
    await queue.close();
  }
  return summarize(questions.length, questions.length - pending.length, earlier.redone, lines.written, settings.signal.aborted, lines.tallies, lines.unheard);
}

/**
 * Records the run's questions in Redis, for `--collect` and to see a run name used again for
 * other questions: a result already in Redis stands for its question's id, so an id whose
 * prompt or expected answer changed would be given the old question's result. That is
 * refused, before anything is queued — except for the questions to be checked again anyway.
 */
async function recordQuestions(client: Redis, questionsKey: string, name: string, questions: readonly Question[], redone: ReadonlySet<string>): Promise<void> {
  const changed: Array<string | number> = [];
  const records: Array<[string, string]> = [];
  for (let start = 0; start < questions.length; start += CHUNK) {
    const chunk = questions.slice(start, start + CHUNK);
    const known = await client.hmget(questionsKey, ...chunk.map((q) => jobIdOf(q.id)));
    chunk.forEach((q, index) => {
      const record = JSON.stringify({ id: q.id, digest: digestOf(q) });
      const before = known[index];
      if (before && JSON.parse(before).digest !== digestOf(q) && !redone.has(String(q.id))) changed.push(q.id);
      records.push([jobIdOf(q.id), record]);
    });
  }
  if (changed.length > 0) {
    const shown = changed.slice(0, 3).map((id) => JSON.stringify(id)).join(', ') + (changed.length > 3 ? ` and ${changed.length - 3} more` : '');
    throw new Error(
      `run ${name} already has question${changed.length === 1 ? '' : 's'} ${shown} with another prompt or expected answer, whose results would be the old questions'. Give the batch another --name, or forget the run first: delete booth:run:${name}:* and booth:queue:${name}:* in Redis.`,
    );
  }
  for (let start = 0; start < records.length; start += CHUNK) await client.hset(questionsKey, Object.fromEntries(records.slice(start, start + CHUNK)));
}

/** What makes a question the same question: its prompt and its expected answer. */
const digestOf = (q: Question): string => createHash('sha256').update(JSON.stringify([q.prompt, q.expected ?? null])).digest('base64url');

async function addJobs(queue: Queue<QuestionJob>, questions: readonly Question[]): Promise<void> {
  for (let start = 0; start < questions.length; start += CHUNK) {
    const chunk = questions.slice(start, start + CHUNK);
    await queue.addBulk(
      chunk.map((q) => ({
        name: 'check',
        data: q.expected === undefined ? { id: q.id, prompt: q.prompt } : { id: q.id, prompt: q.prompt, expected: q.expected },
        // Completed jobs need not stay: the result hash is what makes a question done.
        opts: { jobId: jobIdOf(q.id), removeOnComplete: true, removeOnFail: false },
      })),
    );
  }
}

/**
 * Puts back the jobs of questions that have no line, no job under way and no failed job:
 * Redis lost them (a restart without persistence), or a finished job without a result
 * blocks its id. A job that finished meanwhile is only confirmed by its worker.
 */
async function requeue(queue: Queue<QuestionJob>, lost: readonly Question[]): Promise<void> {
  for (const question of lost) await queue.remove(jobIdOf(question.id));
  await addJobs(queue, lost);
}

/** Drops the results (and any leftover job) of questions to be checked again: every call failed last time. */
async function forget(queue: Queue<QuestionJob>, client: Redis, resultsKey: string, jobIds: readonly string[]): Promise<void> {
  for (const jobId of jobIds) {
    await queue.remove(jobId);
    await client.hdel(resultsKey, jobId);
  }
}

/** The run's questions as `--collect` knows them: their ids, without prompts. */
async function questionsOfRun(client: Redis, questionsKey: string, name: string): Promise<Question[]> {
  const recorded = await client.hvals(questionsKey);
  if (recorded.length === 0) {
    throw new Error(`run ${name} has no questions in Redis: put them there with booth batch <questions.jsonl> --queue … --name ${name} -o …`);
  }
  return recorded.map((record) => ({ id: (JSON.parse(record) as { id: string | number }).id, prompt: '' }));
}

/**
 * Says once per question that its job failed (a checkpoint that cannot be read, an internal
 * error). When no job is under way, returns the questions still waiting that have no failed
 * job — lost — or ends the wait with an error when every question left has failed.
 */
async function lookForTrouble(queue: Queue<QuestionJob>, waiting: ReadonlyMap<string, Question>, told: Set<string>, warn: (message: string) => void): Promise<Question[]> {
  const counts = await queue.getJobCounts('failed', 'waiting', 'active', 'delayed', 'prioritized');
  const failed = new Set<string>();
  if ((counts['failed'] ?? 0) > 0) {
    for (const job of await queue.getFailed()) {
      if (job.id === undefined || !waiting.has(job.id)) continue;
      failed.add(job.id);
      if (told.has(job.id)) continue;
      told.add(job.id);
      warn(`question ${JSON.stringify(job.data.id)} failed in a worker: ${job.failedReason}`);
    }
  }
  const coming = (counts['waiting'] ?? 0) + (counts['active'] ?? 0) + (counts['delayed'] ?? 0) + (counts['prioritized'] ?? 0);
  if (coming > 0) return [];
  if (failed.size > 0 && failed.size >= waiting.size) {
    throw new Error(
      `${failed.size} question${failed.size === 1 ? '' : 's'} failed in the workers and no other is left to check; fix the cause and run the batch with its questions file again: it tries them again.`,
    );
  }
  return [...waiting].filter(([jobId]) => !failed.has(jobId)).map(([, question]) => question);
}

/** A result line as a worker stored it; a value that is not one is an error naming the key, the field and the fix. */
function resultOf(text: string, jobId: string, resultsKey: string): Record<string, unknown> {
  let row: unknown;
  try {
    row = JSON.parse(text);
  } catch {
    row = null;
  }
  if (typeof row !== 'object' || row === null || Array.isArray(row)) {
    throw new Error(`the result of job ${jobId} in Redis (field ${jobId} of ${resultsKey}) is not a result line: delete that field, and the batch with its questions file checks the question again.`);
  }
  return row as Record<string, unknown>;
}

/** How much later than its worker's renewal a lock may be before the worker counts as stopped: a loaded machine's timers run late. */
const LATE_RENEWAL_MS = 1_000;

/**
 * The questions under way whose worker stopped answering, found from BullMQ's state in Redis:
 * an active job whose lock has gone unrenewed past its worker's renewal time (the lock's token
 * names the worker, and `booth:run:N:workers` its LockTiming), or whose lock has lapsed
 * while the job is still active. Such a job comes back to the queue at the next stalled-job
 * check after its lock lapses; the note says how long that takes at most, by the lock's
 * remaining time. A lock lapsed for longer than any worker's check interval has no running
 * worker to re-queue it, and the note says that instead.
 */
class HeldJobs {
  readonly #client: Redis;
  readonly #name: string;
  readonly #workers: string;
  /** Job id → when its lock was first seen lapsed, the job still active. */
  readonly #lapsed = new Map<string, number>();

  constructor(client: Redis, name: string) {
    this.#client = client;
    this.#name = name;
    this.#workers = runKeys(name).workers;
  }

  async look(waiting: ReadonlyMap<string, Question>): Promise<string> {
    const base = `${QUEUE_PREFIX}:${this.#name}:`;
    const active = (await this.#client.lrange(`${base}active`, 0, -1)).filter((jobId) => waiting.has(jobId));
    const pipeline = this.#client.pipeline().hgetall(this.#workers);
    for (const jobId of active) pipeline.get(`${base}${jobId}:lock`).pttl(`${base}${jobId}:lock`);
    const replies = ((await pipeline.exec()) ?? []).map(([error, value], index) => {
      // As for a foreign run settings key (booth worker): the key and the fix, not Redis's bare error.
      if (error && index === 0 && isWrongType(error)) throw workersKeyError(this.#name, this.#workers);
      if (error) throw error;
      return value;
    });
    const timings = new Map<string, LockTiming>();
    // A lapsed lock names no worker: the longest check interval of the run's workers bounds the wait.
    let stalledMs = lockTiming(DEFAULT_LOCK_MS).stalledMs;
    // A loop, not Math.max(...spread): the hash's size is Redis's, and a spread of some 100 000 overflows the stack.
    for (const [id, text] of Object.entries(replies[0] as Record<string, string>)) {
      const timing = lockTimingOf(text);
      if (timing === null) continue;
      timings.set(id, timing);
      stalledMs = Math.max(stalledMs, timing.stalledMs);
    }
    const now = performance.now();
    let held = 0;
    let orphaned = 0;
    let withinMs = 0;
    const lapsed = new Set<string>();
    active.forEach((jobId, index) => {
      const token = replies[1 + 2 * index] as string | null;
      const leftMs = replies[2 + 2 * index] as number;
      if (token === null || leftMs === -2) {
        lapsed.add(jobId);
        const since = this.#lapsed.get(jobId) ?? now;
        this.#lapsed.set(jobId, since);
        if (now - since > stalledMs + LATE_RENEWAL_MS) orphaned += 1;
        else {
          held += 1;
          withinMs = Math.max(withinMs, stalledMs - (now - since));
        }
        return;
      }
      // BullMQ's lock token is `<worker id>:<n>`; a worker not (yet) in the run's hash is not judged.
      const timing = timings.get(token.split(':')[0] ?? '');
      if (timing === undefined || leftMs < 0 || leftMs >= timing.lockMs - timing.renewMs - LATE_RENEWAL_MS) return;
      held += 1;
      withinMs = Math.max(withinMs, leftMs + stalledMs);
    });
    for (const jobId of this.#lapsed.keys()) if (!lapsed.has(jobId)) this.#lapsed.delete(jobId);
    const notes: string[] = [];
    if (held > 0) notes.push(`${held} held by a worker that stopped answering; re-queued in ≤ ${Math.max(1, Math.ceil(withinMs / 1000))} s`);
    if (orphaned > 0) notes.push(`${orphaned} held by a worker that stopped answering, and no running worker re-queues ${orphaned === 1 ? 'it' : 'them'}: start a booth worker`);
    return notes.join('; ');
  }
}

/**
 * A LockTiming as a worker wrote it; Redis is shared, so anything else is none: times a worker
 * cannot have (more than MAX_LOCK_MS, up to the Infinity that `1e999` reads as) would put a
 * wait of that long on the progress line.
 */
function lockTimingOf(text: string): LockTiming | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const timing = value as Partial<Record<keyof LockTiming, unknown>> | null;
  if (typeof timing !== 'object' || timing === null) return null;
  const { lockMs, renewMs, stalledMs } = timing;
  const valid = [lockMs, renewMs, stalledMs].every((ms) => typeof ms === 'number' && Number.isFinite(ms) && ms > 0 && ms <= MAX_LOCK_MS);
  return valid ? { lockMs: lockMs as number, renewMs: renewMs as number, stalledMs: stalledMs as number } : null;
}
