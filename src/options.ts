import type { InspectionEvent, Observer } from 'xstate';
import { type AgreeFn, CONFIDENCE_SOURCES, type ConfidenceSource } from './agreement.js';
import type { Attempt, ModelAnswer } from './attempt.js';
import type { CallRetryPolicy } from './call-retries.js';
import type { CheckpointStore } from './checkpoints.js';
import { DEFAULT_EVIDENCE_THRESHOLD, DEFAULT_MAX_RETRIES, DEFAULT_THRESHOLD } from './constants.js';
import type { JsonValue } from './json-objects.js';
import { type AnswerSchema, type JsonSchema, readSchema } from './schema.js';
import { readTelemetry, rejectedCheck, type TelemetryOptions, type TelemetrySettings } from './telemetry.js';
import type { UsageReport } from './usage.js';
import type { Validator } from './validation.js';
import { blankRecord, describeValue, isAsyncFunction, isPlainObject } from './values.js';

/** What `callFn` learns about the call besides the prompt. */
export interface CallInfo {
  /** Index of the attempt, from 0. */
  readonly attempt: number;
  /** `acheck()` only, when the caller gave one: abort the request when it fires. */
  readonly signal?: AbortSignal;
  /**
   * The JSON Schema (draft 2020-12) of the reply Booth asks for: the envelope, with the
   * answer's schema inside when there is one. For a provider's structured output; the
   * adapters send it when asked to (`responseFormat: 'json_schema'`). Booth always gives
   * it; a callFn called by other code may not get it.
   */
  readonly replySchema?: JsonSchema;
  /** With `samples` above 1: which of the attempt's samples this call is, from 0; vary temperature or seed by it. */
  readonly sample?: number;
  /**
   * Tell Booth what this call consumed, usually straight from the provider's reply (the
   * adapters do): the attempt's and the result's `usage` add it up, failed calls included.
   * A report that is not whole, non-negative token counts throws a `TypeError`, which fails
   * the call. Booth always gives it; a callFn called by other code may not get it.
   */
  readonly reportUsage?: (usage: UsageReport) => void;
}

/** A synchronous model call for `check()`: prompt in, raw model text out. */
export type CallFn = (prompt: string, info: CallInfo) => string;
/** A model call for `acheck()`: returns the raw model text or a Promise of it. */
export type AsyncCallFn = (prompt: string, info: CallInfo) => string | PromiseLike<string>;

/** `T` is the answer's type: a string, or with a `schema` the schema's output. */
export interface CheckOptions<T = string> {
  /** Lowest self-reported confidence accepted, from 0 to 1. Default 0.7. */
  threshold?: number | undefined;
  /** Reconsiderations after the first attempt; at most `maxRetries + 1` calls. Default 1. */
  maxRetries?: number | undefined;
  /** Called with each finished attempt, before Booth decides what to do with it. Exceptions propagate. */
  onAttempt?: ((index: number, attempt: Attempt<T>) => void) | null | undefined;
  /**
   * A Standard Schema (zod 4, valibot 1, arktype 2…) for the answer: the model may then
   * answer with any JSON value, the schema's output becomes `result.answer`, and its
   * issues make a validation retry. Runs after the ambiguity gate, before `validator`.
   */
  schema?: AnswerSchema<T> | null | undefined;
  /** Judges each parsed, unambiguous answer (with a schema, its output); a failure triggers a retry however confident the model was. */
  validator?: Validator<T> | null | undefined;
  /**
   * Replies gathered per attempt, each from a call with the attempt's prompt: from 1 to 20,
   * default 1. Above 1 the samples vote, and the confidence comes from the vote
   * (`confidenceFrom`); each sample is a model call.
   */
  samples?: number | undefined;
  /**
   * When two sampled answers count as the same, as the model wrote them (with a schema, JSON
   * values). Default: equal after NFKC, trimming, case folding, collapsing whitespace and
   * dropping a trailing period; with a schema, equal JSON whatever the order of keys.
   */
  agree?: AgreeFn<ModelAnswer<T>> | null | undefined;
  /**
   * What the threshold judges when sampling: `'self'`, the mean self-reported confidence of
   * the winning answer's samples; `'agreement'`, the winning answer's share of the parsed
   * samples; `'hybrid'` (the default), the two multiplied.
   */
  confidenceFrom?: ConfidenceSource | undefined;
  /**
   * An XState inspection observer attached to the machine's actor: it sees every event,
   * snapshot and microstep of the run, e.g. `@statelyai/inspect`'s `inspector.inspect`.
   */
  inspect?: Inspector | null | undefined;
  /**
   * OpenTelemetry spans: `booth.check`, a `booth.attempt` per attempt and a `booth.sample` per
   * sample, with the states entered as events and the usage reported. `true` uses the global
   * tracer; needs the optional peer `@opentelemetry/api`. Off by default, and then nothing is loaded.
   */
  telemetry?: boolean | TelemetryOptions | null | undefined;
}

/** What XState's `createActor(…, { inspect })` accepts. */
export type Inspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** `check()`'s options with a schema whose output is `T`: name it to build the options apart from the call. */
export type TypedCheckOptions<T> = Omit<CheckOptions<T>, 'agree'> & { readonly schema: AnswerSchema<T>; agree?: TypedAgree };
/** `acheck()`'s options with a schema whose output is `T`. */
export type TypedAsyncCheckOptions<T> = Omit<AsyncCheckOptions<T>, 'agree'> & { readonly schema: AnswerSchema<T>; agree?: TypedAgree };
/** With a schema `agree` compares the model's own values, before the schema: any JSON, whatever the schema's output. */
type TypedAgree = AgreeFn<JsonValue> | null | undefined;

export interface AsyncCheckOptions<T = string> extends Omit<CheckOptions<T>, 'onAttempt'> {
  /** Like `check()`'s, and awaited when it returns a Promise. */
  onAttempt?: ((index: number, attempt: Attempt<T>) => void | PromiseLike<unknown>) | null | undefined;
  /** Aborting rejects `acheck()` with `signal.reason` at once, stops any wait, and makes no further call. */
  signal?: AbortSignal | null | undefined;
  /** A call that takes longer fails as timed out (and its signal aborts); the run goes on as for any failed call. */
  timeoutMs?: number | null | undefined;
  /** When this many ms have passed, no new call starts and the result is UNCERTAIN with the attempts so far. */
  deadlineMs?: number | null | undefined;
  /** Retry failed calls (not bad answers) with jittered exponential backoff; every try is in `attempt.callTries`. */
  callRetries?: CallRetryPolicy | null | undefined;
  /** Where to save the run after each attempt, so that an `acheck()` with the same `key` resumes it. */
  checkpoint?: CheckpointStore | null | undefined;
  /** Names the run in `checkpoint`. */
  key?: string | null | undefined;
  /** Sample calls in flight at once; default all of them. */
  sampleConcurrency?: number | undefined;
}

export interface EvidenceOptions {
  /** Lowest agreement score accepted, from 0 to 1. Default 0.7. */
  evidenceThreshold?: number | undefined;
  /** An OpenTelemetry span for the check (needs `@opentelemetry/api`); see `check()`'s. */
  telemetry?: boolean | TelemetryOptions | null | undefined;
}

export interface CheckSettings {
  readonly threshold: number;
  readonly maxRetries: number;
  readonly onAttempt: ((index: number, attempt: Attempt<unknown>) => unknown) | null;
  readonly validator: ((answer: unknown) => unknown) | null;
  readonly schema: AnswerSchema | null;
  readonly signal: AbortSignal | null;
  readonly inspect: Inspector | null;
  readonly timeoutMs: number | null;
  readonly deadlineMs: number | null;
  readonly callRetries: CallRetryPolicy | null;
  readonly checkpoint: { readonly store: CheckpointStore; readonly key: string } | null;
  readonly samples: number;
  readonly sampleConcurrency: number;
  readonly agree: AgreeFn<unknown> | null;
  readonly confidenceFrom: ConfidenceSource;
  readonly telemetry: TelemetrySettings | null;
}

type Entry = 'check' | 'acheck';

const CHECK_KEYS = ['threshold', 'maxRetries', 'onAttempt', 'schema', 'validator', 'samples', 'agree', 'confidenceFrom', 'inspect', 'telemetry'] as const;
const ASYNC_ONLY_KEYS = ['signal', 'timeoutMs', 'deadlineMs', 'callRetries', 'checkpoint', 'key', 'sampleConcurrency'] as const;
const ACHECK_KEYS = [...CHECK_KEYS, ...ASYNC_ONLY_KEYS] as const;
const EVIDENCE_KEYS = ['evidenceThreshold', 'telemetry'] as const;

/** Checks the arguments of `check()` / `acheck()` in the documented order, reading each option once. */
export function readCheckArguments(entry: Entry, callFn: unknown, prompt: unknown, options: unknown): CheckSettings {
  if (typeof callFn === 'string' && typeof prompt === 'function') {
    throw new TypeError(
      `${entry}() takes (callFn, prompt, options), but got a string first and a function second; the arguments look swapped: write ${entry}(callFn, prompt).`,
    );
  }
  readPrompt(prompt);
  if (typeof callFn !== 'function') {
    throw new TypeError(
      `Expected \`callFn\` to be a function (prompt, info) => ${entry === 'check' ? 'string' : 'string or Promise<string>'}, got ${describeValue(callFn)}.`,
    );
  }
  if (entry === 'check' && isAsyncFunction(callFn)) {
    throw new TypeError('check() is synchronous, but `callFn` is an async function; use acheck() for async model calls.');
  }
  const given = readShape(options, entry === 'check' ? CHECK_KEYS : ACHECK_KEYS, '`options`', entry);
  // Read first, so that a check whose other options are wrong still leaves a span saying so.
  const telemetry = readTelemetry(given['telemetry']);
  try {
    return readCheckOptions(entry, given, telemetry);
  } catch (error) {
    if (telemetry) rejectedCheck(telemetry, entry, error);
    throw error;
  }
}

function readCheckOptions(entry: Entry, given: Record<string, unknown>, telemetry: TelemetrySettings | null): CheckSettings {
  const threshold = unitInterval('threshold', given['threshold'], DEFAULT_THRESHOLD);
  const maxRetries = retries(given['maxRetries']);
  const onAttempt = optionalFunction('onAttempt', given['onAttempt']);
  if (entry === 'check' && isAsyncFunction(onAttempt)) {
    throw new TypeError(
      'check() is synchronous, but `onAttempt` is an async function; make it synchronous or use acheck().',
    );
  }
  const schema = readSchema(given['schema']);
  const validator = optionalFunction('validator', given['validator']);
  if (isAsyncFunction(validator)) {
    throw new TypeError(
      'Expected `validator` to be a synchronous function, got an async function; return true, false or [boolean, message] directly.',
    );
  }
  const sampling = samplingOptions(given);
  const inspect = inspector(given['inspect']);
  const signal = abortSignal(given['signal']);
  const { timeoutMs, deadlineMs, callRetries } = timers(given);
  const checkpoint = checkpointOption(given['checkpoint'], given['key']);
  const { samples, agree, confidenceFrom } = sampling;
  // check() calls its samples one after another.
  const sampleConcurrency = entry === 'check' ? 1 : concurrency(given['sampleConcurrency'], samples);
  // Field by field, in the order the options are checked: every check builds this, and V8
  // builds an object literal with spreads several times slower.
  return {
    threshold,
    maxRetries,
    onAttempt,
    schema,
    validator,
    inspect,
    signal,
    timeoutMs,
    deadlineMs,
    callRetries,
    checkpoint,
    samples,
    agree,
    confidenceFrom,
    sampleConcurrency,
    telemetry,
  };
}

/** More samples than this is a survey, not a check: each is a paid model call per attempt. */
export const MAX_SAMPLES = 20;

/** `samples`, `agree` and `confidenceFrom`, as `check()`, `acheck()` and the machine read them. */
function samplingOptions(given: Record<string, unknown>) {
  const value = given['samples'];
  let samples = 1;
  if (value !== undefined) {
    if (!isWholeNumber(value)) {
      throw new TypeError(`Expected \`samples\` to be a whole number from 1 to ${MAX_SAMPLES}, such as 5, got ${describeValue(value)}.`);
    }
    if (value < 1 || value > MAX_SAMPLES) {
      throw new RangeError(
        `Expected \`samples\` to be from 1 to ${MAX_SAMPLES}, got ${describeValue(value)}; each sample is a model call per attempt, so 3 to 10 is usual.`,
      );
    }
    samples = value;
  }
  const agree = optionalFunction('agree', given['agree']);
  if (isAsyncFunction(agree)) {
    throw new TypeError('Expected `agree` to be a synchronous function (a, b) => boolean, got an async function.');
  }
  const source = given['confidenceFrom'];
  if (source !== undefined && !(CONFIDENCE_SOURCES as readonly unknown[]).includes(source)) {
    throw new TypeError(`Expected \`confidenceFrom\` to be 'self', 'agreement' or 'hybrid', got ${describeValue(source)}.`);
  }
  if (samples === 1 && source !== undefined && source !== 'self') {
    throw new RangeError(
      `\`confidenceFrom: '${String(source)}'\` needs several samples to vote, but \`samples\` is 1; set \`samples\` to 2 or more (5 is common), or leave \`confidenceFrom\` out.`,
    );
  }
  const confidenceFrom = (source ?? (samples > 1 ? 'hybrid' : 'self')) as ConfidenceSource;
  return { samples, agree: agree as AgreeFn<unknown> | null, confidenceFrom };
}

function concurrency(value: unknown, samples: number): number {
  if (value === undefined) return samples;
  if (!isWholeNumber(value) || value < 1) {
    throw new TypeError(`Expected \`sampleConcurrency\` to be a whole number, 1 or more, got ${describeValue(value)}.`);
  }
  return value;
}

/** What the checkpoint machine's input may hold, checked as `check()` checks its options. */
export interface MachineInput {
  readonly prompt: string;
  readonly threshold: number;
  readonly maxRetries: number;
  readonly effects: 'actors' | 'events';
  readonly model: ((...args: never[]) => unknown) | null;
  /** A validator function, or `true` when a provided `validate` actor judges; null for none. */
  readonly validator: ((...args: never[]) => unknown) | true | null;
  readonly schema: AnswerSchema | null;
  readonly timeoutMs: number | null;
  readonly deadlineMs: number | null;
  readonly callRetries: CallRetryPolicy | null;
  readonly samples: number;
  readonly sampleConcurrency: number;
  readonly agree: AgreeFn<unknown> | null;
  readonly confidenceFrom: ConfidenceSource;
}

const MACHINE_KEYS = [
  'prompt',
  'threshold',
  'maxRetries',
  'effects',
  'model',
  'schema',
  'validator',
  'timeoutMs',
  'deadlineMs',
  'callRetries',
  'samples',
  'sampleConcurrency',
  'agree',
  'confidenceFrom',
] as const;

/**
 * The checkpoint machine's input, with the checks and messages of `check()`: a workflow
 * that invokes the machine with a bad input gets the same `TypeError` or `RangeError` in
 * its `onError`, before anything runs.
 */
export function readMachineInput(input: unknown): MachineInput {
  if (!isPlainObject(input)) {
    throw new TypeError(
      `Expected the checkpoint machine's \`input\` to be a plain object such as { prompt: 'Which year…?' }, got ${describeValue(input)}.`,
    );
  }
  const given = readShape(input, MACHINE_KEYS, 'the checkpoint machine\'s `input`');
  const prompt = readPrompt(given['prompt']);
  const threshold = unitInterval('threshold', given['threshold'], DEFAULT_THRESHOLD);
  const maxRetries = retries(given['maxRetries']);
  const effects = given['effects'] ?? 'actors';
  if (effects !== 'actors' && effects !== 'events') {
    throw new TypeError(
      `Expected \`effects\` to be 'actors' (the machine calls the model) or 'events' (you send it the replies), got ${describeValue(effects)}.`,
    );
  }
  const model = optionalFunction('model', given['model']);
  const schema = readSchema(given['schema']);
  const validator = given['validator'] === true ? true : optionalFunction('validator', given['validator'] === false ? null : given['validator']);
  const sampling = samplingOptions(given);
  const sampleConcurrency = concurrency(given['sampleConcurrency'], effects === 'actors' ? 1 : sampling.samples);
  if (effects === 'actors' && sampleConcurrency > 1) {
    throw new RangeError(
      `Expected \`sampleConcurrency\` to be 1 in a workflow, got ${describeValue(sampleConcurrency)}: the machine calls its samples one after another through its one \`callModel\` child; use effects: 'events' to run them concurrently.`,
    );
  }
  return { prompt, threshold, maxRetries, effects, model, schema, validator, ...timers(given), ...sampling, sampleConcurrency };
}

function readPrompt(prompt: unknown): string {
  if (typeof prompt !== 'string') {
    throw new TypeError(`Expected \`prompt\` to be a string, got ${describeValue(prompt)}.`);
  }
  return prompt;
}

/** The options that are states of the machine: timers and call retries. */
function timers(given: Record<string, unknown>) {
  return {
    timeoutMs: duration('timeoutMs', given['timeoutMs']),
    deadlineMs: duration('deadlineMs', given['deadlineMs']),
    callRetries: callRetryPolicy(given['callRetries']),
  };
}

/** Checks the options of `checkWithEvidence()`: shape first, then the threshold. */
export function readEvidenceOptions(options: unknown): { readonly evidenceThreshold: number; readonly telemetry: TelemetrySettings | null } {
  const given = readShape(options, EVIDENCE_KEYS, '`options`', 'checkWithEvidence');
  const telemetry = readTelemetry(given['telemetry']);
  try {
    return { evidenceThreshold: unitInterval('evidenceThreshold', given['evidenceThreshold'], DEFAULT_EVIDENCE_THRESHOLD), telemetry };
  } catch (error) {
    if (telemetry) rejectedCheck(telemetry, 'checkWithEvidence', error);
    throw error;
  }
}

/**
 * The options object as a map of its keys, each read once; a key set to undefined reads
 * as absent. Unknown keys fail whatever their value, since a misspelt option silently
 * ignored is a bug the caller cannot see. `entry` names the function whose options these
 * are; without it, unknown keys are reported against `label`.
 */
export function readShape(options: unknown, known: readonly string[], label: string, entry?: string): Record<string, unknown> {
  // A blank record: an option a caller did not give reads undefined, whatever Object.prototype holds.
  if (options === undefined || options === null) return blankRecord();
  if (!isPlainObject(options)) {
    throw new TypeError(`Expected ${label} to be a plain object, got ${describeValue(options)}.`);
  }
  const given = blankRecord<unknown>();
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(unknownOptionMessage(key, known, label, entry));
    given[key] = (options as Record<string, unknown>)[key];
  }
  return given;
}

function unknownOptionMessage(key: string, known: readonly string[], label: string, entry: string | undefined): string {
  const where = entry === undefined ? label : `${entry}()`;
  if (entry === 'check' && key === 'sampleConcurrency') {
    return 'Unknown option `sampleConcurrency` for check(): a synchronous check calls its samples one after another; use acheck() to call them concurrently.';
  }
  if (entry === 'check' && (ASYNC_ONLY_KEYS as readonly string[]).includes(key)) {
    return `Unknown option \`${key}\` for check(): a synchronous check cannot wait, time out or be resumed; use acheck(), which accepts \`${key}\`.`;
  }
  const suggestion = closest(key, known);
  if (suggestion) return `Unknown option \`${key}\` for ${where}; did you mean \`${suggestion}\`?`;
  return `Unknown option \`${key}\` for ${where}; the options are ${known.map((name) => `\`${name}\``).join(', ')}.`;
}

/**
 * The known name a misspelt key most likely meant: compared without case, `_` or `-`
 * (so `max_retries` is `maxRetries`), within an edit distance of two, or of 40 % of the
 * name for long names (`thresh` → `threshold`, `maxRetry` → `maxRetries`).
 */
function closest(key: string, known: readonly string[]): string | undefined {
  // Stryker disable next-line MethodExpression: folding both names to upper case instead gives the same distances
  const fold = (name: string) => name.replace(/[_-]/g, '').toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const distance = editDistance(fold(key), fold(name));
    if (distance <= Math.max(2, Math.floor(name.length * 0.4)) && distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance: insertions, deletions and substitutions each cost one. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}


function unitInterval(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number') {
    throw new TypeError(`Expected \`${name}\` to be a number from 0 to 1, got ${describeValue(value)}.`);
  }
  if (!(value >= 0 && value <= 1)) {
    throw new RangeError(`Expected \`${name}\` to be from 0 to 1, got ${describeValue(value)}.`);
  }
  return value;
}

/** More reconsiderations than this is a loop, not a check: each one is a paid model call. */
export const MAX_RETRIES_LIMIT = 100;

function retries(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_RETRIES;
  if (!isWholeNumber(value)) {
    throw new TypeError(`Expected \`maxRetries\` to be a whole number such as 0, 1 or 2, got ${describeValue(value)}.`);
  }
  if (value < 0) throw new RangeError(`Expected \`maxRetries\` to be 0 or more, got ${describeValue(value)}.`);
  if (value > MAX_RETRIES_LIMIT) {
    throw new RangeError(
      `Expected \`maxRetries\` to be at most ${MAX_RETRIES_LIMIT}, got ${describeValue(value)}; each retry is a model call, so a handful is usually right.`,
    );
  }
  return value;
}

function isWholeNumber(value: unknown): value is number {
  return Number.isInteger(value);
}

function optionalFunction(name: string, value: unknown): ((...args: unknown[]) => unknown) | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'function') {
    throw new TypeError(`Expected \`${name}\` to be a function, null or undefined, got ${describeValue(value)}.`);
  }
  return value as (...args: unknown[]) => unknown;
}

function inspector(value: unknown): Inspector | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'function') return value as Inspector;
  const observer = value as Partial<Record<'next' | 'error' | 'complete', unknown>>;
  if (['next', 'error', 'complete'].some((key) => typeof observer[key as 'next'] === 'function')) {
    return value as Inspector;
  }
  throw new TypeError(
    `Expected \`inspect\` to be an inspection callback or observer ({ next(event) {…} }), got ${describeValue(value)}.`,
  );
}

function duration(name: string, value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number') {
    throw new TypeError(`Expected \`${name}\` to be a number of milliseconds, got ${describeValue(value)}.`);
  }
  if (!(value > 0 && value <= MAX_TIMER_MS)) {
    throw new RangeError(`Expected \`${name}\` to be more than 0 and at most ${MAX_TIMER_MS} ms, got ${describeValue(value)}.`);
  }
  return value;
}

/** Node's timers cannot wait longer. */
const MAX_TIMER_MS = 2 ** 31 - 2;

const RETRY_KEYS = ['retries', 'minDelayMs', 'maxDelayMs', 'factor'] as const;

function callRetryPolicy(value: unknown): CallRetryPolicy | null {
  if (value === undefined || value === null) return null;
  const given = readShape(value, RETRY_KEYS, '`callRetries`');
  const retries = given['retries'];
  if (!isWholeNumber(retries) || retries < 0) {
    throw new TypeError(`Expected \`callRetries.retries\` to be a whole number, 0 or more, got ${describeValue(retries)}.`);
  }
  const policy: { -readonly [K in keyof CallRetryPolicy]: CallRetryPolicy[K] } = { retries };
  for (const name of ['minDelayMs', 'maxDelayMs', 'factor'] as const) {
    const setting = given[name];
    if (setting === undefined) continue;
    if (!isFiniteNumber(setting) || setting < (name === 'factor' ? 1 : 0)) {
      throw new TypeError(
        `Expected \`callRetries.${name}\` to be a number ${name === 'factor' ? 'of at least 1' : 'of ms, 0 or more'}, got ${describeValue(setting)}.`,
      );
    }
    policy[name] = setting;
  }
  return policy;
}

function isFiniteNumber(value: unknown): value is number {
  return Number.isFinite(value);
}

function checkpointOption(store: unknown, key: unknown): CheckSettings['checkpoint'] {
  if ((store === undefined || store === null) && (key === undefined || key === null)) return null;
  const methods = ['load', 'save', 'delete'] as const;
  if (typeof store !== 'object' || store === null || methods.some((m) => typeof (store as Record<string, unknown>)[m] !== 'function')) {
    throw new TypeError(
      `Expected \`checkpoint\` to be a store with load(key), save(key, checkpoint) and delete(key), such as memoryStore() or fileStore(dir), got ${describeValue(store)}.`,
    );
  }
  if (typeof key !== 'string' || key === '') {
    throw new TypeError(`Expected \`key\` to be a non-empty string naming the run in \`checkpoint\`, got ${describeValue(key)}.`);
  }
  return { store: store as CheckpointStore, key };
}

function abortSignal(value: unknown): AbortSignal | null {
  if (value === undefined || value === null) return null;
  if (!(value instanceof AbortSignal)) {
    throw new TypeError(
      `Expected \`signal\` to be an AbortSignal (for example AbortSignal.timeout(5000)), got ${describeValue(value)}.`,
    );
  }
  return value;
}
