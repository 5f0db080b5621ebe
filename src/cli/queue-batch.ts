import { closeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  type BatchSummary,
  openOutput,
  type Question,
  readEarlierResults,
  readQuestions,
  sortByStatus,
  summarize,
  type Tally,
  tallyOf,
  writeLine,
} from './batch.js';
import { jobIdOf, QUEUE_PREFIX, type QueueLibraries, type QuestionJob, runKeys } from './queue.js';

/**
 * `booth batch --queue`: puts one BullMQ job per question in Redis, then waits while the
 * workers check them, writing each result line to the output as it is finished. The output
 * is the record of what is written, as for a local batch: a rerun, or `--collect` from any
 * machine, writes only the lines it lacks, so every question gets exactly one.
 */

export interface QueueBatchSettings {
  readonly libraries: QueueLibraries;
  readonly client: Redis;
  readonly name: string;
  /** The questions file; null with `--collect` alone, which takes the run's questions from Redis. */
  readonly input: string | null;
  readonly output: string;
  /** Only collect: put no job in the queue. */
  readonly collect: boolean;
  readonly retryFailed: boolean;
  readonly withPrompts: boolean;
  readonly signal: AbortSignal;
  readonly warn: (message: string) => void;
  readonly progress: (event: { done: number; total: number; counts: Readonly<Record<string, number>> }) => void;
}

/** How often the batch looks for new results when there were none. */
const POLL_MS = 200;
/** How often, while no result comes, it looks for questions the workers gave up on or Redis lost. */
const LOOK_MS = 2_000;
const CHUNK = 1_000;

export async function runQueueBatch(settings: QueueBatchSettings): Promise<BatchSummary> {
  const { client, name, warn } = settings;
  const keys = runKeys(name);
  const questions = settings.input === null ? await questionsOfRun(client, keys.questions, name) : readQuestions(settings.input, warn);
  const wanted = new Set(questions.map((q) => String(q.id)));
  const earlier = readEarlierResults(settings.output, settings.retryFailed, wanted, warn);
  const pending = questions.filter((q) => !earlier.done.has(String(q.id)));
  const queue = new settings.libraries.Queue<QuestionJob>(name, { connection: client, prefix: QUEUE_PREFIX });
  const fd = openOutput(settings.output);
  const tallies: Tally[] = [...earlier.tallies];
  const counts: Record<string, number> = {};
  // Job id → question, for the questions still without a line.
  const waiting = new Map(pending.map((q) => [jobIdOf(q.id), q]));
  const toldFailed = new Set<string>();
  let checked = 0;
  try {
    if (!settings.collect) {
      await forget(queue, client, keys.results, [...earlier.redoneIds].map((id) => jobIdOf(id)));
      await enqueue(queue, client, keys.questions, questions, pending);
    }
    if (pending.length > 0) settings.progress({ done: 0, total: pending.length, counts });
    let cursor = '0';
    let lastLook = performance.now();
    while (waiting.size > 0 && !settings.signal.aborted) {
      const read = await client.xread('COUNT', CHUNK, 'STREAMS', keys.finished, cursor);
      const entries = read?.[0]?.[1] ?? [];
      const jobIds = [...new Set(entries.map(([, fields]) => fields[1] as string).filter((jobId) => waiting.has(jobId)))];
      if (entries.length > 0) cursor = (entries.at(-1) as [string, string[]])[0];
      const rows = jobIds.length > 0 ? await client.hmget(keys.results, ...jobIds) : [];
      jobIds.forEach((jobId, index) => {
        const text = rows[index];
        if (text === null || text === undefined) return;
        const row = JSON.parse(text) as Record<string, unknown>;
        if (!settings.withPrompts) delete row['prompts'];
        writeLine(fd, settings.output, `${JSON.stringify(row)}\n`);
        waiting.delete(jobId);
        const tally = tallyOf(row);
        if (tally) tallies.push(tally);
        checked += 1;
        counts[String(row['status'])] = (counts[String(row['status'])] ?? 0) + 1;
      });
      if (jobIds.length > 0) {
        sortByStatus(counts);
        settings.progress({ done: checked, total: pending.length, counts });
      }
      if (entries.length > 0) continue;
      if (performance.now() - lastLook >= LOOK_MS) {
        lastLook = performance.now();
        const lost = await lookForTrouble(queue, waiting, toldFailed, warn);
        if (lost.length > 0 && !settings.collect) {
          await requeue(queue, lost);
          // Lost jobs mean Redis lost data: results written since may sit before the cursor.
          cursor = '0';
        }
      }
      await sleep(POLL_MS, undefined, { signal: settings.signal }).catch(() => undefined);
    }
  } finally {
    closeSync(fd);
    await queue.close();
  }
  return summarize(questions.length, questions.length - pending.length, earlier.redone, checked, settings.signal.aborted, tallies);
}

/**
 * Puts a job in the queue for each question without a line, recording the run's questions
 * for `--collect`; jobs that failed are tried again. Adding a job that exists changes
 * nothing, and a worker given a question whose result is already in Redis only confirms
 * it; so this is safe at any time, and after a Redis restart that lost data it puts back
 * exactly what was lost.
 */
async function enqueue(queue: Queue<QuestionJob>, client: Redis, questionsKey: string, all: readonly Question[], pending: readonly Question[]): Promise<void> {
  for (let start = 0; start < all.length; start += CHUNK) {
    const chunk = all.slice(start, start + CHUNK);
    await client.hset(questionsKey, Object.fromEntries(chunk.map((q) => [jobIdOf(q.id), JSON.stringify(q.id)])));
  }
  await queue.retryJobs({ state: 'failed' });
  await addJobs(queue, pending);
}

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
  return recorded.map((id) => ({ id: JSON.parse(id) as string | number, prompt: '' }));
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
