import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { readBaseURL } from '../adapters/openai-compatible.js';
import { CONFIDENCE_SOURCES, type ConfidenceSource, confidenceSourceFor } from '../decide/agreement.js';
import { MAX_SAMPLES } from '../options/read-options.js';
import type { AnswerSchema } from '../decide/schema.js';
import { CliFileError, readRegularFile } from './batch/input.js';
import { sha256 } from './batch/run-record.js';
import { FormatLibraryMissing, loadSchemaFile, readSchemaText, SchemaFileError, SchemaLibraryMissing } from './json-schema.js';
import { OTEL_PACKAGES } from './otel.js';
import {
  budgetCount,
  budgetOf,
  type CascadeModel,
  cascadeCalls,
  cascadeOf,
  checkPriced,
  collect,
  dollars,
  type Price,
  priceFlag,
  samplesFlag,
  type SamplesFlag,
  mostSamples,
  samplesText,
  sampling,
  SpendFlagError,
  type SpendMeter,
} from './spend-flags.js';
import { QueueEnvError, type RedisTarget, redisTarget, redisUrl, shownUrl } from './queue/queue.js';

/** The flags commands share, each read and checked: the endpoint, the check's options, the queue, the rate. */

/** The most a --system-file may hold: more than any context window takes, far less than would stall the process. */
const MAX_SYSTEM_BYTES = 1024 * 1024;

export const USAGE_ERROR = 2;
/** Every model call of the run failed: nothing was heard from the model, which a script should tell from a rejected answer. */
export const OUTAGE = 3;
/** `batch --total-budget-usd`: the budget was spent (or its spend unknown) before every question started. */
export const BUDGET_STOP = 4;

export function unitInterval(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !(number >= 0 && number <= 1)) throw new InvalidArgumentError('expected a number from 0 to 1.');
  return number;
}

/** A sampling temperature: 0 or more, or with `positive` above 0. */
export function temperature(positive: boolean) {
  return (value: string): number => {
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number) || number < 0) throw new InvalidArgumentError('expected a number, 0 or more, such as 0.7.');
    if (positive && number === 0) {
      throw new InvalidArgumentError('expected a number above 0: at 0 every sample is the same reply, and the vote is unanimous at k times the cost (use --temperature 0 for single calls).');
    }
    return number;
  };
}

export function wholeNumber(minimum: number, maximum = Number.MAX_SAFE_INTEGER) {
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

export interface EndpointFlags {
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
  threshold: number;
  maxRetries: number;
  timeoutMs?: number;
  callRetries: number;
  schema?: string;
  /** K replies per attempt, or the adaptive form (`max=5,min=2,stop=decided`). */
  samples: SamplesFlag;
  confidenceFrom?: ConfidenceSource;
  otel?: boolean;
  temperature?: number;
  sampleTemperature?: number;
  seed?: number;
  /** The system prompt, from --system or read from --system-file before the action. */
  system?: string;
  systemFile?: string;
  /** The cascade: next models, their endpoints and keys, in order (see cascadeOf). */
  escalateModel: string[];
  escalateBaseUrl: string[];
  escalateApiKeyEnv: string[];
  /** The budget of each check. */
  maxCalls?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  /** US dollars per million tokens in and out, per model. */
  price: Price[];
  /** `ask --stream` only: each call streams its reply. */
  stream?: boolean;
}

/** The flags that say which model to call and how to check its answers; `batch` requires the model only without --queue. */
export function withEndpointFlags(command: Command, modelRequired = true): Command {
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
    .option(
      '--samples <k>',
      'replies gathered per attempt; above 1 they vote and the confidence comes from the vote; max=K[,min=M][,stop=decided|C] asks them in waves and stops once the vote is settled',
      samplesFlag,
      1,
    )
    .option('--otel', `export OpenTelemetry spans over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); needs npm i ${OTEL_PACKAGES.join(' ')}`)
    .addOption(
      new Option('--confidence-from <source>', 'what the threshold judges when sampling (default hybrid with --samples above 1)').choices(CONFIDENCE_SOURCES),
    )
    .option('--temperature <t>', 'sampling temperature of each call but a sample\'s (default: the endpoint\'s)', temperature(false))
    .option('--sample-temperature <t>', 'temperature of the calls of --samples above 1, so that they differ (default 1)', temperature(true))
    .option('--seed <n>', 'seed sent with each call; sample k of an attempt is sent seed + k', wholeNumber(0))
    .option('--system <text>', "the application's system prompt, sent before Booth's instructions")
    .option('--system-file <file>', 'read the system prompt from a file (UTF-8)')
    .option('--escalate-model <name>', 'when the answer stays UNCERTAIN, ask this model next, at --base-url (repeatable, in order)', collect, [])
    .option('--escalate-base-url <url>', 'the endpoint of the escalation at the same position; alone, --model at another endpoint (repeatable)', collect, [])
    .option('--escalate-api-key-env <var>', 'the variable holding the key of the --escalate-base-url at the same position, - for none (repeatable)', collect, [])
    .option('--max-calls <n>', 'budget of each question: model calls, every attempt, sample, call retry and escalation included', budgetCount)
    .option('--max-tokens <n>', 'budget of each question: tokens, as the endpoint reports them', budgetCount)
    .option('--max-cost-usd <usd>', 'budget of each question: US dollars, from --price (needs a price for every model asked)', dollars)
    .option('--price <[model=]in,out>', 'US dollars per million input and output tokens of a model (without model=, of --model); repeatable', priceFlag, [])
    .hook('preAction', (command) => {
      const flags = command.opts<EndpointFlags>();
      // Checked before any call: a base URL without a scheme would fail every call alike. The message shows it without a key.
      if (flags.baseUrl !== undefined) {
        try {
          readBaseURL(flags.baseUrl);
        } catch (error) {
          command.error(`error: option '--base-url <url>' is invalid: ${(error as Error).message}`, { exitCode: USAGE_ERROR, code: 'commander.invalidArgument' });
        }
      }
      if (flags.systemFile !== undefined) {
        if (flags.system !== undefined) {
          command.error("error: give the system prompt once: --system <text> or --system-file <file>, not both.", { exitCode: USAGE_ERROR, code: 'commander.conflictingOption' });
        }
        try {
          command.setOptionValue('system', readRegularFile('system', flags.systemFile, MAX_SYSTEM_BYTES));
        } catch (error) {
          command.error(`error: ${(error as CliFileError).message}`, { exitCode: USAGE_ERROR, code: 'commander.invalidArgument' });
        }
      }
      // acheck would throw a RangeError naming its options; checked here, it is bad usage naming the flags, before any call.
      const { samples, confidenceFrom } = flags;
      if (!sampling(samples) && confidenceFrom !== undefined && confidenceFrom !== 'self') {
        command.error(
          `error: option '--confidence-from ${confidenceFrom}' needs several samples to vote, but --samples is 1; add --samples 5 (any of 2 to ${MAX_SAMPLES}), or leave --confidence-from out.`,
          { exitCode: USAGE_ERROR, code: 'commander.conflictingOption' },
        );
      }
      // The cascade, its prices and the cost budget, checked before any call; a queued batch has none (its workers do).
      if (flags.baseUrl !== undefined && flags.model !== undefined) {
        try {
          const cascade = cascadeOf(flags);
          if (flags.maxCostUsd !== undefined) checkPriced(cascade, '--max-cost-usd <usd>');
          if ((flags as { totalBudgetUsd?: number }).totalBudgetUsd !== undefined) checkPriced(cascade, '--total-budget-usd <usd>');
        } catch (error) {
          if (error instanceof SpendFlagError) usageError(command, `error: ${error.message}`);
          throw error;
        }
      }
    });
}

/** The models a command with these flags asks, in order: --model, then each escalation. */
export function cascadeFrom(flags: EndpointFlags): CascadeModel[] {
  return cascadeOf(flags);
}

/**
 * The `--schema` file as the Standard Schema acheck takes, or undefined without the flag.
 * It is read before any call: a schema that cannot be used is bad usage, exit 2, however
 * it fails (ajv missing, the file missing, not JSON, refused by Ajv, a `format` without ajv-formats).
 */
export async function schemaFrom(flags: EndpointFlags): Promise<AnswerSchema | undefined> {
  if (flags.schema === undefined) return undefined;
  try {
    return await loadSchemaFile(flags.schema, (message) => console.error(`warning: ${message}`));
  } catch (error) {
    if (error instanceof SchemaLibraryMissing || error instanceof FormatLibraryMissing || error instanceof CliFileError || error instanceof SchemaFileError) {
      throw new CommanderError(USAGE_ERROR, 'booth.schema', `error: ${error.message}`);
    }
    throw error;
  }
}

/** The library options the endpoint flags stand for (the models apart: see callsFrom). */
export function checkOptions(flags: EndpointFlags) {
  return {
    threshold: flags.threshold,
    maxRetries: flags.maxRetries,
    timeoutMs: flags.timeoutMs,
    callRetries: flags.callRetries > 0 ? { retries: flags.callRetries } : undefined,
    samples: flags.samples,
    confidenceFrom: flags.confidenceFrom,
    system: flags.system,
    budget: budgetOf(flags),
  };
}

/**
 * The models to call: `callFn` (`--model` at `--base-url`), named `modelName`, and the
 * cascade's `escalate`, each priced by `--price`; with `meter`, what every call costs is
 * added to it. A key variable that is not set is bad usage naming it.
 */
export function callsFrom(flags: EndpointFlags, meter: SpendMeter | null = null) {
  try {
    return cascadeCalls(flags, cascadeOf(flags), meter);
  } catch (error) {
    if (error instanceof SpendFlagError) throw new CommanderError(USAGE_ERROR, 'booth.env', `error: ${error.message}`);
    throw error;
  }
}

/** `--model` at `--base-url` alone, priced: for the commands that ask one model. */
export function callFnFrom(flags: EndpointFlags) {
  return callsFrom(flags).callFn;
}

export const warn = (message: string) => console.error(`warning: ${message}`);

/** `--queue`, checked here rather than by Commander, whose message would repeat the URL with its password. */
export function checkQueueUrl(command: Command, value: string): void {
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
export function targetOf(command: Command, flags: { queue?: string | undefined; queueEnv?: string | undefined }): RedisTarget {
  if (flags.queue !== undefined) checkQueueUrl(command, flags.queue);
  try {
    return redisTarget(flags.queue, flags.queueEnv);
  } catch (error) {
    if (error instanceof QueueEnvError) usageError(command, `error: ${error.message}`);
    throw error;
  }
}

export const QUEUE_ENV_HELP =
  'environment variable holding the Redis URL, or with --queue <url> just its password: kept out of the command line, which every local user can read (ps)';

/** Ends the command with a usage error: the message, then the command's help. */
export function usageError(command: Command, message: string): never {
  return command.error(message, { exitCode: USAGE_ERROR, code: 'commander.usageError' });
}

export type BatchFlags = EndpointFlags & {
  output: string;
  concurrency: number;
  retryFailed: boolean;
  withPrompts?: boolean;
  queue?: string;
  queueEnv?: string;
  name?: string;
  collect?: boolean;
  rerunChanged?: boolean;
  /** `--report <file>`: the HTML report of the output, written after the batch. */
  report?: string;
  /** `--total-budget-usd <usd>`: no question starts once this run's calls cost this much. */
  totalBudgetUsd?: number;
};

export type WorkerFlags = EndpointFlags & { queue?: string; queueEnv?: string; name: string; concurrency: number; rate?: { max: number; durationMs: number }; lockMs: number };

/** The flags a queued batch leaves to its workers, by their key and as they are written. */
export const WORKER_FLAGS = [
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
  ['temperature', '--temperature'],
  ['sampleTemperature', '--sample-temperature'],
  ['seed', '--seed'],
  ['escalateModel', '--escalate-model'],
  ['escalateBaseUrl', '--escalate-base-url'],
  ['escalateApiKeyEnv', '--escalate-api-key-env'],
  ['maxCalls', '--max-calls'],
  ['maxTokens', '--max-tokens'],
  ['maxCostUsd', '--max-cost-usd'],
  ['price', '--price'],
  ['system', '--system'],
  ['systemFile', '--system-file'],
  ['otel', '--otel'],
  ['concurrency', '--concurrency'],
] as const;

/**
 * What every worker of a run must be started with: the model and the flags that decide a
 * check. A checkpoint resumes only under the same settings, and one run's results should
 * come from one model judged one way. The schema counts by its contents, not its path; the
 * system prompt by its digest, which is all Redis and the messages may hold of it. Flags
 * added since a run's first worker wrote its settings compare as not given there.
 */
export function sharedFlags(flags: EndpointFlags): Record<string, string | number | boolean | null> {
  return {
    '--model': flags.model,
    '--threshold': flags.threshold,
    '--max-retries': flags.maxRetries,
    '--timeout-ms': flags.timeoutMs ?? null,
    '--call-retries': flags.callRetries,
    // A number as it always was; the adaptive form as it is written.
    '--samples': typeof flags.samples === 'number' ? flags.samples : samplesText(flags.samples),
    '--confidence-from': confidenceSourceFor(mostSamples(flags.samples), flags.confidenceFrom),
    '--schema': flags.schema === undefined ? null : JSON.stringify(JSON.parse(readSchemaText(flags.schema))),
    '--system': flags.system === undefined ? null : sha256(flags.system),
    '--temperature': flags.temperature ?? null,
    '--sample-temperature': flags.sampleTemperature ?? null,
    '--seed': flags.seed ?? null,
    // The cascade by model and host (a key is the worker's own), the budget and the prices: null when not given.
    '--escalate-model': escalationText(flags),
    '--max-calls': flags.maxCalls ?? null,
    '--max-tokens': flags.maxTokens ?? null,
    '--max-cost-usd': flags.maxCostUsd ?? null,
    '--price': flags.price.length === 0 ? null : [...new Set(cascadeOf(flags).flatMap((step) => (step.price === null ? [] : [`${step.model}=${step.price.inputPerMillion},${step.price.outputPerMillion}`])))].join(' '),
  };
}

/** The escalations as a worker's settings compare them: `model@host` in order; null without a cascade. */
function escalationText(flags: EndpointFlags): string | null {
  const [, ...rest] = cascadeOf(flags);
  return rest.length === 0 ? null : rest.map((step) => `${step.model}@${step.host}`).join(' ');
}

/** `--rate 10/s`: at most n questions per second, minute or hour; a fraction spreads one over a longer window. */
export function rateLimit(value: string): { max: number; durationMs: number } {
  const match = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(s|m|h)\s*$/.exec(value);
  const n = Number(match?.[1]);
  if (!match || !(n > 0)) throw new InvalidArgumentError('expected a rate such as 10/s, 300/m or 1000/h.');
  const unitMs = { s: 1_000, m: 60_000, h: 3_600_000 }[match[2] as 's' | 'm' | 'h'];
  return Number.isInteger(n) ? { max: n, durationMs: unitMs } : { max: 1, durationMs: Math.round(unitMs / n) };
}
