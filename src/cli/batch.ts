import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { acheck } from '../acheck.js';
import type { AsyncCallFn } from '../options.js';

/**
 * `booth batch`: checks every question of a JSONL file, `concurrency` at a time, and
 * appends each result to the output as soon as it is known, so a killed run loses only
 * the checks in flight and a rerun skips the ids already written.
 */

export interface Question {
  readonly id: string | number;
  readonly prompt: string;
  readonly expected?: string;
}

export interface BatchSettings {
  readonly input: string;
  readonly output: string;
  readonly concurrency: number;
  readonly callFn: AsyncCallFn;
  readonly threshold: number;
  readonly maxRetries: number;
  readonly timeoutMs?: number | undefined;
  readonly signal: AbortSignal;
  /** A line of the input that is not a question: reported, then skipped. */
  readonly warn: (message: string) => void;
  readonly progress: (event: { done: number; total: number; counts: Readonly<Record<string, number>> }) => void;
}

export interface BatchSummary {
  readonly total: number;
  readonly skipped: number;
  readonly checked: number;
  readonly stopped: boolean;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly byMethod: Readonly<Record<string, number>>;
  readonly meanAttempts: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

export async function runBatch(settings: BatchSettings): Promise<BatchSummary> {
  const questions = readQuestions(settings.input, settings.warn);
  const done = writtenIds(settings.output, settings.warn);
  const pending = questions.filter((q) => !done.has(String(q.id)));
  const byStatus: Record<string, number> = {};
  const byMethod: Record<string, number> = {};
  const latencies: number[] = [];
  let attempts = 0;
  let next = 0;
  settings.progress({ done: 0, total: pending.length, counts: byStatus });

  const worker = async () => {
    while (next < pending.length && !settings.signal.aborted) {
      const question = pending[next++] as Question;
      const started = performance.now();
      let result;
      try {
        result = await acheck(settings.callFn, question.prompt, {
          threshold: settings.threshold,
          maxRetries: settings.maxRetries,
          timeoutMs: settings.timeoutMs,
          signal: settings.signal,
        });
      } catch (error) {
        if (settings.signal.aborted) return;
        throw error;
      }
      const latencyMs = Math.round(performance.now() - started);
      // One write per line, so a kill never leaves half a result behind.
      appendFileSync(settings.output, `${JSON.stringify({ id: question.id, expected: question.expected, latencyMs, ...result.toJSON() })}\n`);
      latencies.push(latencyMs);
      attempts += result.nAttempts;
      byStatus[result.status] = (byStatus[result.status] ?? 0) + 1;
      sortByStatus(byStatus);
      byMethod[result.method] = (byMethod[result.method] ?? 0) + 1;
      settings.progress({ done: latencies.length, total: pending.length, counts: byStatus });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, settings.concurrency) }, worker));
  latencies.sort((a, b) => a - b);
  return {
    total: questions.length,
    skipped: questions.length - pending.length,
    checked: latencies.length,
    stopped: settings.signal.aborted,
    byStatus,
    byMethod,
    meanAttempts: latencies.length ? attempts / latencies.length : 0,
    p50Ms: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
  };
}

function readQuestions(file: string, warn: (message: string) => void): Question[] {
  const questions: Question[] = [];
  const seen = new Set<string>();
  readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .forEach((line, index) => {
      if (line.trim() === '') return;
      const where = `${file}:${index + 1}`;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return warn(`${where}: not JSON; skipped`);
      }
      const { id, prompt, expected } = (value ?? {}) as Record<string, unknown>;
      if ((typeof id !== 'string' && typeof id !== 'number') || typeof prompt !== 'string') {
        return warn(`${where}: needs a string or number "id" and a string "prompt"; skipped`);
      }
      if (expected !== undefined && typeof expected !== 'string') return warn(`${where}: "expected" must be a string; skipped`);
      if (seen.has(String(id))) return warn(`${where}: id ${JSON.stringify(id)} appears twice; skipped`);
      seen.add(String(id));
      questions.push(expected === undefined ? { id, prompt } : { id, prompt, expected });
    });
  return questions;
}

/** Ids already in the output. A line cut short by a kill is ignored, and the file is ended cleanly for new lines. */
function writtenIds(file: string, warn: (message: string) => void): Set<string> {
  const ids = new Set<string>();
  if (!existsSync(file)) return ids;
  const text = readFileSync(file, 'utf8');
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      ids.add(String((JSON.parse(line) as { id: unknown }).id));
    } catch {
      warn(`${file}:${index + 1}: an unfinished result line; its question is checked again`);
    }
  }
  if (text.length > 0 && !text.endsWith('\n')) appendFileSync(file, '\n');
  return ids;
}

const STATUS_ORDER = ['VERIFIED', 'REPAIRED', 'AMBIGUOUS', 'UNCERTAIN', 'BLOCKED'];

/** Keeps the counts in the order statuses are documented, whatever came first. */
function sortByStatus(counts: Record<string, number>): void {
  const entries = Object.entries(counts).sort(([a], [b]) => STATUS_ORDER.indexOf(a) - STATUS_ORDER.indexOf(b));
  for (const [status] of entries) delete counts[status];
  for (const [status, n] of entries) counts[status] = n;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}
