import { SingleBar } from 'cli-progress';
import { CommanderError } from 'commander';
import { type BatchOutput, lockOutput, ResultLines, resultRow } from './output.js';
import { type BatchSummary, type BudgetStop, summarize } from './summary.js';
import { batchSpentLines } from '../spent.js';
import { startOtel } from '../otel.js';
import { connectRedis, loadQueueLibraries, type RedisTarget } from '../queue/queue.js';
import { runQueueBatch } from '../queue/queued-batch.js';
import { BUDGET_STOP, type BatchFlags, callsFrom, checkOptions, OUTAGE, schemaFrom, USAGE_ERROR, warn } from '../flags.js';
import { budgetText, SpendMeter } from '../spend-flags.js';
import { costText } from '../../visualize/explain.js';
import { acheck } from '../../api/acheck.js';
import type { AsyncCallFn } from '../../decide/model-call.js';
import { type BatchCheckOptions, checkWritable, type EarlierLineCheck, type Question, readEarlierResults, readQuestions } from './input.js';
import { RerunCheck, RunChangedError, type RunRecord, runRecord } from './run-record.js';
import { writeReport } from '../report/write.js';

/**
 * `booth batch`: checks every question of a JSONL file, `concurrency` at a time, and
 * appends each result to the output as soon as it is known, so a killed run loses only
 * the checks in flight and a rerun skips the ids already written — except the questions
 * whose every call failed, which a rerun checks again unless `retryFailed` is false.
 */

export interface BatchSettings extends BatchCheckOptions, BatchOutput {
  readonly input: string;
  readonly concurrency: number;
  readonly callFn: AsyncCallFn;
  /** Check again the questions whose every call failed in an earlier run. Default true. */
  readonly retryFailed?: boolean | undefined;
  /** Keep the prompts sent in each result line. Default false: they repeat the question at length. */
  readonly withPrompts?: boolean | undefined;
  /** What each line records it was made with. */
  readonly run: RunRecord;
  /** How the lines already in the output are judged against this run's settings; none: they stand as they are. */
  readonly rerun?: EarlierLineCheck | undefined;
  /**
   * `--total-budget-usd`: no question starts once the calls of this run have cost `usd`, as
   * `meter` (fed by the priced callFns) counts it, or once a call replied without reporting
   * its usage (the total is then unknown: closed). The checks in flight finish.
   */
  readonly totalBudget?: { readonly usd: number; readonly meter: SpendMeter } | undefined;
}

export async function runBatch(settings: BatchSettings): Promise<BatchSummary> {
  const questions = readQuestions(settings.input, settings.warn);
  const wanted = new Set(questions.map((q) => String(q.id)));
  const earlier = readEarlierResults(settings.output, settings.retryFailed ?? true, wanted, settings.warn, settings.rerun);
  const pending = questions.filter((q) => !earlier.done.has(String(q.id)));
  const lines = new ResultLines(settings.output, earlier.tallies, pending.length, settings.progress);
  let next = 0;
  let failure: unknown = null;
  let budgetStop: BudgetStop['reason'] | null = null;
  const { totalBudget } = settings;
  /** Whether the total budget lets another question start; it stops starting for good once it does not. */
  const budgetLeft = () => {
    if (totalBudget === undefined || budgetStop !== null) return budgetStop === null;
    if (totalBudget.meter.unknown > 0) budgetStop = 'unknown';
    else if (totalBudget.meter.costUsd >= totalBudget.usd) budgetStop = 'spent';
    return budgetStop === null;
  };
  // The caller's signal (the first Ctrl-C) stops starting questions: the checks in flight are
  // paid for, so they finish and their lines are written. A failure here stops them at once.
  const halt = new AbortController();
  const { signal: stopStarting } = settings;
  const signal = halt.signal;
  lines.showProgress();

  const worker = async () => {
    try {
      while (next < pending.length && !stopStarting.aborted && !signal.aborted && budgetLeft()) {
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
            system: settings.system,
            telemetry: settings.telemetry,
            modelName: settings.modelName,
            escalate: settings.escalate,
            budget: settings.budget,
            signal,
          });
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
        if (halt.signal.aborted) return;
        lines.write(resultRow(question, Math.round(performance.now() - started), result, settings.withPrompts ?? false, settings.run));
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
  const summary = summarize(questions.length, questions.length - pending.length, earlier.redone, lines.written, stopStarting.aborted, lines.tallies, lines.unheard);
  if (budgetStop === null || totalBudget === undefined) return summary;
  return { ...summary, budgetStop: { reason: budgetStop, notStarted: pending.length - next, spentUsd: totalBudget.meter.costUsd, limitUsd: totalBudget.usd } };
}

/** `booth batch`: the run, and at the terminal its progress bar, Ctrl-C and summary, local or through a queue. */

export const INTERRUPTED = 130;

/**
 * The batch's progress bar on stderr, and Ctrl-C: the first stops the batch cleanly, saying
 * `stopping` when given, a second at once, saying `stoppedNow` (every line written is whole
 * either way: each is written in one synchronous call).
 */
export function batchConsole(stoppedNow: string, stopping?: string) {
  const controller = new AbortController();
  const bar = new SingleBar({
    format: 'booth batch |{bar}| {value}/{total} | {rate}/s | ETA {eta_formatted} | {counts}{note}',
    stream: process.stderr,
    noTTYOutput: true,
    notTTYSchedule: 1_000,
    hideCursor: true,
  });
  let interrupts = 0;
  const interrupt = () => {
    interrupts += 1;
    if (interrupts === 1) {
      if (stopping !== undefined) console.error(`\n${stopping}`);
      return controller.abort(new Error('stopped by Ctrl-C'));
    }
    bar.stop();
    console.error(stoppedNow);
    process.exit(INTERRUPTED);
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  const started = performance.now();
  let barStarted = false;
  return {
    signal: controller.signal,
    progress: ({ done, total, counts }: { done: number; total: number; counts: Readonly<Record<string, number>> }) => {
      const seconds = (performance.now() - started) / 1000;
      const payload = {
        rate: seconds > 0 ? (done / seconds).toFixed(1) : '0.0',
        counts: Object.entries(counts).map(([status, n]) => `${status} ${n}`).join(' ') || '—',
      };
      if (!barStarted) {
        bar.start(total, done, { ...payload, note: '' });
        barStarted = true;
      } else bar.update(done, payload);
    },
    /** What the counts cannot show (questions a stopped worker holds), after them; '' clears it. */
    note: (text: string) => {
      if (barStarted) bar.update({ note: text === '' ? '' : ` | ${text}` });
    },
    close: () => {
      bar.stop();
      process.off('SIGINT', interrupt);
      process.off('SIGTERM', interrupt);
    },
  };
}

export async function localBatch(input: string, flags: BatchFlags): Promise<void> {
  if (flags.report !== undefined) checkWritable('report', flags.report, [flags.output, input]);
  const schema = await schemaFrom(flags);
  const meter = flags.totalBudgetUsd === undefined ? null : new SpendMeter();
  const { callFn, modelName, escalate } = callsFrom(flags, meter);
  const run = runRecord(flags);
  // Locked before the telemetry starts, so that a refusal leaves nothing to shut down.
  const release = lockOutput(flags.output);
  const otel = flags.otel ? await startOtel(flags.model, USAGE_ERROR, warn).catch((error: unknown) => {
    release();
    throw error;
  }) : null;
  const terminal = batchConsole(
    `stopped at once: the results written so far are in ${flags.output}; run the same command again to go on.`,
    'stopping: no new question starts; the checks in flight finish and their lines are written (Ctrl-C again to stop them now)',
  );
  let summary: BatchSummary;
  try {
    summary = await runBatch({
      input,
      concurrency: flags.concurrency,
      callFn,
      modelName,
      escalate,
      totalBudget: meter === null || flags.totalBudgetUsd === undefined ? undefined : { usd: flags.totalBudgetUsd, meter },
      ...checkOptions(flags),
      schema,
      telemetry: otel?.telemetry,
      retryFailed: flags.retryFailed,
      withPrompts: flags.withPrompts ?? false,
      run,
      rerun: new RerunCheck(flags, run, flags.rerunChanged ?? false),
      ...batchOutput(flags.output, terminal),
    });
  } catch (error) {
    // Before any call: the flags, not a file, are what differ from the output's lines.
    if (error instanceof RunChangedError) throw new CommanderError(USAGE_ERROR, 'booth.rerun', `error: ${error.message}`);
    throw error;
  } finally {
    terminal.close();
    release();
    await otel?.shutdown();
  }
  reportBatch(summary, input, flags.output, 'stopped', 'run the same command again to go on.', budgetText(flags));
  await reportPage(flags, summary, input);
}

/** `batch --queue`: the questions go to Redis, the workers check them, and this writes their lines. */
export async function queuedBatch(input: string | null, target: RedisTarget, flags: BatchFlags & { name: string }): Promise<void> {
  if (flags.report !== undefined) checkWritable('report', flags.report, [flags.output, input]);
  const libraries = await loadQueueLibraries('--queue', USAGE_ERROR);
  const release = lockOutput(flags.output);
  const client = await connectRedis(libraries, target, warn).catch((error: unknown) => {
    release();
    throw error;
  });
  const goOn = `the workers go on; the same command, or --collect, writes the rest to ${flags.output}.`;
  const terminal = batchConsole(`stopped waiting at once: ${goOn}`);
  let summary: BatchSummary;
  try {
    summary = await runQueueBatch({
      libraries,
      client,
      name: flags.name,
      input,
      collect: flags.collect ?? false,
      retryFailed: flags.retryFailed,
      withPrompts: flags.withPrompts ?? false,
      note: terminal.note,
      ...batchOutput(flags.output, terminal),
    });
  } finally {
    terminal.close();
    release();
    client.disconnect();
  }
  reportBatch(summary, input ?? `run ${flags.name}`, flags.output, 'stopped waiting', goOn);
  await reportPage(flags, summary, input);
}

/**
 * `--report`: the page of the whole output, earlier runs' lines included, written once the
 * batch is over, stopped by Ctrl-C or not: it shows what there is. `questions` gives each
 * result its question; null when the run's questions are not here (`--collect`).
 */
async function reportPage(flags: BatchFlags, summary: BatchSummary, questions: string | null): Promise<void> {
  if (flags.report === undefined) return;
  if (summary.results === 0) return warn(`${flags.output} holds no result yet: no report written to ${flags.report}`);
  const count = await writeReport({ results: flags.output, page: flags.report, questions, warn });
  console.log(`report of ${count} question${count === 1 ? '' : 's'} written to ${flags.report}`);
}

/** Where a batch writes its lines and how it reports: the output file, and the console's Ctrl-C and progress bar. */
export function batchOutput(output: string, terminal: ReturnType<typeof batchConsole>): BatchOutput {
  return { output, signal: terminal.signal, warn, progress: terminal.progress };
}

/** A finished batch's summary; one stopped by Ctrl-C says so (`stopped`, then how to go on) and exits 130. */
export function reportBatch(summary: BatchSummary, input: string, output: string, stopped: string, goOn: string, budget = ''): void {
  printSummary(summary, input, output, budget);
  // A file without one question is a wrong file, or one whose every line was refused (each with a warning above).
  if (summary.total === 0) {
    console.error(`error: ${input} holds no question: each line must be a JSON object { "id": …, "prompt": "…" }; check the file, and the warnings above`);
    process.exitCode = 1;
    return;
  }
  if (summary.stopped) {
    console.error(`${stopped}: ${summary.checked} results written to ${output}; ${goOn}`);
    process.exitCode = INTERRUPTED;
  } else if (summary.budgetStop) {
    console.error(budgetStopText(summary.budgetStop, summary.checked, output));
    process.exitCode = BUDGET_STOP;
  } else if (summary.outage) {
    console.error(
      `every model call of this run failed (${summary.checked} question${summary.checked === 1 ? '' : 's'}): the endpoint is down or refuses the requests; see the errors in ${output}; a rerun once it answers checks these questions again`,
    );
    process.exitCode = OUTAGE;
  }
}

/** Why `--total-budget-usd` stopped the batch, what was kept, and how to go on. */
export function budgetStopText(stop: BudgetStop, checked: number, output: string): string {
  const questions = (n: number) => `${n} question${n === 1 ? '' : 's'}`;
  const why =
    stop.reason === 'spent'
      ? `stopped by --total-budget-usd ${costText(stop.limitUsd)}: this run's calls cost ${costText(stop.spentUsd)}`
      : `stopped by --total-budget-usd ${costText(stop.limitUsd)}: a call replied without reporting its usage, so what this run spent is not known (${costText(stop.spentUsd)} at least) and no question starts (the budget fails closed)`;
  return (
    `${why}; ${questions(stop.notStarted)} not started. ${checked} result${checked === 1 ? '' : 's'} written to ${output} ${checked === 1 ? 'is' : 'are'} kept; ` +
    `the same command checks the rest, spending up to --total-budget-usd again${stop.reason === 'unknown' ? ' (use an endpoint that reports usage)' : ''}.`
  );
}

/** The whole file's results, earlier runs included: what a script or a person wants after a resume. */
export function printSummary(summary: BatchSummary, input: string, output: string, budget = ''): void {
  if (summary.total === 0) return console.log(`nothing to check: ${input} holds no questions`);
  console.log(`questions ${summary.total}, already done ${summary.skipped}, checked now ${summary.checked}`);
  if (summary.skipped === summary.total) console.log(`nothing left to check: every question already has a result in ${output}`);
  if (summary.results === 0) return;
  const share = (n: number) => `${((n / summary.results) * 100).toFixed(1)}%`.padStart(7);
  console.log(`results of all ${summary.results} questions in ${output}:`);
  console.log('status        count   share');
  for (const [status, n] of Object.entries(summary.byStatus)) console.log(`${status.padEnd(12)}${String(n).padStart(7)} ${share(n)}`);
  console.log('method        count   share');
  for (const [method, n] of Object.entries(summary.byMethod)) console.log(`${method.padEnd(12)}${String(n).padStart(7)} ${share(n)}`);
  const overBudget = summary.byMethod['budget'] ?? 0;
  if (overBudget > 0) {
    console.log(`questions stopped by the budget: ${overBudget} (UNCERTAIN, method budget${budget === '' ? '' : `; this run's budget: ${budget}`})`);
  }
  const noReply = summary.everyCallFailed;
  console.log(
    `failed calls ${summary.failedCalls}${noReply ? ` (every call failed for ${noReply} question${noReply === 1 ? '' : 's'})` : ''}, unparseable replies ${summary.unparseable}`,
  );
  console.log(`mean attempts ${summary.meanAttempts.toFixed(2)}, latency p50 ${summary.p50Ms} ms, p95 ${summary.p95Ms} ms`);
  for (const line of batchSpentLines(summary)) console.log(line);
}
