import type { Cluster } from './agreement.js';
import type { CallTry } from './call-retries.js';
import type { JsonObject, JsonValue } from '../reply/json-objects.js';
import { isObjectText } from '../reply/json-objects.js';
import { MAX_DEPTH, type ParseFn, parseReply, type Reading, readObject, type Unreadable } from '../reply/parse.js';
import type { SchemaIssue, SchemaVerdict } from './schema.js';
import type { Usage } from './usage.js';
import type { Verdict } from './validation.js';
import { describeThrown, describeValue, isPlainObject } from '../util/values.js';

/**
 * One call to the model and what Booth made of the reply. Frozen. `T` is the answer's
 * type: a string, or with a `schema` the schema's output.
 */
export interface Attempt<T = string> {
  /** The reply as received; for a failed call, `"<ErrorName>: <message>"`. */
  readonly rawText: string;
  /**
   * The answer, stringified when the model gave a number or boolean; null unless parsed.
   * With a `schema`: the schema's output, null unless the schema passed it (the model's
   * own value is `parsed.answer`).
   */
  readonly answer: T | null;
  /** The model's self-reported confidence in [0, 1]; null unless parsed. */
  readonly confidence: number | null;
  readonly parseOk: boolean;
  /** Why the call failed or the reply was rejected; null when parsed. */
  readonly error: string | null;
  /** `callFn` threw, or returned something that is not a string. */
  readonly callFailed: boolean;
  readonly ambiguous: boolean;
  readonly interpretations: readonly string[];
  readonly chosenInterpretation: string | null;
  /** True when the validator passed or did not run. */
  readonly passedValidation: boolean;
  readonly validationError: string | null;
  /** With a `schema`, what it found wrong with the answer; otherwise null. */
  readonly schemaIssues: readonly SchemaIssue[] | null;
  /** The decoded JSON object, uncoerced, extra keys included; null unless parsed. */
  readonly parsed: JsonObject | null;
  /** Every call made for this attempt: one, or more when `callRetries` retried failed calls. */
  readonly callTries: readonly CallTry[];
  /** Wall-clock ms from the attempt's first call to its verdict, validator and retries included. */
  readonly durationMs: number;
  /**
   * What its calls consumed, as `callFn` reported it through `info.reportUsage()`: every
   * call retry and every sample, failed ones included. Null when no call reported usage.
   */
  readonly usage: Usage | null;
  /**
   * The model that made the attempt, in a cascade (`escalate`) or when `modelName` names it;
   * absent otherwise.
   */
  readonly model?: string;
  /**
   * With `samples` above 1 only: every reply gathered for this attempt, in order. The
   * attempt's own fields then describe the vote's winner, its confidence the vote's.
   */
  readonly samples?: readonly Sample<ModelAnswer<T>>[];
  /** With `samples` above 1 only: the parsed samples grouped by `agree`, winner first. */
  readonly clusters?: readonly Cluster<ModelAnswer<T>>[];
  /** With `samples` above 1 only: the first failure of a custom `agree`, whose pair then counted as different; else null. */
  readonly agreeError?: string | null;
}

/** An answer as the model wrote it: a string, or with a schema any JSON value. */
export type ModelAnswer<T> = [T] extends [string] ? string : JsonValue;

/** One reply of several sampled for an attempt: the model's own answer, before any schema. */
export interface Sample<A = string> {
  /** The reply as received; for a failed call, `"<ErrorName>: <message>"`. */
  readonly rawText: string;
  /** The answer as the model wrote it; null unless parsed. */
  readonly answer: A | null;
  readonly confidence: number | null;
  readonly parseOk: boolean;
  readonly error: string | null;
  readonly callFailed: boolean;
  readonly ambiguous: boolean;
  readonly interpretations: readonly string[];
  /** Every call made for this sample: one, or more when `callRetries` retried. */
  readonly callTries: readonly CallTry[];
  /**
   * With adaptive `samples` only: the vote was settled while this sample's call was in flight,
   * so it was aborted, never counted. Absent otherwise.
   */
  readonly skipped?: true;
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * An attempt with no reading, every field in the documented order so logs and JSON read
 * the same every time. Attempts are object literals built field by field: V8 builds a
 * spread of a literal-shaped object several times slower, and a check builds several.
 */
function unread(rawText: string, callTries: readonly CallTry[], error: string | null, callFailed: boolean): Attempt {
  return {
    rawText,
    answer: null,
    confidence: null,
    parseOk: false,
    error,
    callFailed,
    ambiguous: false,
    interpretations: NONE,
    chosenInterpretation: null,
    passedValidation: true,
    validationError: null,
    schemaIssues: null,
    parsed: null,
    callTries: Object.freeze(callTries),
    durationMs: 0,
    usage: null,
  };
}

/** The draft of an attempt whose call has not returned. */
export const NO_REPLY_YET: Attempt = Object.freeze(unread('', [], null, false));

/** The draft of an attempt whose reply arrived and is not read yet. */
export function attemptFromRawText(rawText: string, callTries: readonly CallTry[]): Attempt {
  return unread(rawText, callTries, null, false);
}

/**
 * The attempt a reply makes, parsed or not. With `schema` the answer may be any JSON value
 * and stays unset until the schema passes it.
 */
export function attemptFromReply(rawText: string, callTries: readonly CallTry[], schema = false, parseFn: ParseFn | null = null): Attempt<unknown> {
  const reading = parseFn === null ? parseReply(rawText, schema) : readWith(parseFn, rawText, schema);
  if (!reading.ok) return unread(rawText, callTries, reading.error, false);
  return {
    rawText,
    answer: schema ? null : (reading.answer as string),
    confidence: reading.confidence,
    parseOk: true,
    error: null,
    callFailed: false,
    ambiguous: reading.ambiguous,
    interpretations: reading.interpretations.length === 0 ? NONE : Object.freeze(reading.interpretations),
    chosenInterpretation: reading.chosenInterpretation,
    passedValidation: true,
    validationError: null,
    schemaIssues: null,
    parsed: reading.parsed,
    callTries: Object.freeze(callTries),
    durationMs: 0,
    usage: null,
  };
}

/**
 * The attempt a streaming reply makes once its leading object said `"ambiguous": true` and
 * listed its readings: AMBIGUOUS needs no more, so the rest (the answer, the confidence) is
 * never read. `rawText` is what had arrived; `parsed` holds the two members read.
 */
export function attemptFromEarlyReadings(rawText: string, callTries: readonly CallTry[], interpretations: readonly string[]): Attempt<unknown> {
  const readings = Object.freeze([...interpretations]);
  return {
    ...unread(rawText, callTries, null, false),
    parseOk: true,
    ambiguous: true,
    interpretations: readings,
    parsed: Object.freeze({ ambiguous: true, interpretations: readings }),
  };
}

/**
 * The attempt a streaming reply makes once a completed member of its answer has a type the
 * schema refuses: read as far as it arrived, judged failed by the schema's own rule.
 */
export function attemptFromEarlyFailure(rawText: string, callTries: readonly CallTry[], interpretations: readonly string[] | null, verdict: SchemaVerdict): Attempt<unknown> {
  const readings = Object.freeze([...(interpretations ?? [])]);
  const draft: Attempt<unknown> = {
    ...unread(rawText, callTries, null, false),
    parseOk: true,
    interpretations: readings,
    parsed: Object.freeze({ ambiguous: false, interpretations: readings }),
  };
  return withSchemaVerdict(draft, verdict);
}

/**
 * How the error of a reading begins when the caller's `parseFn` threw: the rest is the
 * thrower's message, which may quote the reply, so telemetry records it only as it records
 * replies.
 */
export const PARSE_FN_THREW = 'parseFn threw: ';

/**
 * The reading of the caller's `parseFn`: what it returns is copied through JSON (so the run
 * keeps data of its own, and a cycle, a BigInt or a nesting past `MAX_DEPTH` is refused as a
 * reply's would be) and judged by the envelope's rules; what it throws is the parse error.
 */
function readWith(parseFn: ParseFn, rawText: string, schema: boolean): Reading<JsonValue> | Unreadable {
  let returned: unknown;
  try {
    returned = parseFn(rawText);
  } catch (error) {
    return { ok: false, error: `${PARSE_FN_THREW}${describeThrown(error).message}` };
  }
  let json: string | undefined;
  try {
    // A value described by its kind only: a returned string is the reply's text.
    if (!isPlainObject(returned)) return { ok: false, error: `parseFn returned ${typeof returned === 'string' ? 'a string' : describeValue(returned)}, expected the envelope object` };
    json = JSON.stringify(returned);
  } catch (error) {
    // A Proxy can throw from any trap, isPlainObject's included.
    return { ok: false, error: `parseFn returned a value JSON cannot hold: ${describeThrown(error).name}` };
  }
  // A toJSON() can make it anything.
  if (json?.[0] !== '{') return { ok: false, error: 'parseFn returned an object whose JSON is not an object' };
  if (!isObjectText(json, 0, json.length, MAX_DEPTH)) return { ok: false, error: `parseFn returned an object nested more than ${MAX_DEPTH} levels deep` };
  return readObject(JSON.parse(json) as JsonObject, schema);
}

/** The attempt a throwing `callFn` makes. */
export function attemptFromCallError(thrown: unknown, callTries: readonly CallTry[]): Attempt {
  const { name, message } = describeThrown(thrown);
  return unread(`${name}: ${message}`, callTries, message, true);
}

/** The attempt a `callFn` makes that returned something other than a string. */
export function attemptFromNonText(returned: unknown, callTries: readonly CallTry[]): Attempt {
  const error = `callFn returned ${describeValue(returned)}, expected string`;
  return unread(`TypeError: ${error}`, callTries, error, true);
}

/** What Booth counts as thrown when a call outlives its time: a `TimeoutError`. */
export function timeoutError(message: string): { readonly name: string; readonly message: string } {
  return { name: 'TimeoutError', message };
}

export function withVerdict<T>(draft: Attempt<T>, verdict: Verdict): Attempt<T> {
  return copy(draft, draft.answer, verdict.passed, verdict.error, draft.schemaIssues, draft.durationMs, draft.usage);
}

/** The draft once the schema judged it: its output as the answer, or its issues as a failed validation. */
export function withSchemaVerdict(draft: Attempt<unknown>, verdict: SchemaVerdict): Attempt<unknown> {
  return verdict.passed
    ? copy(draft, verdict.value, true, null, null, draft.durationMs, draft.usage)
    : copy(draft, null, false, verdict.error, verdict.issues, draft.durationMs, draft.usage);
}

/** The draft as it is kept once decided: frozen, with how long it took and what its calls consumed. */
export function finished<T>(draft: Attempt<T>, durationMs: number, usage: Usage | null, model: string | null = null): Attempt<T> {
  return Object.freeze(copy(draft, draft.answer, draft.passedValidation, draft.validationError, draft.schemaIssues, durationMs, usage, model));
}

/** Field by field: V8 builds a spread of a literal-shaped object several times slower. */
function copy<T>(
  draft: Attempt<unknown>,
  answer: T | null,
  passedValidation: boolean,
  validationError: string | null,
  schemaIssues: readonly SchemaIssue[] | null,
  durationMs: number,
  usage: Usage | null,
  model: string | null = null,
): Attempt<T> {
  const copied: Attempt<T> = {
    rawText: draft.rawText,
    answer,
    confidence: draft.confidence,
    parseOk: draft.parseOk,
    error: draft.error,
    callFailed: draft.callFailed,
    ambiguous: draft.ambiguous,
    interpretations: draft.interpretations,
    chosenInterpretation: draft.chosenInterpretation,
    passedValidation,
    validationError,
    schemaIssues,
    parsed: draft.parsed,
    callTries: draft.callTries,
    durationMs,
    usage,
  };
  // Only a run that knows its models' names says which made the attempt.
  if (model !== null) Object.assign(copied, { model });
  // Only a sampling attempt has these: a one-sample attempt keeps the fields it always had.
  return draft.samples === undefined ? copied : withSampling(copied, draft as Attempt<unknown> as Attempt<T>);
}

/** `attempt` with the samples, clusters and comparator failure of `from`, after its own fields. */
export function withSampling<T>(attempt: Attempt<T>, from: Pick<Attempt<T>, 'samples' | 'clusters' | 'agreeError'>): Attempt<T> {
  return Object.assign(attempt, { samples: from.samples, clusters: from.clusters, agreeError: from.agreeError ?? null });
}
