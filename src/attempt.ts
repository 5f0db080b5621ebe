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

/** An attempt with every field in the documented order, so logs and JSON read the same every time. */
function attempt(fields: Partial<Attempt> & Pick<Attempt, 'rawText'>): Attempt {
  return {
    rawText: fields.rawText,
    answer: fields.answer ?? null,
    confidence: fields.confidence ?? null,
    parseOk: fields.parseOk ?? false,
    error: fields.error ?? null,
    callFailed: fields.callFailed ?? false,
    ambiguous: fields.ambiguous ?? false,
    interpretations: Object.freeze(fields.interpretations ?? []),
    chosenInterpretation: fields.chosenInterpretation ?? null,
    passedValidation: fields.passedValidation ?? true,
    validationError: fields.validationError ?? null,
    parsed: fields.parsed ?? null,
    callTries: Object.freeze(fields.callTries ?? []),
    durationMs: fields.durationMs ?? 0,
  };
}

/** The draft of an attempt whose call has not returned. */
export const NO_REPLY_YET: Attempt = Object.freeze(attempt({ rawText: '' }));

/** The draft of an attempt whose reply arrived and is not read yet. */
export function attemptFromRawText(rawText: string, callTries: readonly CallTry[]): Attempt {
  return attempt({ rawText, callTries });
}

/** The attempt a reply makes, parsed or not. */
export function attemptFromReply(rawText: string, callTries: readonly CallTry[]): Attempt {
  const reading = parseReply(rawText);
  if (!reading.ok) return attempt({ rawText, error: reading.error, callTries });
  return attempt({ ...reading, rawText, parseOk: true, callTries });
}

/** The attempt a throwing `callFn` makes. */
export function attemptFromCallError(thrown: unknown, callTries: readonly CallTry[]): Attempt {
  const { name, message } = describeThrown(thrown);
  return attempt({ rawText: `${name}: ${message}`, error: message, callFailed: true, callTries });
}

/** The attempt a `callFn` makes that returned something other than a string. */
export function attemptFromNonText(returned: unknown, callTries: readonly CallTry[]): Attempt {
  const error = `callFn returned ${describeValue(returned)}, expected string`;
  return attempt({ rawText: `TypeError: ${error}`, error, callFailed: true, callTries });
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
