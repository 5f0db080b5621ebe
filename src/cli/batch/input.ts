import { accessSync, closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readFileSync, readSync, type Stats, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { replaceFile } from '../../stores/atomic-file.js';
import type { ConfidenceSource } from '../../decide/agreement.js';
import type { CallRetryPolicy } from '../../decide/call-retries.js';
import type { AnswerSchema } from '../../decide/schema.js';
import type { TelemetryOptions } from '../../telemetry/settings.js';
import type { AsyncCallFn } from '../../decide/model-call.js';
import type { SamplesFlag } from '../spend-flags.js';
import type { JsonValue } from '../../reply/json-objects.js';
import { isPlainObject } from '../../util/values.js';
import { type Tally, tallyOf } from './summary.js';

/** What a batch reads — its questions, the results of earlier runs, a schema file — each file checked before it is read. */

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
  /** Replies gathered per attempt, or the adaptive form; above 1 they vote, and each result line keeps them in its attempts. Default 1. */
  readonly samples?: SamplesFlag | undefined;
  /** What the threshold judges when sampling; acheck's default when undefined. */
  readonly confidenceFrom?: ConfidenceSource | undefined;
  /** Every answer must satisfy it; the result lines then hold the answers as JSON values. */
  readonly schema?: AnswerSchema | undefined;
  /** The application's system prompt (--system, --system-file). */
  readonly system?: string | undefined;
  /** Spans for each check (`--otel`). */
  readonly telemetry?: TelemetryOptions | undefined;
  /** The name of the first model (`--model`), and the cascade's next ones (`--escalate-model`…). */
  readonly modelName?: string | undefined;
  readonly escalate?: readonly { readonly call: AsyncCallFn; readonly name: string }[] | undefined;
  /** The budget of each check (`--max-calls`, `--max-tokens`, `--max-cost-usd`). */
  readonly budget?: { readonly maxCalls?: number; readonly maxTokens?: number; readonly maxCostUsd?: number } | undefined;
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
    const file = FILE_NAMES[role](path);
    super(`cannot ${verb} ${file}: ${reason}${fixFor(code, role, path)}`, { cause });
    this.path = path;
    this.code = code;
  }
}

const FILE_NAMES: Readonly<Record<FileRole, (path: string) => string>> = {
  questions: (path) => `the questions file ${path}`,
  results: (path) => `the results file ${path} (-o)`,
  schema: (path) => `the schema file ${path} (--schema)`,
  system: (path) => `the system prompt file ${path} (--system-file)`,
  labelled: (path) => `the results file ${path}`,
  page: (path) => `the page ${path} (--html)`,
  chart: (path) => `the chart ${path} (--svg)`,
  report: (path) => `the report ${path}`,
};

/**
 * Fails with a `CliFileError` unless a page can be written at `path`: its folder exists and
 * may be written, it is no folder and no link (see `writePage`), and it is none of the files
 * in `readFrom`, which the command reads. Asked before any paid call, so that a typo in the
 * path does not cost the run.
 */
export function checkWritable(role: FileRole, path: string, readFrom: readonly (string | null | undefined)[] = []): void {
  try {
    if (lstatOf(path)?.isSymbolicLink()) throw new Error(LINK_REFUSED);
    if (existsSync(path) && statSync(path).isDirectory()) throw Object.assign(new Error('illegal operation on a directory'), { code: 'EISDIR' });
    accessSync(dirname(resolve(path)), constants.W_OK);
  } catch (error) {
    throw new CliFileError(role, path, 'write', error);
  }
  checkNotRead(role, path, readFrom);
}

const LINK_REFUSED = 'it is a symbolic link, and Booth writes no page through a link (one planted in a shared folder could point at any file of yours); remove the link or give the path of the file itself';

/** `lstat` of `path`, or null when nothing is there. */
function lstatOf(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Fails with a `CliFileError` when `path` names one of the files the command reads (the
 * results a report is made of, the questions): writing a page there would replace paid
 * results with HTML. The same file is found by its path or, where it exists, by its device
 * and inode, so a link or another spelling of the path does not hide it.
 */
export function checkNotRead(role: FileRole, path: string, readFrom: readonly (string | null | undefined)[]): void {
  const target = identity(path);
  for (const file of readFrom) {
    if (file === null || file === undefined) continue;
    const read = identity(file);
    const same = resolve(file) === resolve(path) || (target !== null && read !== null && target === read);
    if (same) throw new CliFileError(role, path, 'write', new Error(`it is ${file}, which this command reads; give the ${role} a path of its own`));
  }
}

/** A file's device and inode, or null when it does not exist (yet). */
function identity(path: string): string | null {
  try {
    const stats = statSync(path);
    return `${stats.dev}:${stats.ino}`;
  } catch {
    return null;
  }
}

/**
 * Writes a page (`--html`, `--svg`, a report) whole or not at all, never through a link: it
 * is written to a new file beside `path`, opened exclusively, and renamed over it. A link
 * at `path` is refused rather than followed or replaced: the user who made a link meant its
 * target, and one planted in a shared folder points wherever its maker chose. A FIFO or a
 * device named on purpose is written as it is.
 */
export function writePage(role: FileRole, path: string, text: string): void {
  try {
    const stats = lstatOf(path);
    if (stats?.isSymbolicLink()) throw new Error(LINK_REFUSED);
    if (stats !== null && !stats.isFile()) writeFileSync(path, text);
    else replaceFile(path, text);
  } catch (error) {
    throw new CliFileError(role, path, 'write', error);
  }
}

/** What a file is to the command: it is named by its role in every message. */
export type FileRole = 'questions' | 'results' | 'schema' | 'system' | 'labelled' | 'page' | 'chart' | 'report';

function fixFor(code: string | undefined, role: FileRole, path: string): string {
  const written = role === 'results' ? '; the lines already written are whole, and the same command goes on from them' : '';
  switch (code) {
    case 'ENOENT':
      if (role === 'results') return '. Create its folder first, or give -o a path in a folder that exists.';
      if (role === 'page') return '. Create its folder first, or give --html a path in a folder that exists.';
      return role === 'report' ? '. Create its folder first, or give the report a path in a folder that exists.' : '. Check the path.';
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

/** A file's whole text; a failed read is a `CliFileError` naming the file and the fix. */
function readText(role: FileRole, file: string): string {
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
export function kindOf(stats: Stats): string {
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
 * How a rerun judges the earlier lines of its questions against its own settings (a local
 * batch's `RerunCheck`): whether a line is to be checked again, then, once every line is
 * read and before anything is rewritten, whether the rerun may go on at all.
 */
export interface EarlierLineCheck {
  redo(row: Record<string, unknown>, where: string): boolean;
  finish(file: string, warn: (message: string) => void): void;
}

/**
 * The results already in the output. A line cut short by a kill is dropped, and so, with
 * `retryFailed`, is a result whose every call failed: their questions are checked again.
 * With `check`, each line of the input's questions that heard from the model is judged by
 * it too: a line it redoes (made with other settings) is dropped the same way, and it may
 * refuse the rerun, before the file is touched. When a line is dropped the file is
 * rewritten without it (to a temporary file with an unpredictable name, then renamed over
 * it, keeping its permissions), so the output keeps one line per question. Anything but a
 * regular file (`/dev/stdout`, a pipe) is only written to.
 */
export function readEarlierResults(
  file: string,
  retryFailed: boolean,
  wanted: ReadonlySet<string>,
  warn: (message: string) => void,
  check?: EarlierLineCheck,
): EarlierResults {
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
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      warn(`${file}:${index + 1}: an unfinished result line; its question is checked again`);
      dropped += 1;
      continue;
    }
    // `null`, a number or an array is JSON but no line Booth writes: like a cut line, dropped, and its question (if any) checked again.
    if (!isPlainObject(parsed)) {
      warn(`${file}:${index + 1}: not a result line (not a JSON object); dropped`);
      dropped += 1;
      continue;
    }
    const row = parsed as Record<string, unknown>;
    const tally = tallyOf(row);
    if (retryFailed && tally?.everyCallFailed) {
      redone += 1;
      redoneIds.add(String(row['id']));
      dropped += 1;
      continue;
    }
    const id = String(row['id']);
    // A line whose every call failed judged no reply: whatever its settings, it says nothing a rerun's could contradict.
    if (check && wanted.has(id) && !tally?.everyCallFailed && check.redo(row, `${file}:${index + 1}`)) {
      dropped += 1;
      continue;
    }
    kept.push(line);
    done.add(id);
    if (tally && wanted.has(id)) tallies.push(tally);
  }
  check?.finish(file, warn);
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
