import { type AgreeFn, CONFIDENCE_SOURCES, type ConfidenceSource, confidenceSourceFor } from '../decide/agreement.js';
import type { CallRetryPolicy } from '../decide/call-retries.js';
import { DEFAULT_MAX_CLARIFICATIONS, DEFAULT_MAX_RETRIES } from '../decide/constants.js';
import type { ChatTurn } from '../decide/prompts.js';
import type { ParseFn } from '../reply/parse.js';
import type { Budget } from '../decide/budget.js';
import { NO_VOTES, nextWave, type SamplePlan, type SampleStop } from '../decide/sampling.js';
import { blankRecord, describeValue, isAsyncFunction, isPlainObject } from '../util/values.js';

/**
 * The option readers every entry shares (`check()`, `acheck()`, the machine's input, the
 * stores): each reads one value and names the option, the value and the fix when it is wrong.
 */

/** `acheck()`'s options that `check()` refuses, named so that its message can say why. */
export const ASYNC_ONLY_KEYS = ['signal', 'timeoutMs', 'deadlineMs', 'callRetries', 'checkpoint', 'key', 'sampleConcurrency', 'awaitClarification', 'clarification', 'maxClarifications', 'onPartial'] as const;

/** More samples than this is a survey, not a check: each is a paid model call per attempt. */
export const MAX_SAMPLES = 20;

/** `samples` of one sample per attempt, the default. */
const ONE_SAMPLE: SamplePlan = Object.freeze({ max: 1, min: 1, stop: null });

/**
 * `samples` (or an escalation's, named `name`): a count, every sample asked as always, or
 * `{ max, min?, stop? }`, asked in waves until the vote is settled.
 */
export function samplePlan(value: unknown, name = 'samples'): SamplePlan {
  if (value === undefined) return ONE_SAMPLE;
  if (isPlainObject(value)) return adaptivePlan(value, name);
  if (!isWholeNumber(value)) {
    throw new TypeError(`Expected \`${name}\` to be a whole number from 1 to ${MAX_SAMPLES}, such as 5, or { max: 5 } to stop once the vote is settled, got ${describeValue(value)}.`);
  }
  if (value < 1 || value > MAX_SAMPLES) {
    throw new RangeError(
      `Expected \`${name}\` to be from 1 to ${MAX_SAMPLES}, got ${describeValue(value)}; each sample is a model call per attempt, so 3 to 10 is usual.`,
    );
  }
  return value === 1 ? ONE_SAMPLE : Object.freeze({ max: value, min: value, stop: null });
}

function adaptivePlan(value: object, name: string): SamplePlan {
  const given = readShape(value, ['max', 'min', 'stop'], `\`${name}\``);
  const max = given['max'];
  if (!isWholeNumber(max) || max < 2 || max > MAX_SAMPLES) {
    throw new (typeof max === 'number' ? RangeError : TypeError)(`Expected \`${name}.max\` to be a whole number from 2 to ${MAX_SAMPLES}, the most samples an attempt may ask, got ${describeValue(max)}.`);
  }
  const stop = given['stop'] ?? 'decided';
  if (stop !== 'decided') {
    const confidence = isPlainObject(stop) && Object.keys(stop).length === 1 ? (stop as { confidence?: unknown }).confidence : undefined;
    if (typeof confidence !== 'number' || !(confidence > 0.5 && confidence < 1)) {
      throw new TypeError(
        `Expected \`${name}.stop\` to be 'decided' (stop when no remaining sample could change the winner) or { confidence } above 0.5 and below 1, such as { confidence: 0.95 }, got ${describeValue(stop)}.`,
      );
    }
  }
  const rule = stop as SampleStop;
  const min = given['min'] ?? Math.min(max, nextWave(NO_VOTES, max, rule));
  if (!isWholeNumber(min) || min < 1 || min > max) {
    throw new (typeof min === 'number' ? RangeError : TypeError)(`Expected \`${name}.min\` to be a whole number from 1 to ${max} (\`${name}.max\`), the samples of the first wave, got ${describeValue(min)}.`);
  }
  return Object.freeze({ max, min, stop: rule });
}

/**
 * `samples`, `agree` and `confidenceFrom`, as `check()`, `acheck()` and the machine read them.
 * `escalate` (read) may give a model of the cascade samples of its own: its vote is judged as
 * any vote is, so `confidenceFrom` defaults as for the most samples any model asks.
 */
export function samplingOptions(given: Record<string, unknown>, escalate: readonly Escalation<unknown>[] = []) {
  const plan = samplePlan(given['samples']);
  const samples = widestPlan(plan.max, escalate);
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
  const confidenceFrom = confidenceSourceFor(samples, source as ConfidenceSource | undefined);
  return { samples: plan.max, plan, agree: agree as AgreeFn<unknown> | null, confidenceFrom };
}

/** More models than this is a survey too: each may make every attempt of a run again. */
export const MAX_ESCALATIONS = 8;

/** A model of a cascade once read: its name (null when not given), its function, its own samples (null: the run's). */
export interface Escalation<TFn> {
  readonly name: string | null;
  readonly call: TFn;
  readonly samples: SamplePlan | null;
}

/**
 * `escalate`: the models asked in turn when one ends UNCERTAIN, each a function or
 * `{ [key]: fn, name?, samples? }`. `key` is `call` for check() and acheck(), `model` for the
 * machine's input, where a workflow may leave it out and route by the call's `stage`.
 */
export function escalateOption(value: unknown, key: 'call' | 'model', sync: boolean): readonly Escalation<((...args: never[]) => unknown) | null>[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ESCALATIONS) {
    const got = Array.isArray(value) ? (value.length === 0 ? 'an empty list' : `a list of ${value.length}`) : describeValue(value);
    throw new (Array.isArray(value) ? RangeError : TypeError)(
      `Expected \`escalate\` to be a list of 1 to ${MAX_ESCALATIONS} models to ask in turn, each a function or { ${key}, name?, samples? }, got ${got}.`,
    );
  }
  return Object.freeze(
    value.map((entry: unknown, i) => {
      const where = `escalate[${i}]`;
      if (typeof entry !== 'function' && !isPlainObject(entry)) {
        throw new TypeError(`Expected \`${where}\` to be the model's function (prompt, info) => text, or { ${key}, name?, samples? }, got ${describeValue(entry)}.`);
      }
      const given = typeof entry === 'function' ? { [key]: entry } : readShape(entry, [key, 'name', 'samples'], `\`${where}\``);
      const fn = given[key];
      if (fn === undefined && key === 'model') return Object.freeze({ name: modelNameOption(given['name'], `${where}.name`), call: null, samples: escalationSamples(given['samples'], where) });
      if (typeof fn !== 'function') throw new TypeError(`Expected \`${where}.${key}\` to be the model's function (prompt, info) => text, got ${describeValue(fn)}.`);
      if (sync && isAsyncFunction(fn)) {
        throw new TypeError(`Expected \`${where}\` to be a synchronous function: check() is synchronous; use acheck() to escalate to async models.`);
      }
      return Object.freeze({ name: modelNameOption(given['name'], `${where}.name`), call: fn as (...args: never[]) => unknown, samples: escalationSamples(given['samples'], where) });
    }),
  );
}

const escalationSamples = (value: unknown, where: string) => (value === undefined ? null : samplePlan(value, `${where}.samples`));

/** A model's name, as attempts and pages show it: short text, never blank. */
export function modelNameOption(value: unknown, name = 'modelName'): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.trim() === '' || value.length > 200) {
    throw new TypeError(`Expected \`${name}\` to be the model's name, a non-blank string of at most 200 characters such as 'gpt-4o-mini', got ${describeValue(value)}.`);
  }
  return value;
}

/** `budget`: any of `maxCalls`, `maxTokens` and `maxCostUsd`. */
export function budgetOption(value: unknown): Budget | null {
  if (value === undefined || value === null) return null;
  const given = readShape(value, ['maxCalls', 'maxTokens', 'maxCostUsd'], '`budget`');
  const count = (name: 'maxCalls' | 'maxTokens') => {
    const limit = given[name];
    if (limit === undefined) return null;
    const example = name === 'maxCalls' ? 10 : 20_000;
    if (!isWholeNumber(limit) || limit < 1) {
      throw new (typeof limit === 'number' ? RangeError : TypeError)(`Expected \`budget.${name}\` to be a whole number, 1 or more, such as ${example}, got ${describeValue(limit)}.`);
    }
    return limit;
  };
  const maxCalls = count('maxCalls');
  const maxTokens = count('maxTokens');
  const cost = given['maxCostUsd'];
  if (cost !== undefined && !(typeof cost === 'number' && Number.isFinite(cost) && cost > 0)) {
    throw new (typeof cost === 'number' ? RangeError : TypeError)(`Expected \`budget.maxCostUsd\` to be a number of dollars above 0, such as 0.05, got ${describeValue(cost)}.`);
  }
  const maxCostUsd = (cost as number | undefined) ?? null;
  if (maxCalls === null && maxTokens === null && maxCostUsd === null) {
    throw new TypeError('Expected `budget` to set `maxCalls`, `maxTokens` or `maxCostUsd`, got an empty object; leave `budget` out for no limit.');
  }
  return Object.freeze({ maxCalls, maxTokens, maxCostUsd });
}

/**
 * The models a run asks, in order: the caller's first, then the escalations, each with its
 * samples. In a cascade a model with no name is named by its place (`model 2`): attempts,
 * pages and spans then always say which made what.
 */
export function modelStages<TFn>(modelName: string | null, plan: SamplePlan, escalate: readonly Escalation<TFn>[]) {
  const named = escalate.length > 0;
  return [
    { name: modelName ?? (named ? 'model 1' : null), samples: plan, call: null },
    ...escalate.map((step, i) => ({ name: step.name ?? `model ${i + 2}`, samples: step.samples ?? plan, call: step.call })),
  ];
}

/**
 * Fails unless every model of a cascade has its own name (`modelName`, each `escalate[i].name`,
 * or `model N` by its place): attempts, `result.models` and a resumed run tell models apart
 * only by name.
 */
export function distinctModelNames(modelName: string | null, escalate: readonly Escalation<unknown>[]): void {
  if (escalate.length === 0) return;
  const stages = modelStages(modelName, ONE_SAMPLE, escalate);
  const option = (i: number) => (i === 0 ? (modelName === null ? '`callFn` (model 1)' : '`modelName`') : escalate[i - 1]!.name === null ? `\`escalate[${i - 1}]\` (model ${i + 1})` : `\`escalate[${i - 1}].name\``);
  stages.forEach((stage, i) => {
    const first = stages.findIndex((other) => other.name === stage.name);
    if (first < i) {
      throw new TypeError(
        `Expected each model of \`escalate\` to have a name of its own, got ${option(i)} named as ${option(first)}: attempts and \`result.models\` tell models apart by name, so name them apart.`,
      );
    }
  });
}

/** The most samples any model of the run asks at once: sample calls run this many at a time unless told otherwise. */
export function widestPlan(samples: number, escalate: readonly Escalation<unknown>[]): number {
  return Math.max(samples, ...escalate.map((step) => step.samples?.max ?? 0));
}

export function concurrency(value: unknown, samples: number): number {
  if (value === undefined) return samples;
  if (!isWholeNumber(value) || value < 1) {
    throw new TypeError(`Expected \`sampleConcurrency\` to be a whole number, 1 or more, got ${describeValue(value)}.`);
  }
  return value;
}

export function readPrompt(prompt: unknown): string {
  if (typeof prompt !== 'string') {
    throw new TypeError(`Expected \`prompt\` to be a string, got ${describeValue(prompt)}.`);
  }
  return prompt;
}

/** The options that are states of the machine: timers and call retries. */
export function timers(given: Record<string, unknown>) {
  return {
    timeoutMs: duration('timeoutMs', given['timeoutMs']),
    deadlineMs: duration('deadlineMs', given['deadlineMs']),
    callRetries: callRetryPolicy(given['callRetries']),
  };
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

export function unitInterval(name: string, value: unknown, fallback: number): number {
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

export function retries(value: unknown): number {
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

/** More clarifications than this is an interview, not a question: each is a person's turn and a new round of calls. */
export const MAX_CLARIFICATIONS_LIMIT = 10;

/** `awaitClarification` and `maxClarifications`, as `acheck()`, `clarify()` and the machine read them. */
export function clarificationOptions(given: Record<string, unknown>): { readonly awaitClarification: boolean; readonly maxClarifications: number } {
  const awaiting = given['awaitClarification'] ?? false;
  if (typeof awaiting !== 'boolean') {
    throw new TypeError(`Expected \`awaitClarification\` to be true or false, got ${describeValue(awaiting)}.`);
  }
  const value = given['maxClarifications'];
  if (value !== undefined && !isWholeNumber(value)) {
    throw new TypeError(`Expected \`maxClarifications\` to be a whole number such as 1 or 2, got ${describeValue(value)}.`);
  }
  if (value !== undefined && (value < 0 || value > MAX_CLARIFICATIONS_LIMIT)) {
    throw new RangeError(`Expected \`maxClarifications\` to be from 0 to ${MAX_CLARIFICATIONS_LIMIT}, got ${describeValue(value)}; each clarification is a person's turn and a new round of calls.`);
  }
  return { awaitClarification: awaiting, maxClarifications: value ?? DEFAULT_MAX_CLARIFICATIONS };
}

function isWholeNumber(value: unknown): value is number {
  return Number.isInteger(value);
}

export function optionalFunction(name: string, value: unknown): ((...args: unknown[]) => unknown) | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'function') {
    throw new TypeError(`Expected \`${name}\` to be a function, null or undefined, got ${describeValue(value)}.`);
  }
  return value as (...args: unknown[]) => unknown;
}

export function duration(name: string, value: unknown): number | null {
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
  // The cap would silently win over the first wait: every wait would be maxDelayMs.
  if (policy.minDelayMs !== undefined && policy.maxDelayMs !== undefined && policy.minDelayMs > policy.maxDelayMs) {
    throw new RangeError(
      `Expected \`callRetries.minDelayMs\` (${policy.minDelayMs}) to be at most \`callRetries.maxDelayMs\` (${policy.maxDelayMs}): the first wait cannot be longer than the longest. Lower minDelayMs or raise maxDelayMs.`,
    );
  }
  return policy;
}

function isFiniteNumber(value: unknown): value is number {
  return Number.isFinite(value);
}

/** How long a conversation a check may carry: beyond this, history belongs in a summary, not in every paid call. */
export const MAX_HISTORY = 1_000;

/**
 * `system`, `messages`, `instructions` and `parseFn`, as `check()`, `acheck()` and the
 * machine read them. `defaults` is Booth's instruction text for the run's answer format: an
 * `instructions` function is called with it once, here, so a bad result fails before any call.
 */
export function conversationOptions(given: Record<string, unknown>, defaults: string) {
  const system = given['system'] ?? null;
  if (system !== null && typeof system !== 'string') {
    throw new TypeError(`Expected \`system\` to be a string (the application's system prompt), got ${describeValue(system)}.`);
  }
  return { system, messages: readHistory(given['messages']), instructions: readInstructions(given['instructions'], defaults), parseFn: readParseFn(given['parseFn']) };
}

function readHistory(value: unknown): readonly ChatTurn[] {
  if (value === undefined || value === null) return NO_TURNS;
  if (!Array.isArray(value)) {
    throw new TypeError(
      `Expected \`messages\` to be the earlier turns, an array of { role: 'user' | 'assistant', content: string }, got ${kindOf(value)}.`,
    );
  }
  if (value.length > MAX_HISTORY) throw new RangeError(`Expected at most ${MAX_HISTORY} earlier \`messages\`, got ${value.length}.`);
  // Copied and frozen: the run keeps its own, whatever the caller does with the array later.
  return Object.freeze(
    value.map((turn: unknown, i) => {
      const problem = turnProblem(turn);
      // The content is the caller's conversation, which may be private: the message names only what is wrong.
      if (problem !== null) throw new TypeError(`Expected \`messages[${i}]\` to be { role: 'user' | 'assistant', content: string }, but ${problem}.`);
      const { role, content } = turn as ChatTurn;
      return Object.freeze({ role, content });
    }),
  );
}

/** What is wrong with a turn, by the kind of each value: a turn is the caller's conversation, and this message may reach a span. */
function turnProblem(turn: unknown): string | null {
  if (!isPlainObject(turn)) return `it is ${kindOf(turn)}`;
  const { role, content } = turn as Record<string, unknown>;
  if (role === 'system') return "its role is 'system': give the system prompt as the `system` option";
  if (role !== 'user' && role !== 'assistant') return `its role is ${typeof role === 'string' ? 'another string' : kindOf(role)}`;
  if (typeof content !== 'string') return `its content is ${kindOf(content)}`;
  const extras = Object.keys(turn).length - 2;
  return extras === 0 ? null : `it has ${extras === 1 ? 'a key' : `${extras} keys`} besides role and content, which Booth would not send`;
}

/** A value's kind, never its text: `a string`, `null`, `an array`, `an object`. */
function kindOf(value: unknown): string {
  return typeof value === 'string' ? 'a string' : describeValue(value);
}

const NO_TURNS: readonly ChatTurn[] = Object.freeze([]);

function readInstructions(value: unknown, defaults: string): string {
  if (value === undefined || value === null) return defaults;
  if (typeof value === 'string') return value;
  if (typeof value !== 'function') {
    throw new TypeError(`Expected \`instructions\` to be a string, or a function of Booth's default text returning one, got ${describeValue(value)}.`);
  }
  let text: unknown;
  try {
    text = value(defaults);
  } catch (error) {
    // The caller's error may quote its texts: Booth's message names only the option, the error is the cause.
    throw new TypeError('The `instructions` function threw; see the error\'s cause.', { cause: error });
  }
  if (typeof text !== 'string') {
    throw new TypeError(`Expected the \`instructions\` function to return a string, got ${describeValue(text)}.`);
  }
  return text;
}

function readParseFn(value: unknown): ParseFn | null {
  const parseFn = optionalFunction('parseFn', value);
  if (isAsyncFunction(parseFn)) {
    throw new TypeError('Expected `parseFn` to be a synchronous function (text) => envelope object, got an async function.');
  }
  return parseFn as ParseFn | null;
}
