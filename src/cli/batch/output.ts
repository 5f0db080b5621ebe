import { closeSync, constants, fstatSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import type { CheckResult } from '../../results/result.js';
import { CliFileError, type Question } from './input.js';
import type { RunRecord } from './run-record.js';
import { sortByStatus, type Tally, tallyOf } from './summary.js';

/** What a batch writes: result lines appended whole, under a lock, with the progress they make. */

/** Where a batch, local or queued, writes its result lines, and how it reports. */
export interface BatchOutput {
  readonly output: string;
  readonly signal: AbortSignal;
  /** A line of the input that is not a question, or a result line that will be redone: reported, then skipped. */
  readonly warn: (message: string) => void;
  readonly progress: (event: { done: number; total: number; counts: Readonly<Record<string, number>> }) => void;
}

/**
 * The output as a batch writes it, local or queued: each result line appended whole, tallied
 * for the summary after the lines of earlier runs, and counted by status for the progress bar.
 */
export class ResultLines {
  readonly tallies: Tally[];
  /** Lines written by this run. */
  written = 0;
  /** Of those, the questions for which every model call failed. */
  unheard = 0;
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
    if (tally?.everyCallFailed) this.unheard += 1;
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

/**
 * A result line: the question's id and expected answer, the time the check took, the result,
 * then `run`, what else it was made with (the model, the host, Booth's version…), which a
 * rerun compares.
 */
export function resultRow(question: Question, latencyMs: number, result: CheckResult<unknown, unknown>, withPrompts: boolean, run: RunRecord): Record<string, unknown> {
  const { prompts, ...fields } = result.toJSON();
  return { id: question.id, expected: question.expected, latencyMs, ...fields, run, ...(withPrompts ? { prompts } : {}) };
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
