/**
 * The `booth` command: `demo`, `ask`, `batch`, `clarify`, `worker`, `calibrate` and `report`. Exit
 * codes: 0 done (for `ask`: the answer was accepted), 1 failed (for `ask`: not accepted; for
 * `batch`: a file could not be read or written, or Redis could not be reached; for `clarify`:
 * stopped by Ctrl-D before the last line), 2 bad usage, 130 stopped by Ctrl-C.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { acheck } from '../api/acheck.js';
import { numberText } from '../util/numbers.js';
import { CONFIDENCE_SOURCES } from '../decide/agreement.js';
import {
  calibrate,
  calibrateBySource,
  type Labelled,
  labelOf,
  loadChartLibraries,
  reliabilitySvg,
  type SourceCalibrations,
} from './calibrate.js';
import { runDemo } from './demo.js';
import { startOtel } from './otel.js';
import { connectRedis, DEFAULT_LOCK_MS, loadQueueLibraries, MAX_LOCK_MS, runName } from './queue/queue.js';
import { RunSettingsError, startWorker } from './queue/worker.js';
import {
  type BatchFlags,
  callsFrom,
  checkOptions,
  type EndpointFlags,
  QUEUE_ENV_HELP,
  rateLimit,
  schemaFrom,
  sharedFlags,
  targetOf,
  unitInterval,
  USAGE_ERROR,
  usageError,
  warn,
  wholeNumber,
  withEndpointFlags,
  WORKER_FLAGS,
  type WorkerFlags,
} from './flags.js';
import { INTERRUPTED, localBatch, queuedBatch } from './batch/command.js';
import { runRecord } from './batch/run-record.js';
import { clarifyAtTerminal, printAnswer, streamingOptions } from './ask.js';
import { personAtTerminal } from './clarify/person.js';
import { clarifyBatch, type ClarifyFlags } from './clarify/command.js';
import { MAX_CLARIFICATIONS_LIMIT } from '../options/read-options.js';
import { DEFAULT_MAX_CLARIFICATIONS } from '../decide/constants.js';
import { checkWritable, CliFileError, writePage } from './batch/input.js';
import { ownVersion } from './version.js';
import { dollars } from './spend-flags.js';
import { writeReport } from './report/write.js';

export function program(): Command {
  const booth = new Command('booth')
    .description('A checkpoint between your application and an LLM call.')
    .version(ownVersion(), '-V, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride();

  booth
    .command('demo')
    .description('run the offline demo: a scripted model, every status, no network')
    .action(async () => {
      await runDemo((line) => console.log(line), resolve('booth-demo-traces'));
    });

  withEndpointFlags(booth.command('ask'))
    .description('check one question against a real endpoint; on a terminal, an ambiguous one asks you which reading you mean')
    .argument('<question>', 'the question')
    .option('--json', 'print the whole result as JSON')
    .option('--html <file>', 'write the HTML trace of the run')
    .option('--no-input', 'never ask which reading an ambiguous question means, even on a terminal')
    .option('--max-clarifications <n>', 'rounds of asking which reading is meant before AMBIGUOUS stands', wholeNumber(0, MAX_CLARIFICATIONS_LIMIT), DEFAULT_MAX_CLARIFICATIONS)
    .option('--stream', 'stream the reply (server-sent events): print the answer as it arrives and the status once decided; an ambiguous question stops at its readings; with --json, one JSON line per partial reply, then the result\'s')
    .action(async (question: string, flags: EndpointFlags & { json?: boolean; html?: string; input: boolean; maxClarifications: number; stream?: boolean }) => {
      if (flags.html !== undefined) checkWritable('page', flags.html);
      const schema = await schemaFrom(flags);
      const otel = flags.otel ? await startOtel(flags.model, USAGE_ERROR, (message) => console.error(`warning: ${message}`)) : null;
      try {
        const { callFn, modelName, escalate } = callsFrom(flags);
        // clarify() is given what acheck() was: the schema, the settings and the cascade, which a result does not carry whole.
        // With --stream, each check (the clarified ones too) shows its reply as it arrives, its verdict held until printAnswer.
        const streaming = flags.stream ? streamingOptions(flags) : null;
        const options = {
          ...checkOptions(flags),
          modelName,
          escalate,
          schema,
          telemetry: otel?.telemetry,
          maxClarifications: flags.maxClarifications,
          ...(streaming === null ? {} : { onPartial: streaming.onPartial, onAttempt: streaming.onAttempt }),
        };
        const result = await acheck(callFn, question, options);
        const show = (shown: typeof result) => {
          streaming?.end();
          return printAnswer(shown, flags, schema);
        };
        await show(result);
        // A script (a pipe on either end) gets the AMBIGUOUS result and exit 1, as before there were people to ask.
        if (flags.input && personAtTerminal()) await clarifyAtTerminal(result, callFn, options, show);
      } finally {
        // After the answer is out: a collector that cannot be reached costs a warning, never the answer.
        await otel?.shutdown();
      }
    });

  withEndpointFlags(booth.command('batch'), false)
    .description('check every question of a JSONL file ({ "id", "prompt", "expected"? } per line), here or by workers (--queue)')
    .argument('[questions]', 'input JSONL file (with --queue --collect, the run\'s own questions when left out)')
    .requiredOption('-o, --output <file>', 'results JSONL file; a rerun skips the ids already in it')
    .option('--concurrency <n>', 'checks in flight at once', wholeNumber(1), 8)
    .option('--no-retry-failed', 'on a rerun, keep the results whose every call failed instead of checking them again')
    .option('--with-prompts', 'keep the prompts sent in each result line')
    .option('--rerun-changed', 'on a rerun, check again the questions whose lines were made with other settings or another model, and replace their lines')
    .option('--queue <url>', 'Redis to queue the questions in (needs npm i bullmq ioredis); `booth worker`s check them')
    .option('--queue-env <var>', QUEUE_ENV_HELP)
    .option('--name <run>', 'with --queue: the run, as its workers are started with', runName)
    .option('--collect', 'with --queue: queue nothing, only write the run\'s results')
    .option('--report <file>', 'after the batch (also one stopped by Ctrl-C), write the HTML report of the results file (as booth report)')
    .option('--total-budget-usd <usd>', 'no new question starts once this run\'s calls cost this much (the checks in flight finish; exit 4); needs --price', dollars)
    .action(async (input: string | undefined, flags: BatchFlags, command: Command) => {
      if (flags.queue === undefined && flags.queueEnv === undefined) {
        for (const [flag, given] of [['--name', flags.name], ['--collect', flags.collect]] as const) {
          if (given !== undefined) usageError(command, `error: option '${flag}' goes with --queue <url> (or --queue-env <var>); without it the batch runs here.`);
        }
        if (input === undefined) usageError(command, "error: missing required argument 'questions'");
        for (const [flag, given] of [['--base-url <url>', flags.baseUrl], ['--model <name>', flags.model]] as const) {
          if (given === undefined) usageError(command, `error: required option '${flag}' not specified`);
        }
        return localBatch(input, flags);
      }
      if (flags.name === undefined) usageError(command, "error: option '--queue <url>' needs --name <run>: the run's name, which its workers are started with.");
      // The workers make the calls, each its own: there is no one meter here to stop them with.
      if (flags.totalBudgetUsd !== undefined) {
        usageError(command, "error: option '--total-budget-usd' goes without --queue: a queued run's calls are made by its workers; give each booth worker --max-cost-usd (a budget per question) instead.");
      }
      // The workers hold the settings, and a run's are fixed by its first worker: there is nothing here to compare lines with.
      if (flags.rerunChanged) usageError(command, "error: option '--rerun-changed' goes without --queue: a queued run is checked with its first worker's flags; give the batch another --name and -o to check it with others.");
      const target = targetOf(command, flags);
      const modelFlags = WORKER_FLAGS.filter(([key]) => command.getOptionValueSource(key) === 'cli').map(([, flag]) => flag);
      if (modelFlags.length > 0) {
        usageError(command, `error: with --queue the workers call the model and check the answers: give ${modelFlags.join(', ')} to booth worker instead.`);
      }
      if (input === undefined && !flags.collect) usageError(command, "error: missing required argument 'questions' (or --collect, to only write the run's results)");
      return queuedBatch(input ?? null, target, { ...flags, name: flags.name });
    });

  withEndpointFlags(booth.command('clarify'))
    .description("put a batch's ambiguous questions to you one by one, at the terminal, and check each again with the reading you mean")
    .argument('<results>', 'results JSONL from booth batch')
    .requiredOption('-o, --output <file>', 'the clarified results JSONL: every line of <results>, the ambiguous ones checked again; a rerun keeps the ids already in it')
    .option('--questions <file>', 'the questions JSONL of the batch: the question of each line written without --with-prompts')
    .option('--max-clarifications <n>', 'rounds of asking which reading is meant, per question, before AMBIGUOUS stands', wholeNumber(0, MAX_CLARIFICATIONS_LIMIT), DEFAULT_MAX_CLARIFICATIONS)
    .action((results: string, flags: ClarifyFlags) => clarifyBatch(results, flags));

  withEndpointFlags(booth.command('worker'))
    .description('check the questions of a queued batch (booth batch --queue) until stopped; start one on each machine')
    .option('--queue <url>', 'the Redis the batch was queued in (needs npm i bullmq ioredis)')
    .option('--queue-env <var>', QUEUE_ENV_HELP)
    .requiredOption('--name <run>', 'the run, as given to booth batch --name', runName)
    .option('--concurrency <n>', 'checks in flight at once in this worker', wholeNumber(1), 8)
    .option('--rate <n/s>', 'questions started per second by all the run\'s workers together (n/s, n/m or n/h)', rateLimit)
    .option('--lock-ms <ms>', 'how long a question stays with a worker that stopped answering before another takes it (renewed every fifth of it)', wholeNumber(1_000, MAX_LOCK_MS), DEFAULT_LOCK_MS)
    .action(async (flags: WorkerFlags, command: Command) => {
      if (flags.queue === undefined && flags.queueEnv === undefined) usageError(command, "error: required option '--queue <url>' (or --queue-env <var>) not specified");
      const target = targetOf(command, flags);
      const libraries = await loadQueueLibraries('booth worker', USAGE_ERROR);
      const schema = await schemaFrom(flags);
      const otel = flags.otel ? await startOtel(flags.model, USAGE_ERROR, warn) : null;
      const client = await connectRedis(libraries, target, warn);
      let worker;
      try {
        const { callFn, modelName, escalate } = callsFrom(flags);
        worker = await startWorker({
          libraries,
          client,
          name: flags.name,
          concurrency: flags.concurrency,
          rate: flags.rate ?? null,
          lockMs: flags.lockMs,
          callFn,
          check: { ...checkOptions(flags), modelName, escalate, schema, telemetry: otel?.telemetry },
          run: runRecord(flags),
          shared: sharedFlags(flags),
          warn,
        });
      } catch (error) {
        client.disconnect();
        await otel?.shutdown();
        if (error instanceof RunSettingsError) throw new CommanderError(USAGE_ERROR, 'booth.worker', `error: ${error.message}`);
        throw error;
      }
      console.error(`booth worker: checking run ${flags.name} from ${target.shown}, ${flags.concurrency} at a time; Ctrl-C or SIGTERM stops it`);
      // The first signal finishes the checks in flight; a second stops them where they are, their checkpoints kept.
      let signals = 0;
      const stop = () => {
        signals += 1;
        if (signals === 1) console.error('booth worker: finishing the checks in flight; signal again to stop them now (they go back to the queue, their finished attempts kept)');
        else process.exitCode = INTERRUPTED;
        // Putting jobs back needs Redis: without it (or at a third signal) the worker ends now, and
        // its jobs come back once their locks lapse, resumed from the checkpoints already saved.
        if (signals === 3 || (signals === 2 && client.status !== 'ready')) {
          console.error('booth worker: stopped at once; its jobs go back to the queue when their locks lapse');
          process.exit(INTERRUPTED);
        }
        void worker.stop(signals > 1);
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
      await worker.stopped;
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await client.quit();
      await otel?.shutdown();
      console.error('booth worker: stopped');
    });

  booth
    .command('calibrate')
    .description('measure how far the confidence of labelled results can be trusted')
    .argument('<results>', 'results JSONL from booth batch, with "correct" or "expected" per line')
    .addOption(new Option('--target-precision <p>', 'precision the fitted threshold must reach').argParser(unitInterval).default(0.95))
    .option('--svg <file>', 'write a reliability diagram (needs the optional vega and vega-lite: npm i vega vega-lite)')
    .option('--json', 'print the report as JSON')
    .action(async (file: string, flags: { targetPrecision: number; svg?: string; json?: boolean }) => {
      // vega and vega-lite are optional: without them, say how to install them before printing anything.
      if (flags.svg) await loadChartLibraries();
      const labelled = readLabelled(file);
      if (labelled.length === 0) throw new CommanderError(1, 'booth.calibrate', `error: ${file} has no labelled results with a confidence`);
      const report = calibrate(labelled, flags.targetPrecision);
      const bySource = calibrateBySource(labelled, flags.targetPrecision);
      if (flags.svg) writePage('chart', flags.svg, await reliabilitySvg(report, bySource));
      if (flags.json) return console.log(JSON.stringify({ ...report, bySource }, null, 2));
      console.log(`labelled results   ${report.count}`);
      console.log(`accuracy           ${report.accuracy.toFixed(3)}`);
      console.log(`ECE (10 bins)      ${report.ece.toFixed(4)}`);
      console.log(`Brier score        ${report.brier.toFixed(4)}`);
      for (const [status, { count, accuracy }] of Object.entries(report.accuracyByStatus)) {
        console.log(`accuracy ${status.padEnd(10)}${accuracy.toFixed(3)} of ${count}`);
      }
      console.log(
        report.threshold
          ? `threshold          ${numberText(report.threshold.value)} reaches precision ${report.threshold.precision.toFixed(3)} (target ${numberText(report.targetPrecision)}) and accepts ${(report.threshold.coverage * 100).toFixed(1)}% of answers`
          : `threshold          none reaches precision ${numberText(report.targetPrecision)}`,
      );
      if (bySource) printBySource(bySource);
      if (flags.svg) console.log(`reliability chart  ${flags.svg}`);
    });

  booth
    .command('report')
    .description('write one offline HTML page of a results file: the run\'s summary, and every question with its trace')
    .argument('<results>', 'results JSONL from booth batch')
    .requiredOption('-o, --output <file>', 'the HTML page to write')
    .option('--questions <file>', 'the questions JSONL of the batch: shows and searches each question beside its answer')
    .action(async (results: string, flags: { output: string; questions?: string }) => {
      const count = await writeReport({ results, page: flags.output, questions: flags.questions ?? null, warn });
      console.log(`report of ${count} question${count === 1 ? '' : 's'} written to ${flags.output}`);
    });

  return booth;
}

/** Results that carry a confidence and a label: `correct`, or `expected` to compare with the answer. */
export function readLabelled(file: string): Labelled[] {
  const labelled: Labelled[] = [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliFileError('labelled', file, 'read', error);
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    // A line of plain JSON such as `null` is no result (and `null.confidence` would throw).
    if (typeof row !== 'object' || row === null) continue;
    const label = labelOf(row as Record<string, unknown>);
    if (label !== null) labelled.push(label);
  }
  return labelled;
}

/** The three confidence sources side by side, on the results with samples: the one with the lowest ECE and Brier is the one to trust. */
export function printBySource(bySource: SourceCalibrations): void {
  console.log(`by confidence source (--confidence-from), recomputed from the samples of ${bySource.self.count} results:`);
  console.log('source      accuracy  ECE     Brier   threshold');
  for (const source of CONFIDENCE_SOURCES) {
    const { accuracy, ece, brier, threshold } = bySource[source];
    const fitted = threshold
      ? `${numberText(threshold.value)} reaches precision ${threshold.precision.toFixed(3)} and accepts ${(threshold.coverage * 100).toFixed(1)}%`
      : 'none reaches the target';
    console.log(`${source.padEnd(12)}${accuracy.toFixed(3).padEnd(10)}${ece.toFixed(4).padEnd(8)}${brier.toFixed(4).padEnd(8)}${fitted}`);
  }
}

export async function main(argv: readonly string[]): Promise<void> {
  try {
    await program().parseAsync([...argv]);
  } catch (error) {
    if (error instanceof CommanderError) {
      // `booth --help`, `booth help` and `booth --version` succeed; bare `booth` (code commander.help) is bad usage.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || (error.code === 'commander.help' && error.exitCode === 0)) {
        process.exitCode = 0;
      } else {
        if (error.code.startsWith('booth.')) console.error(error.message);
        process.exitCode = error.code === 'booth.calibrate' ? 1 : USAGE_ERROR;
      }
      return;
    }
    console.error(`error: ${(error as Error).message}`);
    process.exitCode = 1;
  }
}

// `booth … | head` closes the pipe early: that ends the output, not with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(process.exitCode ?? 0);
});

await main(process.argv);
