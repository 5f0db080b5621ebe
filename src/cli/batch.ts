import { closeSync, constants, fstatSync, openSync, readFileSync, readSync, rmSync, type Stats, statSync, writeFileSync, writeSync } from 'node:fs';
import { acheck } from '../acheck.js';
import { replaceFile } from '../atomic-file.js';
import type { ConfidenceSource } from '../agreement.js';
import type { CallRetryPolicy } from '../call-retries.js';
import { REPAIRED, VERIFIED } from '../constants.js';
import type { AsyncCallFn } from '../options.js';
import type { AnswerSchema } from '../schema.js';
import type { TelemetryOptions } from '../telemetry.js';
import type { JsonValue } from '../json-objects.js';
import type { CheckResult } from '../result.js';
import { totalUsage, type Usage, usageFromReport } from '../usage.js';

/**
 * `booth batch`: checks every question of a JSONL file, `concurrency` at a time, and
 * appends each result to the output as soon as it is known, so a killed run loses only
 * the checks in flight and a rerun skips the ids already written — except the questions
 * whose every call failed, which a rerun checks again unless `retryFailed` is false.
 */

export interface Question {
  readonly id: string | number;
  readonly prompt: string;
  /** The right answer: a string, or with `--schema` any JSON value. */
  readonly expected?: JsonValue;
}

/** The options of every check of a batch, from the endpoint flags: a local batch's, or a worker's. */
export interface BatchCheckOptions {
  readonly threshold: number;
  readonly maxRetries: number;
  readonly timeoutMs?: number | undefined;
  readonly callRetries?: CallRetryPolicy | undefined;
  /** Replies gathered per attempt; above 1 they vote, and each result line keeps them in its attempts. Default 1. */
  readonly samples?: number | undefined;
  /** What the threshold judges when sampling; acheck's default when undefined. */
  readonly confidenceFrom?: ConfidenceSource | undefined;
  /** Every answer must satisfy it; the result lines then hold the answers as JSON values. */
  readonly schema?: AnswerSchema | undefined;
  /** Spans for each check (`--otel`). */
  readonly telemetry?: TelemetryOptions | undefined;
}

/** Where a batch, local or queued, writes its result lines, and how it reports. */
export interface BatchOutput {
  readonly output: string;
  readonly signal: AbortSignal;
  /** A line of the input that is not a question, or a result line that will be redone: reported, then skipped. */
  readonly warn: (message: string) => void;
  readonly progress: (event: { done: number; total: number; counts: Readonly<Record<string, number>> }) => void;
}

export interface BatchSettings extends BatchCheckOptions, BatchOutput {
  readonly input: string;
  readonly concurrency: number;
  readonly callFn: AsyncCallFn;
  /** Check again the questions whose every call failed in an earlier run. Default true. */
  readonly retryFailed?: boolean | undefined;
  /** Keep the prompts sent in each result line. Default false: they repeat the question at length. */
  readonly withPrompts?: boolean | undefined;
}

/** What one result line counts for in the summary. */
export interface Tally {
  readonly status: string;
  readonly method: string;
  readonly attempts: number;
  readonly latencyMs: number | null;
  /** Calls that threw or timed out, retries of a failed call included. */
  readonly failedCalls: number;
  /** Replies that came back but held no usable JSON object; when sampling, each sample is a reply. */
  readonly unparseable: number;
  /** Every call of the check failed: the model was never heard. */
  readonly everyCallFailed: boolean;
  /** What its calls consumed; null when none reported usage. */
  readonly usage: Usage | null;
}

export interface BatchSummary {
  /** Questions in the input. */
  readonly total: number;
  /** Questions that already had a result before this run. */
  readonly skipped: number;
  /** Questions whose earlier result (every call failed) was dropped to be checked again. */
  readonly redone: number;
  /** Questions checked by this run. */
  readonly checked: number;
  readonly stopped: boolean;
  /** From here on, every result the output holds for the input's questions, earlier runs included. */
  readonly results: number;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly byMethod: Readonly<Record<string, number>>;
  readonly meanAttempts: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly failedCalls: number;
  readonly everyCallFailed: number;
  readonly unparseable: number;
  /** The usage of every result that reported some; null when none did: unknown, not zero. */
  readonly usage: Usage | null;
  /** Results whose calls reported usage: fewer than `results` when some reported none, e.g. lines of a run before usage was counted. */
  readonly resultsWithUsage: number;
  /** Of those, the VERIFIED and REPAIRED: what `usage` bought. */
  readonly acceptedWithUsage: number;
}

/**
 * A file named on the command line could not be read or written: the message names it by
 * its role and says what to do. `booth batch` stops at once on one, with exit code 1.
 */
export class CliFileError extends Error {
  override readonly name = 'CliFileError';
  /** The file, as given on the command line. */
  readonly path: string;
  /** The system's error code, e.g. `ENOENT`, `ENOSPC`. */
  readonly code: string | undefined;

  constructor(role: FileRole, path: string, verb: 'read' | 'write', cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | null)?.code;
    // Node's message ends with the system call (", open '<path>'"): the path is named once, up front.
    const reason = String((cause as Error | null)?.message ?? cause).replace(/, \w+( '.*')?$/s, '');
    const file = role === 'results' ? `the results file ${path} (-o)` : role === 'schema' ? `the schema file ${path} (--schema)` : `the questions file ${path}`;
    super(`cannot ${verb} ${file}: ${reason}${fixFor(code, role, path)}`, { cause });
    this.path = path;
    this.code = code;
  }
}

/** What a file is to the command: it is named by its role in every message. */
export type FileRole = 'questions' | 'results' | 'schema';

function fixFor(code: string | undefined, role: FileRole, path: string): string {
  const written = role === 'results' ? '; the lines already written are whole, and the same command goes on from them' : '';
  switch (code) {
    case 'ENOENT':
      return role === 'results' ? `. Create its folder first, or give -o a path in a folder that exists.` : '. Check the path.';
    case 'EACCES':
    case 'EPERM':
      return `. Check the permissions of ${path} and its folder.`;
    case 'EISDIR':
      return '. Name a file, not a folder.';
    case 'ENXIO':
      // The message already says what to do (a FIFO without a reader); nothing was written.
      return '.';
    case 'ENOSPC':
    case 'EDQUOT':
      return `. Free some disk space${written}.`;
    default:
      return written ? `${written}.` : '.';
  }
}

export async function runBatch(settings: BatchSettings): Promise<BatchSummary> {
  const questions = readQuestions(settings.input, settings.warn);
  const wanted = new Set(questions.map((q) => String(q.id)));
  const earlier = readEarlierResults(settings.output, settings.retryFailed ?? true, wanted, settings.warn);
  const pending = questions.filter((q) => !earlier.done.has(String(q.id)));
  const lines = new ResultLines(settings.output, earlier.tallies, pending.length, settings.progress);
  let next = 0;
  let failure: unknown = null;
  // Stops every worker at once: on Ctrl-C (the caller's signal) or on a failure here.
  const halt = new AbortController();
  const signal = AbortSignal.any([settings.signal, halt.signal]);
  lines.showProgress();

  const worker = async () => {
    try {
      while (next < pending.length && !signal.aborted) {
        const question = pending[next++] as Question;
        const started = performance.now();
        let result;
        try {
          result = await acheck(settings.callFn, question.prompt, {
            threshold: settings.threshold,
            maxRetries: settings.maxRetries,
            timeoutMs: settings.timeoutMs,
            callRetries: settings.callRetries,
            samples: settings.samples,
            confidenceFrom: settings.confidenceFrom,
            schema: settings.schema,
            telemetry: settings.telemetry,
            signal,
          });
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
        if (halt.signal.aborted) return;
        lines.write(resultRow(question, Math.round(performance.now() - started), result, settings.withPrompts ?? false));
      }
    } catch (error) {
      failure ??= error;
      halt.abort(error);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(Math.max(1, settings.concurrency), Math.max(1, pending.length)) }, worker));
  } finally {
    lines.close();
  }
  if (failure !== null) throw failure;
  return summarize(questions.length, questions.length - pending.length, earlier.redone, lines.written, settings.signal.aborted, lines.tallies);
}

/**
 * The output as a batch writes it, local or queued: each result line appended whole, tallied
 * for the summary after the lines of earlier runs, and counted by status for the progress bar.
 */
export class ResultLines {
  readonly tallies: Tally[];
  /** Lines written by this run. */
  written = 0;
  readonly #fd: number;
  readonly #file: string;
  readonly #total: number;
  readonly #progress: BatchOutput['progress'];
  readonly #counts: Record<string, number> = {};

  /** Opens `file` to append; `total` is the lines this run is to write. */
  constructor(file: string, earlier: readonly Tally[], total: number, progress: BatchOutput['progress']) {
    this.#fd = openOutput(file);
    this.#file = file;
    this.tallies = [...earlier];
    this.#total = total;
    this.#progress = progress;
  }

  /** Shows the bar as it stands; at the start, once there is something to do. */
  showProgress(): void {
    if (this.#total > 0) this.#progress({ done: this.written, total: this.#total, counts: this.#counts });
  }

  write(row: Record<string, unknown>): void {
    writeLine(this.#fd, this.#file, `${JSON.stringify(row)}\n`);
    const tally = tallyOf(row);
    if (tally) this.tallies.push(tally);
    this.written += 1;
    const status = String(row['status']);
    this.#counts[status] = (this.#counts[status] ?? 0) + 1;
    sortByStatus(this.#counts);
    this.showProgress();
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** A result line: the question's id and expected answer, the time the check took, then the result. */
export function resultRow(question: Question, latencyMs: number, result: CheckResult<unknown, unknown>, withPrompts: boolean): Record<string, unknown> {
  const { prompts, ...fields } = result.toJSON();
  return { id: question.id, expected: question.expected, latencyMs, ...fields, ...(withPrompts ? { prompts } : {}) };
}

export function summarize(total: number, skipped: number, redone: number, checked: number, stopped: boolean, tallies: readonly Tally[]): BatchSummary {
  const byStatus: Record<string, number> = {};
  const byMethod: Record<string, number> = {};
  for (const tally of tallies) {
    byStatus[tally.status] = (byStatus[tally.status] ?? 0) + 1;
    byMethod[tally.method] = (byMethod[tally.method] ?? 0) + 1;
  }
  sortByStatus(byStatus);
  const latencies = tallies.flatMap((t) => (t.latencyMs === null ? [] : [t.latencyMs])).sort((a, b) => a - b);
  const sum = (pick: (t: Tally) => number) => tallies.reduce((n, t) => n + pick(t), 0);
  const reported = tallies.filter((t) => t.usage !== null);
  return {
    total,
    skipped,
    redone,
    checked,
    stopped,
    results: tallies.length,
    byStatus,
    byMethod,
    meanAttempts: tallies.length ? sum((t) => t.attempts) / tallies.length : 0,
    p50Ms: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
    failedCalls: sum((t) => t.failedCalls),
    everyCallFailed: sum((t) => (t.everyCallFailed ? 1 : 0)),
    unparseable: sum((t) => t.unparseable),
    usage: totalUsage(reported.map((t) => t.usage)),
    resultsWithUsage: reported.length,
    acceptedWithUsage: reported.filter((t) => t.status === VERIFIED || t.status === REPAIRED).length,
  };
}

/** A file's whole text; a failed read is a `CliFileError` naming the file and the fix. */
export function readText(role: FileRole, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliFileError(role, file, 'read', error);
  }
}

/**
 * A regular file's whole text, of at most `maxBytes`: for the files that are read whole
 * and small, such as the schema. A FIFO would block the read until a writer came (for
 * ever), and a device such as /dev/zero would be read until memory ran out, aborting the
 * process; both are refused at once, as is a larger file, with a `CliFileError`. The
 * file is opened without blocking and then looked at, so what is read is what was judged.
 */
export function readRegularFile(role: FileRole, file: string, maxBytes: number): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. Regular files ignore it.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw new CliFileError(role, file, 'read', error);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new CliFileError(role, file, 'read', new Error(`it is ${kindOf(stats)}, not a regular file; give the path of a file`));
    if (stats.size > maxBytes) throw new CliFileError(role, file, 'read', tooLarge(stats.size, maxBytes));
    // One byte more than allowed: a file that grew since fstat is refused, not cut.
    const buffer = Buffer.alloc(Math.min(stats.size, maxBytes) + 1);
    let length = 0;
    for (let n; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0; ) length += n;
    if (length > maxBytes) throw new CliFileError(role, file, 'read', tooLarge(length, maxBytes));
    return buffer.toString('utf8', 0, length);
  } catch (error) {
    if (error instanceof CliFileError) throw error;
    throw new CliFileError(role, file, 'read', error);
  } finally {
    closeSync(fd);
  }
}

function tooLarge(size: number, maxBytes: number): Error {
  return new Error(`it holds ${size} bytes or more, over the ${maxBytes / 1024 / 1024} MiB such a file may hold; check the path`);
}

/** What a file that is not a regular one is, for messages. */
function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isDirectory()) return 'a folder';
  return 'not a regular file';
}

export function readQuestions(file: string, warn: (message: string) => void): Question[] {
  const text = readText('questions', file);
  const questions: Question[] = [];
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((line, index) => {
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
    if (expected === null) return warn(`${where}: "expected" is null; give the right answer, or leave "expected" out; skipped`);
    if (seen.has(String(id))) return warn(`${where}: id ${JSON.stringify(id)} appears twice; skipped`);
    seen.add(String(id));
    questions.push(expected === undefined ? { id, prompt } : { id, prompt, expected: expected as JsonValue });
  });
  return questions;
}

export interface EarlierResults {
  /** Ids with a result that stands. */
  readonly done: Set<string>;
  /** The tallies of those results, for the questions of this input. */
  readonly tallies: readonly Tally[];
  /** Results dropped because every call failed. */
  readonly redone: number;
  /** The ids of those results: their questions are to be checked again. */
  readonly redoneIds: ReadonlySet<string>;
}

/**
 * The results already in the output. A line cut short by a kill is dropped, and so, with
 * `retryFailed`, is a result whose every call failed: their questions are checked again.
 * When a line is dropped the file is rewritten without it (to a temporary file with an
 * unpredictable name, then renamed over it, keeping its permissions), so the output keeps
 * one line per question. Anything but a regular file (`/dev/stdout`, a pipe) is only
 * written to.
 */
export function readEarlierResults(file: string, retryFailed: boolean, wanted: ReadonlySet<string>, warn: (message: string) => void): EarlierResults {
  const done = new Set<string>();
  const tallies: Tally[] = [];
  let stats;
  try {
    stats = statSync(file, { throwIfNoEntry: false });
  } catch (error) {
    throw new CliFileError('results', file, 'read', error);
  }
  const redoneIds = new Set<string>();
  if (!stats?.isFile()) return { done, tallies, redone: 0, redoneIds };
  const text = readText('results', file);
  const kept: string[] = [];
  let dropped = 0;
  let redone = 0;
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(line) as Record<string, unknown>;
    } catch {
      warn(`${file}:${index + 1}: an unfinished result line; its question is checked again`);
      dropped += 1;
      continue;
    }
    const tally = tallyOf(row);
    if (retryFailed && tally?.everyCallFailed) {
      redone += 1;
      redoneIds.add(String(row['id']));
      dropped += 1;
      continue;
    }
    kept.push(line);
    const id = String(row['id']);
    done.add(id);
    if (tally && wanted.has(id)) tallies.push(tally);
  }
  if (redone > 0) warn(`${redone} question${redone === 1 ? '' : 's'} whose every call failed ${redone === 1 ? 'is' : 'are'} checked again (--no-retry-failed keeps them)`);
  if (dropped > 0 || (text.length > 0 && !text.endsWith('\n'))) {
    try {
      // Not a name derived from the output's (a planted symlink there would be written through): see replaceFile.
      replaceFile(file, kept.map((line) => `${line}\n`).join(''), stats.mode & 0o777);
    } catch (error) {
      throw new CliFileError('results', file, 'write', error);
    }
  }
  return { done, tallies, redone, redoneIds };
}

/**
 * Makes this process the only writer of the output until the returned function is called:
 * two batches (or a batch and a `--collect`) on one file would each write every line, and one
 * rewriting it would lose the other's. The lock is `<output>.lock`, holding the writer's pid;
 * one left by a process that died is taken over. Anything but a regular file (`/dev/stdout`,
 * a pipe) is not locked. Processes on other machines sharing the file are not seen.
 */
export function lockOutput(file: string): () => void {
  const lock = `${file}.lock`;
  let stats;
  try {
    stats = statSync(file, { throwIfNoEntry: false });
  } catch (error) {
    throw new CliFileError('results', file, 'read', error);
  }
  if (stats !== undefined && !stats.isFile()) return () => undefined;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new CliFileError('results', file, 'write', error);
    }
    let holder = Number.NaN;
    try {
      holder = Number(readFileSync(lock, 'utf8'));
    } catch {
      // Released between our attempt and this read: try again.
    }
    if (Number.isInteger(holder) && holder > 0 && isRunning(holder)) {
      throw new Error(`${file} is being written by another booth batch (process ${holder}); wait for it to end, or give -o another file. If no such process runs, delete ${lock}.`);
    }
    rmSync(lock, { force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The output, open to append. It is opened without blocking first: a FIFO with no reader
 * would otherwise hold the open, and with it the whole process (Ctrl-C included, whose
 * handler never gets to run), until some process read it. Without a reader that is ENXIO,
 * refused here; with one, anything but a regular file is opened again as usual, so that its
 * writes wait for the reader rather than fail when the pipe is full.
 */
function openOutput(file: string): number {
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | (constants.O_NONBLOCK ?? 0), 0o666);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO' && statSync(file, { throwIfNoEntry: false })?.isFIFO()) {
      const noReader = Object.assign(new Error('it is a FIFO (named pipe) that no process is reading; start its reader first, or give -o a regular file'), { code: 'ENXIO' });
      throw new CliFileError('results', file, 'write', noReader);
    }
    throw new CliFileError('results', file, 'write', error);
  }
  try {
    if (fstatSync(fd).isFile()) return fd;
    // The blocking descriptor opens before the probe closes: between the two, a FIFO would
    // have no writer, and its reader would take that for the end of the results.
    const blocking = openSync(file, 'a');
    closeSync(fd);
    return blocking;
  } catch (error) {
    closeSync(fd);
    throw new CliFileError('results', file, 'write', error);
  }
}

/** One line in one go: with O_APPEND a line is never interleaved with another, and a kill between lines never cuts one. */
function writeLine(fd: number, file: string, line: string): void {
  const bytes = Buffer.from(line);
  try {
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
  } catch (error) {
    throw new CliFileError('results', file, 'write', error);
  }
}

/** The summary's view of a result line; null for a line that is not a result. */
function tallyOf(row: Record<string, unknown>): Tally | null {
  const { status, method, attempts, latencyMs, usage } = row;
  if (typeof status !== 'string' || typeof method !== 'string' || !Array.isArray(attempts)) return null;
  let failedCalls = 0;
  let unparseable = 0;
  let allFailed = attempts.length > 0;
  for (const attempt of attempts as Array<Record<string, unknown>>) {
    const tries = Array.isArray(attempt?.['callTries']) ? (attempt['callTries'] as Array<{ error?: unknown }>) : null;
    const failedTries = tries ? tries.filter((t) => t?.error !== null && t?.error !== undefined).length : 0;
    if (attempt?.['callFailed'] === true) failedCalls += Math.max(1, failedTries);
    else {
      failedCalls += failedTries;
      allFailed = false;
      const samples = attempt?.['samples'];
      if (Array.isArray(samples)) {
        for (const sample of samples as Array<Record<string, unknown>>) if (sample?.['callFailed'] !== true && sample?.['parseOk'] !== true) unparseable += 1;
      } else if (attempt?.['parseOk'] !== true) unparseable += 1;
    }
  }
  return {
    status,
    method,
    attempts: attempts.length,
    latencyMs: typeof latencyMs === 'number' ? latencyMs : null,
    failedCalls,
    unparseable,
    everyCallFailed: allFailed,
    usage: usageOfRow(usage),
  };
}

/**
 * A result line's usage; null when the line has none: no call reported any, or it was
 * written before usage was counted. A value edited into nonsense counts as not reported,
 * as a malformed latency does, rather than stopping the summary.
 */
function usageOfRow(value: unknown): Usage | null {
  if (value === null || value === undefined) return null;
  try {
    return usageFromReport(value);
  } catch {
    return null;
  }
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
