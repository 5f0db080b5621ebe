import { InvalidArgumentError } from 'commander';
import { openAICompatible } from '../adapters/index.js';
import { readBaseURL } from '../adapters/openai-compatible.js';
import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import type { UsageReport } from '../decide/usage.js';
import { MAX_ESCALATIONS, MAX_SAMPLES } from '../options/read-options.js';
import { numberText } from '../util/numbers.js';
import { quotedText } from '../util/values.js';

/**
 * The flags of issue 30, "spend only what the answer needs": a cascade of models
 * (`--escalate-model`, `--escalate-base-url`, `--escalate-api-key-env`), adaptive samples
 * (`--samples max=K,…`), a budget per question (`--max-calls`, `--max-tokens`,
 * `--max-cost-usd`), the prices that turn tokens into dollars (`--price`), and the meter a
 * batch's `--total-budget-usd` reads. Each is read and checked here, before any call.
 */

/** `--samples max=K[,min=M][,stop=decided|C]`: acheck's `samples: { max, min?, stop? }`. */
export interface AdaptiveSamples {
  readonly max: number;
  readonly min?: number;
  readonly stop?: 'decided' | { readonly confidence: number };
}

/** What `--samples` holds: K replies per attempt, or the adaptive form. */
export type SamplesFlag = number | AdaptiveSamples;

const ADAPTIVE_HELP = 'or an adaptive form max=K[,min=M][,stop=decided|C] such as max=5 or max=9,min=3,stop=0.95';

/**
 * `--samples`: a whole number from 1 to MAX_SAMPLES, as it always was, or the adaptive form,
 * comma-separated `key=value`s: `max` (2 to MAX_SAMPLES, required), `min` (1 to max: the first
 * wave; default the library's, the fewest that could settle the vote) and `stop` (`decided`,
 * the default: no outcome of the samples not yet asked can change the winner; or a number C
 * above 0.5 and below 1: stop once the Beta posterior puts the leader ahead with probability C).
 */
export function samplesFlag(value: string): SamplesFlag {
  const text = value.trim();
  if (!text.includes('=')) {
    const number = Number(value);
    if (text === '' || !Number.isInteger(number) || number < 1 || number > MAX_SAMPLES) {
      throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_SAMPLES}, ${ADAPTIVE_HELP}.`);
    }
    return number;
  }
  const fields = new Map<string, string>();
  for (const part of text.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    const given = part.slice(at + 1).trim();
    if (at < 0 || !['max', 'min', 'stop'].includes(key)) {
      throw new InvalidArgumentError(`expected max=K[,min=M][,stop=decided|C]: ${quotedText(part.trim(), 40)} is none of max, min, stop.`);
    }
    if (fields.has(key)) throw new InvalidArgumentError(`expected ${key} once, got it twice.`);
    fields.set(key, given);
  }
  const whole = (key: string, low: number, high: number): number | undefined => {
    const given = fields.get(key);
    if (given === undefined) return undefined;
    const number = Number(given);
    if (given === '' || !Number.isInteger(number) || number < low || number > high) {
      throw new InvalidArgumentError(`expected ${key} to be a whole number from ${low} to ${high}, got ${quotedText(given, 40)}.`);
    }
    return number;
  };
  if (!fields.has('max')) throw new InvalidArgumentError(`expected max=K (2 to ${MAX_SAMPLES}) in the adaptive form, such as max=5 or max=9,min=3,stop=0.95.`);
  const max = whole('max', 2, MAX_SAMPLES) as number;
  const min = whole('min', 1, max);
  const stopText = fields.get('stop');
  let stop: AdaptiveSamples['stop'];
  if (stopText !== undefined) {
    const confidence = Number(stopText);
    if (stopText === 'decided') stop = 'decided';
    else if (stopText !== '' && confidence > 0.5 && confidence < 1) stop = { confidence };
    else {
      throw new InvalidArgumentError(
        `expected stop=decided (stop once no outcome of the samples left can change the winner) or stop=C, a number above 0.5 and below 1 such as 0.95, got ${quotedText(stopText, 40)}.`,
      );
    }
  }
  return { max, ...(min === undefined ? {} : { min }), ...(stop === undefined ? {} : { stop }) };
}

/** Whether `--samples` makes several replies vote: above 1, or adaptive (max is 2 or more). */
export const sampling = (samples: SamplesFlag): boolean => typeof samples !== 'number' || samples > 1;

/** The most replies an attempt gathers: K, or the adaptive form's max. */
export const mostSamples = (samples: SamplesFlag): number => (typeof samples === 'number' ? samples : samples.max);

/** `--samples` as it is written, for messages, records and the comparison of reruns: `5`, `max=5,min=2,stop=0.95`. */
export function samplesText(samples: SamplesFlag): string {
  if (typeof samples === 'number') return String(samples);
  const stop = samples.stop === undefined || samples.stop === 'decided' ? 'decided' : String(samples.stop.confidence);
  return `max=${samples.max}${samples.min === undefined ? '' : `,min=${samples.min}`},stop=${stop}`;
}

/** A sum of dollars above 0: `--max-cost-usd`, `--total-budget-usd`. */
export function dollars(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('expected a number of US dollars above 0, such as 0.05 (no $ sign).');
  return number;
}

/** `--price [MODEL=]IN,OUT`: US dollars per million input tokens and per million output tokens. */
export interface Price {
  /** The model it prices, as given to --model or --escalate-model; null: --model's. */
  readonly model: string | null;
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
}

export function priceFlag(value: string, previous: readonly Price[]): Price[] {
  const at = value.lastIndexOf('=');
  const model = at < 0 ? null : value.slice(0, at).trim();
  const numbers = (at < 0 ? value : value.slice(at + 1)).split(',');
  const [input, output] = numbers.map((n) => Number(n.trim()));
  const fits = (n: number | undefined) => n !== undefined && Number.isFinite(n) && n >= 0;
  if (model === '' || numbers.length !== 2 || numbers.some((n) => n.trim() === '') || !fits(input) || !fits(output)) {
    throw new InvalidArgumentError(
      'expected MODEL=IN,OUT (or IN,OUT for --model): US dollars per million input tokens and per million output tokens, such as gpt-4o-mini=0.15,0.60.',
    );
  }
  return [...previous, { model, inputPerMillion: input as number, outputPerMillion: output as number }];
}

/** A repeatable flag's values, in the order given. */
export const collect = (value: string, previous: readonly string[]): string[] => [...previous, value];

/** A whole number of calls or tokens, 1 or more: `--max-calls`, `--max-tokens`. */
export function budgetCount(value: string): number {
  const number = Number(value);
  if (value.trim() === '' || !Number.isSafeInteger(number) || number < 1) throw new InvalidArgumentError('expected a whole number, 1 or more.');
  return number;
}

/** The spend flags as Commander leaves them. */
export interface SpendFlags {
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKeyEnv?: string | undefined;
  readonly escalateModel?: readonly string[] | undefined;
  readonly escalateBaseUrl?: readonly string[] | undefined;
  readonly escalateApiKeyEnv?: readonly string[] | undefined;
  readonly maxCalls?: number | undefined;
  readonly maxTokens?: number | undefined;
  readonly maxCostUsd?: number | undefined;
  readonly price?: readonly Price[] | undefined;
  readonly temperature?: number | undefined;
  readonly sampleTemperature?: number | undefined;
  readonly seed?: number | undefined;
  /** `ask --stream`: each call streams its reply (server-sent events). */
  readonly stream?: boolean | undefined;
}

/** One model of the cascade: the first is `--model` at `--base-url`. */
export interface CascadeModel {
  /** As given to --model or --escalate-model: the request's `model`. */
  readonly model: string;
  readonly baseUrl: string;
  /** The endpoint's host and port, as a result line records it. */
  readonly host: string;
  /** The variable its key is read from; null: it is sent no key. */
  readonly apiKeyEnv: string | null;
  /** How results name it: the model, with `@host` when the cascade asks it at two endpoints. */
  readonly name: string;
  readonly price: Price | null;
}

/** A refusal of the spend flags, before any call: bad usage, exit 2. */
export class SpendFlagError extends Error {
  override readonly name = 'SpendFlagError';
}

/** Flags that apply to the first endpoint only, for messages. */
const NO_KEY = '-';

/**
 * The models asked, in order: `--model` at `--base-url`, then one per escalation.
 *
 * Pairing: each `--escalate-model` is a next model at `--base-url`; `--escalate-base-url`
 * alone makes each one `--model` at another endpoint (a fallback across providers); given
 * both, there is one `--escalate-base-url` per `--escalate-model`, the one at the same
 * position (an escalation on the first endpoint repeats `--base-url`). Keys: a model at
 * `--base-url`'s origin gets `--api-key-env`'s key; `--escalate-api-key-env VAR`, one per
 * `--escalate-base-url` at the same position (`-` for none), names the key of the endpoint at
 * its position; without it a model at another origin is sent no key: a key never goes to a
 * host it was not given for.
 */
export function cascadeOf(flags: SpendFlags): CascadeModel[] {
  const models = flags.escalateModel ?? [];
  const urls = flags.escalateBaseUrl ?? [];
  const keys = flags.escalateApiKeyEnv ?? [];
  if (models.length > 0 && urls.length > 0 && models.length !== urls.length) {
    throw new SpendFlagError(
      `give one --escalate-base-url per --escalate-model, in the same order (${models.length} --escalate-model, ${urls.length} --escalate-base-url): ` +
        'each --escalate-base-url is the endpoint of the --escalate-model at its position; repeat --base-url for an escalation on the first endpoint, or leave --escalate-base-url out to escalate at --base-url.',
    );
  }
  if (keys.length > 0 && keys.length !== urls.length) {
    throw new SpendFlagError(
      urls.length === 0
        ? 'option \'--escalate-api-key-env\' goes with --escalate-base-url: an escalation at --base-url is sent --api-key-env\'s key.'
        : `give one --escalate-api-key-env per --escalate-base-url, in the same order (${urls.length} --escalate-base-url, ${keys.length} --escalate-api-key-env); give - for an endpoint that takes no key.`,
    );
  }
  const steps = Math.max(models.length, urls.length);
  if (steps > MAX_ESCALATIONS) {
    throw new SpendFlagError(`the cascade has ${steps} escalations; at most ${MAX_ESCALATIONS} models may follow --model.`);
  }
  const first = readUrl('--base-url', flags.baseUrl);
  const escalations = Array.from({ length: steps }, (_, i) => {
    const baseUrl = urls[i] ?? flags.baseUrl;
    const url = urls[i] === undefined ? first : readUrl('--escalate-base-url', baseUrl);
    const key = keys[i];
    const apiKeyEnv = key !== undefined ? (key === NO_KEY ? null : key) : url.origin === first.origin ? (flags.apiKeyEnv ?? null) : null;
    return { model: models[i] ?? flags.model, baseUrl, url, apiKeyEnv };
  });
  const all = [{ model: flags.model, baseUrl: flags.baseUrl, url: first, apiKeyEnv: flags.apiKeyEnv ?? null }, ...escalations];
  const seen = new Map<string, number>();
  all.forEach((step, i) => {
    const key = `${step.model}\u0000${step.url.href}`;
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw new SpendFlagError(
        `the cascade asks ${quotedText(step.model, 80)} at ${step.url.host} twice (model ${earlier + 1} and model ${i + 1}): an escalation must be another model or another endpoint (--max-retries asks one model again).`,
      );
    }
    seen.set(key, i);
  });
  const prices = pricesOf(flags.price ?? [], flags.model, all.map((step) => step.model));
  const byName = new Map<string, number>();
  for (const step of all) byName.set(step.model, (byName.get(step.model) ?? 0) + 1);
  const named = all.map((step) => ((byName.get(step.model) ?? 0) > 1 ? `${step.model}@${step.url.host}` : step.model));
  const counts = new Map<string, number>();
  for (const name of named) counts.set(name, (counts.get(name) ?? 0) + 1);
  const tooLong = named.findIndex((name) => name.length > MAX_MODEL_NAME - ' #9'.length);
  if (tooLong >= 0) {
    throw new SpendFlagError(
      `the name of model ${tooLong + 1} of the cascade (${flagOf(tooLong)}) is ${named[tooLong]?.length} characters long; results name a model in at most ${MAX_MODEL_NAME - ' #9'.length} (with @host when the cascade asks it at two endpoints).`,
    );
  }
  return all.map((step, i) => ({
    model: step.model,
    baseUrl: step.baseUrl,
    host: step.url.host,
    apiKeyEnv: step.apiKeyEnv,
    // Two endpoints on one host (paths of one gateway): told apart by their place.
    name: (counts.get(named[i] as string) ?? 0) > 1 ? `${named[i]} #${i + 1}` : (named[i] as string),
    price: prices.get(step.model) ?? null,
  }));
}

/** How results may name a model at most (acheck's `modelName`). */
const MAX_MODEL_NAME = 200;

/** The flag that named the model at `index` of the cascade. */
const flagOf = (index: number) => (index === 0 ? '--model' : '--escalate-model');

function readUrl(flag: string, value: string): URL {
  let url: URL;
  try {
    url = readBaseURL(value);
  } catch (error) {
    throw new SpendFlagError(`option '${flag} <url>' is invalid: ${(error as Error).message}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new SpendFlagError(`option '${flag} <url>' is invalid: give it without a user name or password, and the key in an environment variable (--escalate-api-key-env).`);
  }
  return url;
}

/** Each model's price, by its name; a price for a model the command does not ask, or two for one, is refused. */
function pricesOf(prices: readonly Price[], first: string, models: readonly string[]): Map<string, Price> {
  const byModel = new Map<string, Price>();
  for (const price of prices) {
    const model = price.model ?? first;
    if (!models.includes(model)) {
      throw new SpendFlagError(
        `option '--price' names ${quotedText(model, 80)}, which this command does not ask (${models.map((m) => quotedText(m, 80)).join(', ')}): give the name as --model or --escalate-model has it.`,
      );
    }
    if (byModel.has(model)) throw new SpendFlagError(`option '--price' prices ${quotedText(model, 80)} twice: give each model one price.`);
    byModel.set(model, price);
  }
  return byModel;
}

/**
 * A cost budget (`--max-cost-usd`, `--total-budget-usd`) needs every model's price: this
 * endpoint reports tokens, not dollars, and a call of unknown cost stops the run (fails
 * closed). Refused before any call rather than found out at the first one.
 */
export function checkPriced(cascade: readonly CascadeModel[], flag: string): void {
  const missing = cascade.filter((step) => step.price === null);
  if (missing.length === 0) return;
  const names = [...new Set(missing.map((step) => step.model))];
  throw new SpendFlagError(
    `option '${flag}' needs the price of every model asked, to turn the tokens each call reports into dollars; give --price for ${names.map((n) => quotedText(n, 80)).join(', ')}, ` +
      `such as ${names.map((n) => `--price ${n === cascade[0]?.model ? '' : `${n}=`}0.15,0.60`).join(' ')} (US dollars per million input tokens, per million output tokens).`,
  );
}

/** The budget of each check, from the flags; undefined without one. */
export function budgetOf(flags: Pick<SpendFlags, 'maxCalls' | 'maxTokens' | 'maxCostUsd'>): { maxCalls?: number; maxTokens?: number; maxCostUsd?: number } | undefined {
  const budget = {
    ...(flags.maxCalls === undefined ? {} : { maxCalls: flags.maxCalls }),
    ...(flags.maxTokens === undefined ? {} : { maxTokens: flags.maxTokens }),
    ...(flags.maxCostUsd === undefined ? {} : { maxCostUsd: flags.maxCostUsd }),
  };
  return Object.keys(budget).length === 0 ? undefined : budget;
}

/** A budget as the messages say it: `--max-calls 3, --max-cost-usd 0.05`. */
export function budgetText(flags: Pick<SpendFlags, 'maxCalls' | 'maxTokens' | 'maxCostUsd'>): string {
  return [
    flags.maxCalls === undefined ? null : `--max-calls ${flags.maxCalls}`,
    flags.maxTokens === undefined ? null : `--max-tokens ${flags.maxTokens}`,
    flags.maxCostUsd === undefined ? null : `--max-cost-usd ${numberText(flags.maxCostUsd)}`,
  ]
    .filter((part) => part !== null)
    .join(', ');
}

/**
 * What the calls of a command spent, as they report it: a batch's `--total-budget-usd` reads
 * it before starting each question. `unknown` counts the calls that replied without
 * reporting usage: their cost is not known, so neither is the total.
 */
export class SpendMeter {
  costUsd = 0;
  /** Calls that returned a reply without reporting usage. */
  unknown = 0;
}

/**
 * `callFn` with its price: each usage it reports gets `costUsd` from the tokens (unless the
 * adapter reported a cost itself), and the meter adds what each call cost. A call that
 * throws is counted as nothing spent: a failed request reports no usage.
 */
export function priced(callFn: AsyncCallFn, price: Price | null, meter: SpendMeter | null): AsyncCallFn {
  if (price === null && meter === null) return callFn;
  return async (prompt: string, info: CallInfo) => {
    let reported = false;
    const reportUsage = (usage: UsageReport) => {
      reported = true;
      const costUsd =
        usage.costUsd !== undefined && usage.costUsd !== null
          ? usage.costUsd
          : price === null
            ? null
            : (usage.inputTokens * price.inputPerMillion + usage.outputTokens * price.outputPerMillion) / 1_000_000;
      if (meter !== null) {
        if (costUsd === null) meter.unknown += 1;
        else meter.costUsd += costUsd;
      }
      info.reportUsage?.(costUsd === null ? usage : { ...usage, costUsd });
    };
    const text = await callFn(prompt, { ...info, reportUsage });
    if (!reported && meter !== null) meter.unknown += 1;
    return text;
  };
}

/**
 * The callFns of the cascade: `callFn` (`--model`) and `escalate`, each named, priced and
 * metered; `modelName` names the first. The keys are read from the environment here: a
 * variable that is not set is bad usage naming it.
 */
export function cascadeCalls(flags: SpendFlags, cascade: readonly CascadeModel[], meter: SpendMeter | null) {
  const { temperature, sampleTemperature, seed } = flags;
  const stream = flags.stream === true;
  const calls = cascade.map((step) => {
    let apiKey: string | undefined;
    if (step.apiKeyEnv !== null) {
      apiKey = process.env[step.apiKeyEnv];
      if (!apiKey) throw new SpendFlagError(`$${step.apiKeyEnv} is not set`);
    }
    return priced(openAICompatible({ baseURL: step.baseUrl, model: step.model, apiKey, temperature, sampleTemperature, seed, ...(stream ? { stream } : {}) }), step.price, meter);
  });
  const [first, ...rest] = cascade;
  return {
    callFn: calls[0] as AsyncCallFn,
    modelName: (first as CascadeModel).name,
    // Without a cascade, none: acheck takes a list of one model or more.
    escalate: rest.length === 0 ? undefined : rest.map((step, i) => ({ call: calls[i + 1] as AsyncCallFn, name: step.name })),
  };
}
