import type { CallTry } from './call-retries.js';
import type { JsonObject } from './json-objects.js';
import { parseReply } from './parse.js';
import type { Verdict } from './validation.js';
import { describeThrown, describeValue } from './values.js';

/** One call to the model and what Booth made of the reply. Frozen. */
export interface Attempt {
  /** The reply as received; for a failed call, `"<ErrorName>: <message>"`. */
  readonly rawText: string;
  /** The answer, stringified when the model gave a number or boolean; null unless parsed. */
  readonly answer: string | null;
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
  /** The decoded JSON object, uncoerced, extra keys included; null unless parsed. */
  readonly parsed: JsonObject | null;
  /** Every call made for this attempt: one, or more when `callRetries` retried failed calls. */
  readonly callTries: readonly CallTry[];
  /** Wall-clock ms from the attempt's first call to its verdict, validator and retries included. */
  readonly durationMs: number;
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
    parsed: null,
    callTries: Object.freeze(callTries),
    durationMs: 0,
  };
}

/** The draft of an attempt whose call has not returned. */
export const NO_REPLY_YET: Attempt = Object.freeze(unread('', [], null, false));

/** The draft of an attempt whose reply arrived and is not read yet. */
export function attemptFromRawText(rawText: string, callTries: readonly CallTry[]): Attempt {
  return unread(rawText, callTries, null, false);
}

/** The attempt a reply makes, parsed or not. */
export function attemptFromReply(rawText: string, callTries: readonly CallTry[]): Attempt {
  const reading = parseReply(rawText);
  if (!reading.ok) return unread(rawText, callTries, reading.error, false);
  return {
    rawText,
    answer: reading.answer,
    confidence: reading.confidence,
    parseOk: true,
    error: null,
    callFailed: false,
    ambiguous: reading.ambiguous,
    interpretations: reading.interpretations.length === 0 ? NONE : Object.freeze(reading.interpretations),
    chosenInterpretation: reading.chosenInterpretation,
    passedValidation: true,
    validationError: null,
    parsed: reading.parsed,
    callTries: Object.freeze(callTries),
    durationMs: 0,
  };
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

export function withVerdict(draft: Attempt, verdict: Verdict): Attempt {
  return copy(draft, verdict.passed, verdict.error, draft.durationMs);
}

/** The draft as it is kept once decided: frozen, with how long it took. */
export function finished(draft: Attempt, durationMs: number): Attempt {
  return Object.freeze(copy(draft, draft.passedValidation, draft.validationError, durationMs));
}

/** Field by field: V8 builds a spread of a literal-shaped object several times slower. */
function copy(draft: Attempt, passedValidation: boolean, validationError: string | null, durationMs: number): Attempt {
  return {
    rawText: draft.rawText,
    answer: draft.answer,
    confidence: draft.confidence,
    parseOk: draft.parseOk,
    error: draft.error,
    callFailed: draft.callFailed,
    ambiguous: draft.ambiguous,
    interpretations: draft.interpretations,
    chosenInterpretation: draft.chosenInterpretation,
    passedValidation,
    validationError,
    parsed: draft.parsed,
    callTries: draft.callTries,
    durationMs,
  };
}
