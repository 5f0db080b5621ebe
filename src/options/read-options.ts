import { type AgreeFn, CONFIDENCE_SOURCES, type ConfidenceSource, confidenceSourceFor } from '../decide/agreement.js';
import type { CallRetryPolicy } from '../decide/call-retries.js';
import { DEFAULT_MAX_CLARIFICATIONS, DEFAULT_MAX_RETRIES } from '../decide/constants.js';
import type { ChatTurn } from '../decide/prompts.js';
import type { ParseFn } from '../reply/parse.js';
import { blankRecord, describeValue, isAsyncFunction, isPlainObject } from '../util/values.js';

/**
 * The option readers every entry shares (`check()`, `acheck()`, the machine's input, the
 * stores): each reads one value and names the option, the value and the fix when it is wrong.
 */

/** `acheck()`'s options that `check()` refuses, named so that its message can say why. */
export const ASYNC_ONLY_KEYS = ['signal', 'timeoutMs', 'deadlineMs', 'callRetries', 'checkpoint', 'key', 'sampleConcurrency', 'awaitClarification', 'clarification', 'maxClarifications'] as const;

/** More samples than this is a survey, not a check: each is a paid model call per attempt. */
export const MAX_SAMPLES = 20;

/** `samples`, `agree` and `confidenceFrom`, as `check()`, `acheck()` and the machine read them. */
export function samplingOptions(given: Record<string, unknown>) {
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
  const confidenceFrom = confidenceSourceFor(samples, source as ConfidenceSource | undefined);
  return { samples, agree: agree as AgreeFn<unknown> | null, confidenceFrom };
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
