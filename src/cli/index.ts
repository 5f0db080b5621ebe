/**
 * The `booth` command: `demo`, `ask`, `batch`, `worker` and `calibrate`. Exit codes: 0 done
 * (for `ask`: the answer was accepted), 1 failed (for `ask`: not accepted; for `batch`: a
 * file could not be read or written, or Redis could not be reached), 2 bad usage, 130
 * stopped by Ctrl-C.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { openAICompatible } from '../adapters.js';
import { acheck } from '../acheck.js';
import { CONFIDENCE_SOURCES, type ConfidenceSource } from '../agreement.js';
import { MAX_SAMPLES } from '../options.js';
import type { Sample } from '../attempt.js';
import type { AnswerSchema } from '../schema.js';
import { type BatchOutput, type BatchSummary, CliFileError, lockOutput, runBatch } from './batch.js';
import { calibrate, calibrateBySource, confidenceBySource, type Labelled, loadChartLibraries, reliabilitySvg, sameAnswer, type SourceCalibrations } from './calibrate.js';
import { runDemo } from './demo.js';
import { askSpentLines, batchSpentLines } from './spent.js';
import { loadSchemaFile, readSchemaText, SchemaFileError, SchemaLibraryMissing } from './json-schema.js';
import { OTEL_PACKAGES, startOtel } from './otel.js';
import { connectRedis, loadQueueLibraries, QueueEnvError, type RedisTarget, redisTarget, redisUrl, runName, shownUrl } from './queue.js';
import { runQueueBatch } from './queue-batch.js';
import { RunSettingsError, startWorker } from './worker.js';
import { toHtml } from '../visualize/index.js';

const USAGE_ERROR = 2;
const INTERRUPTED = 130;

function unitInterval(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !(number >= 0 && number <= 1)) throw new InvalidArgumentError('expected a number from 0 to 1.');
  return number;
}

function wholeNumber(minimum: number, maximum = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const number = Number(value);
    if (value.trim() === '' || !Number.isInteger(number) || number < minimum || number > maximum) {
      throw new InvalidArgumentError(
        maximum === Number.MAX_SAFE_INTEGER ? `expected a whole number, ${minimum} or more.` : `expected a whole number from ${minimum} to ${maximum}.`,
      );
    }
    return number;
  };
}

/** The version in the package.json next to the running file: dist/cli.js and src/cli/index.ts both find it. */
function ownVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'boothjs' && typeof manifest.version === 'string') return manifest.version;
    } catch {
      // No package.json here: look one folder up.
    }
    if (new URL('..', dir).href === dir.href) return 'unknown';
  }
}

interface EndpointFlags {
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
  threshold: number;
  maxRetries: number;
  timeoutMs?: number;
  callRetries: number;
  schema?: string;
  samples: number;
  confidenceFrom?: ConfidenceSource;
  otel?: boolean;
}

/** The flags that say which model to call and how to check its answers; `batch` requires the model only without --queue. */
function withEndpointFlags(command: Command, modelRequired = true): Command {
  const option = (flags: string, description: string) => (modelRequired ? command.requiredOption(flags, description) : command.option(flags, description));
  option('--base-url <url>', 'OpenAI-compatible API root, e.g. http://localhost:11434/v1');
  option('--model <name>', 'model name');
  return command
    .option('--api-key-env <var>', 'environment variable that holds the API key')
    .option('--threshold <number>', 'lowest confidence accepted', unitInterval, 0.7)
    .option('--max-retries <n>', 'reconsiderations after the first attempt', wholeNumber(0, 100), 1)
    .option('--timeout-ms <ms>', 'time limit per model call', wholeNumber(1))
    .option('--call-retries <n>', 'tries again after a failed call (network error, 408, 429, 5xx), waiting as Retry-After asks', wholeNumber(0, 100), 0)
    .option('--schema <file>', 'JSON Schema (draft 2020-12) the answer must satisfy (needs the optional ajv: npm i ajv)')
    .option('--samples <k>', 'replies gathered per attempt; above 1 they vote and the confidence comes from the vote', wholeNumber(1, MAX_SAMPLES), 1)
    .option('--otel', `export OpenTelemetry spans over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); needs npm i ${OTEL_PACKAGES.join(' ')}`)
    .addOption(
      new Option('--confidence-from <source>', 'what the threshold judges when sampling (default hybrid with --samples above 1)').choices(CONFIDENCE_SOURCES),
    )
    .hook('preAction', (command) => {
      // acheck would throw a RangeError naming its options; checked here, it is bad usage naming the flags, before any call.
      const { samples, confidenceFrom } = command.opts<EndpointFlags>();
      if (samples === 1 && confidenceFrom !== undefined && confidenceFrom !== 'self') {
        command.error(
          `error: option '--confidence-from ${confidenceFrom}' needs several samples to vote, but --samples is 1; add --samples 5 (any of 2 to ${MAX_SAMPLES}), or leave --confidence-from out.`,
          { exitCode: USAGE_ERROR, code: 'commander.conflictingOption' },
        );
      }
    });
}

/**
 * The `--schema` file as the Standard Schema acheck takes, or undefined without the flag.
 * It is read before any call: a schema that cannot be used is bad usage, exit 2, however
 * it fails (ajv missing, the file missing, not JSON, refused by Ajv).
 */
async function schemaFrom(flags: EndpointFlags): Promise<AnswerSchema | undefined> {
  if (flags.schema === undefined) return undefined;
  try {
    return await loadSchemaFile(flags.schema, (message) => console.error(`warning: ${message}`));
  } catch (error) {
    if (error instanceof SchemaLibraryMissing || error instanceof CliFileError || error instanceof SchemaFileError) {
      throw new CommanderError(USAGE_ERROR, 'booth.schema', `error: ${error.message}`);
    }
    throw error;
  }
}

/** The library options the endpoint flags stand for. */
function checkOptions(flags: EndpointFlags) {
  return {
    threshold: flags.threshold,
    maxRetries: flags.maxRetries,
    timeoutMs: flags.timeoutMs,
    callRetries: flags.callRetries > 0 ? { retries: flags.callRetries } : undefined,
    samples: flags.samples,
    confidenceFrom: flags.confidenceFrom,
  };
}

/** `ask`'s output: the result as lines (or JSON, or an HTML page too), and its exit code. */
async function printAnswer(result: Awaited<ReturnType<typeof acheck>>, flags: EndpointFlags & { json?: boolean; html?: string }, schema: AnswerSchema | undefined): Promise<void> {
  // A script can branch on the exit code alone: 0 accepted (VERIFIED, REPAIRED), 1 not.
  process.exitCode = result.status === 'VERIFIED' || result.status === 'REPAIRED' ? 0 : 1;
  if (flags.html) writeFileSync(flags.html, await toHtml(result));
  if (flags.json) return console.log(JSON.stringify(result, null, 2));
  console.log(`status      ${result.status}`);
  // With --schema the answer may be any JSON value: shown as JSON, as `batch` writes it, so "42" is not 42.
  const { answer } = result;
  console.log(`answer      ${answer === null ? '—' : schema === undefined ? String(answer) : JSON.stringify(answer)}`);
  console.log(`confidence  ${result.confidence ?? '—'}`);
  if (result.agreement !== null) {
    console.log(`agreement   ${result.agreement} (${flags.samples} samples per attempt, confidence from ${result.settings?.confidenceFrom})`);
  }
  if (result.interpretations.length > 0) console.log(`readings    ${result.interpretations.join(' | ')}`);
  console.log(`attempts    ${result.nAttempts} (${result.method})`);
  for (const line of askSpentLines(result)) console.log(line);
  console.log(`path        ${result.trace.map((step) => step.state).join(' → ')}`);
  for (const line of problems(result)) console.log(line);
  if (flags.html) console.log(`html        ${flags.html}`);
}

/** Each failed call and each unparseable reply of a run, with its cause; when sampling, sample by sample. */
function problems(result: Awaited<ReturnType<typeof acheck>>): string[] {
  const lines: string[] = [];
  result.attempts.forEach((attempt, index) => {
    if (attempt.samples === undefined) lines.push(...replyProblems(`attempt ${index}`, attempt));
    else attempt.samples.forEach((sample, n) => lines.push(...replyProblems(`attempt ${index}, sample ${n}`, sample)));
    if (attempt.validationError !== null) lines.push(`failed validation attempt ${index}: ${attempt.validationError}`);
  });
  return lines;
}

/** The failed calls and the refusal of one reply: an attempt's, or one sample's. */
function replyProblems(which: string, reply: Pick<Sample<unknown>, 'callTries' | 'callFailed' | 'parseOk' | 'error'>): string[] {
  const lines: string[] = [];
  const tries = reply.callTries.filter((t) => t.error !== null);
  tries.forEach((t, n) => lines.push(`call failed ${tries.length > 1 || reply.callTries.length > 1 ? `${which}, try ${n + 1}` : which}: ${t.error}`));
  if (reply.callFailed && tries.length === 0) lines.push(`call failed ${which}: ${reply.error}`);
  if (!reply.callFailed && !reply.parseOk) lines.push(`unparseable ${which}: ${reply.error}`);
  return lines;
}

function callFnFrom(flags: EndpointFlags) {
  const apiKey = flags.apiKeyEnv ? process.env[flags.apiKeyEnv] : undefined;
  if (flags.apiKeyEnv && !apiKey) throw new CommanderError(USAGE_ERROR, 'booth.env', `error: $${flags.apiKeyEnv} is not set`);
  return openAICompatible({ baseURL: flags.baseUrl, model: flags.model, apiKey });
}

const warn = (message: string) => console.error(`warning: ${message}`);

/** `--queue`, checked here rather than by Commander, whose message would repeat the URL with its password. */
function checkQueueUrl(command: Command, value: string): void {
  try {
    redisUrl(value);
  } catch (error) {
    usageError(command, `error: option '--queue <url>' argument '${shownUrl(value)}' is invalid. ${(error as Error).message}`);
  }
}

/**
 * The Redis of `--queue` and `--queue-env`, checked before anything else is done: a bad
 * variable is bad usage naming it (never its value).
 */
function targetOf(command: Command, flags: { queue?: string | undefined; queueEnv?: string | undefined }): RedisTarget {
  if (flags.queue !== undefined) checkQueueUrl(command, flags.queue);
  try {
    return redisTarget(flags.queue, flags.queueEnv);
  } catch (error) {
    if (error instanceof QueueEnvError) usageError(command, `error: ${error.message}`);
    throw error;
  }
}

const QUEUE_ENV_HELP =
  'environment variable holding the Redis URL, or with --queue <url> just its password: kept out of the command line, which every local user can read (ps)';

/** Ends the command with a usage error: the message, then the command's help. */
function usageError(command: Command, message: string): never {
  return command.error(message, { exitCode: USAGE_ERROR, code: 'commander.usageError' });
}

type BatchFlags = EndpointFlags & {
  output: string;
  concurrency: number;
  retryFailed: boolean;
  withPrompts?: boolean;
  queue?: string;
  queueEnv?: string;
  name?: string;
  collect?: boolean;
};

type WorkerFlags = EndpointFlags & { queue?: string; queueEnv?: string; name: string; concurrency: number; rate?: { max: number; durationMs: number }; lockMs: number };

/** The flags a queued batch leaves to its workers, by their key and as they are written. */
const WORKER_FLAGS = [
  ['baseUrl', '--base-url'],
  ['model', '--model'],
  ['apiKeyEnv', '--api-key-env'],
  ['threshold', '--threshold'],
  ['maxRetries', '--max-retries'],
  ['timeoutMs', '--timeout-ms'],
  ['callRetries', '--call-retries'],
  ['schema', '--schema'],
  ['samples', '--samples'],
  ['confidenceFrom', '--confidence-from'],
  ['otel', '--otel'],
  ['concurrency', '--concurrency'],
] as const;

/**
 * What every worker of a run must be started with: the model and the flags that decide a
 * check. A checkpoint resumes only under the same settings, and one run's results should
 * come from one model judged one way. The schema counts by its contents, not its path.
 */
function sharedFlags(flags: EndpointFlags): Record<string, string | number | boolean | null> {
  return {
    '--model': flags.model,
    '--threshold': flags.threshold,
    '--max-retries': flags.maxRetries,
    '--timeout-ms': flags.timeoutMs ?? null,
    '--call-retries': flags.callRetries,
    '--samples': flags.samples,
    // As acheck decides it: hybrid by default when sampling, the model's own confidence otherwise.
    '--confidence-from': flags.confidenceFrom ?? (flags.samples > 1 ? 'hybrid' : 'self'),
    '--schema': flags.schema === undefined ? null : JSON.stringify(JSON.parse(readSchemaText(flags.schema))),
  };
}

/** `--rate 10/s`: at most n questions per second, minute or hour; a fraction spreads one over a longer window. */
function rateLimit(value: string): { max: number; durationMs: number } {
  const match = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(s|m|h)\s*$/.exec(value);
  const n = Number(match?.[1]);
  if (!match || !(n > 0)) throw new InvalidArgumentError('expected a rate such as 10/s, 300/m or 1000/h.');
  const unitMs = { s: 1_000, m: 60_000, h: 3_600_000 }[match[2] as 's' | 'm' | 'h'];
  return Number.isInteger(n) ? { max: n, durationMs: unitMs } : { max: 1, durationMs: Math.round(unitMs / n) };
}

/**
 * The batch's progress bar on stderr, and Ctrl-C: the first stops the batch cleanly, a
 * second at once, saying `stoppedNow` (every line written is whole either way: each is
 * written in one synchronous call).
 */
function batchConsole(stoppedNow: string) {
  const controller = new AbortController();
  const bar = new SingleBar({
    format: 'booth batch |{bar}| {value}/{total} | {rate}/s | ETA {eta_formatted} | {counts}',
    stream: process.stderr,
    noTTYOutput: true,
    notTTYSchedule: 1_000,
    hideCursor: true,
  });
  let interrupts = 0;
  const interrupt = () => {
    interrupts += 1;
    if (interrupts === 1) return controller.abort(new Error('stopped by Ctrl-C'));
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
        bar.start(total, done, payload);
        barStarted = true;
      } else bar.update(done, payload);
    },
    close: () => {
      bar.stop();
      process.off('SIGINT', interrupt);
      process.off('SIGTERM', interrupt);
    },
  };
}

async function localBatch(input: string, flags: BatchFlags): Promise<void> {
  const schema = await schemaFrom(flags);
  const callFn = callFnFrom(flags);
  // Locked before the telemetry starts, so that a refusal leaves nothing to shut down.
  const release = lockOutput(flags.output);
  const otel = flags.otel ? await startOtel(flags.model, USAGE_ERROR, warn).catch((error: unknown) => {
    release();
    throw error;
  }) : null;
  const terminal = batchConsole(`stopped at once: the results written so far are in ${flags.output}; run the same command again to go on.`);
  let summary: BatchSummary;
  try {
    summary = await runBatch({
      input,
      concurrency: flags.concurrency,
      callFn,
      ...checkOptions(flags),
      schema,
      telemetry: otel?.telemetry,
      retryFailed: flags.retryFailed,
      withPrompts: flags.withPrompts ?? false,
      ...batchOutput(flags.output, terminal),
    });
  } finally {
    terminal.close();
    release();
    await otel?.shutdown();
  }
  reportBatch(summary, input, flags.output, 'stopped', 'run the same command again to go on.');
}

/** `batch --queue`: the questions go to Redis, the workers check them, and this writes their lines. */
async function queuedBatch(input: string | null, target: RedisTarget, flags: BatchFlags & { name: string }): Promise<void> {
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
      ...batchOutput(flags.output, terminal),
    });
  } finally {
    terminal.close();
    release();
    client.disconnect();
  }
  reportBatch(summary, input ?? `run ${flags.name}`, flags.output, 'stopped waiting', goOn);
}

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
    .description('check one question against a real endpoint')
    .argument('<question>', 'the question')
    .option('--json', 'print the whole result as JSON')
    .option('--html <file>', 'write the HTML trace of the run')
    .action(async (question: string, flags: EndpointFlags & { json?: boolean; html?: string }) => {
      const schema = await schemaFrom(flags);
      const otel = flags.otel ? await startOtel(flags.model, USAGE_ERROR, (message) => console.error(`warning: ${message}`)) : null;
      try {
        const result = await acheck(callFnFrom(flags), question, { ...checkOptions(flags), schema, telemetry: otel?.telemetry });
        await printAnswer(result, flags, schema);
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
    .option('--queue <url>', 'Redis to queue the questions in (needs npm i bullmq ioredis); `booth worker`s check them')
    .option('--queue-env <var>', QUEUE_ENV_HELP)
    .option('--name <run>', 'with --queue: the run, as its workers are started with', runName)
    .option('--collect', 'with --queue: queue nothing, only write the run\'s results')
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
      const target = targetOf(command, flags);
      const modelFlags = WORKER_FLAGS.filter(([key]) => command.getOptionValueSource(key) === 'cli').map(([, flag]) => flag);
      if (modelFlags.length > 0) {
        usageError(command, `error: with --queue the workers call the model and check the answers: give ${modelFlags.join(', ')} to booth worker instead.`);
      }
      if (input === undefined && !flags.collect) usageError(command, "error: missing required argument 'questions' (or --collect, to only write the run's results)");
      return queuedBatch(input ?? null, target, { ...flags, name: flags.name });
    });

  withEndpointFlags(booth.command('worker'))
    .description('check the questions of a queued batch (booth batch --queue) until stopped; start one on each machine')
    .option('--queue <url>', 'the Redis the batch was queued in (needs npm i bullmq ioredis)')
    .option('--queue-env <var>', QUEUE_ENV_HELP)
    .requiredOption('--name <run>', 'the run, as given to booth batch --name', runName)
    .option('--concurrency <n>', 'checks in flight at once in this worker', wholeNumber(1), 8)
    .option('--rate <n/s>', 'questions started per second by all the run\'s workers together (n/s, n/m or n/h)', rateLimit)
    .option('--lock-ms <ms>', 'how long a question stays with a worker that stopped answering before another takes it', wholeNumber(1_000), 30_000)
    .action(async (flags: WorkerFlags, command: Command) => {
      if (flags.queue === undefined && flags.queueEnv === undefined) usageError(command, "error: required option '--queue <url>' (or --queue-env <var>) not specified");
      const target = targetOf(command, flags);
      const libraries = await loadQueueLibraries('booth worker', USAGE_ERROR);
      const schema = await schemaFrom(flags);
      const otel = flags.otel ? await startOtel(flags.model, USAGE_ERROR, warn) : null;
      const client = await connectRedis(libraries, target, warn);
      let worker;
      try {
        worker = await startWorker({
          libraries,
          client,
          name: flags.name,
          concurrency: flags.concurrency,
          rate: flags.rate ?? null,
          lockMs: flags.lockMs,
          callFn: callFnFrom(flags),
          check: { ...checkOptions(flags), schema, telemetry: otel?.telemetry },
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
      if (flags.svg) writeFileSync(flags.svg, await reliabilitySvg(report, bySource));
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
          ? `threshold          ${report.threshold.value} reaches precision ${report.threshold.precision.toFixed(3)} (target ${report.targetPrecision}) and accepts ${(report.threshold.coverage * 100).toFixed(1)}% of answers`
          : `threshold          none reaches precision ${report.targetPrecision}`,
      );
      if (bySource) printBySource(bySource);
      if (flags.svg) console.log(`reliability chart  ${flags.svg}`);
    });

  return booth;
}

/** Results that carry a confidence and a label: `correct`, or `expected` to compare with the answer. */
function readLabelled(file: string): Labelled[] {
  const labelled: Labelled[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    let row: { status?: unknown; confidence?: unknown; correct?: unknown; expected?: unknown; answer?: unknown; [field: string]: unknown };
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    // A line of plain JSON such as `null` is no result (and `null.confidence` would throw).
    if (typeof row !== 'object' || row === null) continue;
    if (typeof row.confidence !== 'number' || typeof row.status !== 'string') continue;
    const correct =
      typeof row.correct === 'boolean'
        ? row.correct
        : row.expected !== undefined && row.expected !== null
          ? sameAnswer(row.answer, row.expected)
          : undefined;
    if (correct === undefined) continue;
    labelled.push({ status: row.status, confidence: row.confidence, correct, bySource: confidenceBySource(row) ?? undefined });
  }
  return labelled;
}

/** The three confidence sources side by side, on the results with samples: the one with the lowest ECE and Brier is the one to trust. */
function printBySource(bySource: SourceCalibrations): void {
  console.log(`by confidence source (--confidence-from), recomputed from the samples of ${bySource.self.count} results:`);
  console.log('source      accuracy  ECE     Brier   threshold');
  for (const source of CONFIDENCE_SOURCES) {
    const { accuracy, ece, brier, threshold } = bySource[source];
    const fitted = threshold
      ? `${threshold.value.toFixed(3)} reaches precision ${threshold.precision.toFixed(3)} and accepts ${(threshold.coverage * 100).toFixed(1)}%`
      : 'none reaches the target';
    console.log(`${source.padEnd(12)}${accuracy.toFixed(3).padEnd(10)}${ece.toFixed(4).padEnd(8)}${brier.toFixed(4).padEnd(8)}${fitted}`);
  }
}

/** Where a batch writes its lines and how it reports: the output file, and the console's Ctrl-C and progress bar. */
function batchOutput(output: string, terminal: ReturnType<typeof batchConsole>): BatchOutput {
  return { output, signal: terminal.signal, warn, progress: terminal.progress };
}

/** A finished batch's summary; one stopped by Ctrl-C says so (`stopped`, then how to go on) and exits 130. */
function reportBatch(summary: BatchSummary, input: string, output: string, stopped: string, goOn: string): void {
  printSummary(summary, input, output);
  if (summary.stopped) {
    console.error(`${stopped}: ${summary.checked} results written to ${output}; ${goOn}`);
    process.exitCode = INTERRUPTED;
  }
}

/** The whole file's results, earlier runs included: what a script or a person wants after a resume. */
function printSummary(summary: BatchSummary, input: string, output: string): void {
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
  const noReply = summary.everyCallFailed;
  console.log(
    `failed calls ${summary.failedCalls}${noReply ? ` (every call failed for ${noReply} question${noReply === 1 ? '' : 's'})` : ''}, unparseable replies ${summary.unparseable}`,
  );
  console.log(`mean attempts ${summary.meanAttempts.toFixed(2)}, latency p50 ${summary.p50Ms} ms, p95 ${summary.p95Ms} ms`);
  for (const line of batchSpentLines(summary)) console.log(line);
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
