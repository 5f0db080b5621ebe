import { GENERIC_VALIDATION_MESSAGE } from './constants.js';
import { describeThrown, describeValue, isThenable } from '../util/values.js';

/**
 * A caller's check of an answer (a string, or with a `schema` its output): `true` passes; `false`, `[false]` or `[false, message]`
 * fails. It must be synchronous; a throw counts as a failure, never escapes.
 */
export type Validator<T = string> = (answer: T) => boolean | readonly [boolean, (string | null | undefined)?];

export interface Verdict {
  readonly passed: boolean;
  /** Null on a pass; the validator's own message (verbatim, even empty) or Booth's on a failure. */
  readonly error: string | null;
}

const PASSED: Verdict = Object.freeze({ passed: true, error: null });

/** What a validator's return value means. */
export function verdictFromReturn(returned: unknown): Verdict {
  if (returned === true) return PASSED;
  if (returned === false) return failed(GENERIC_VALIDATION_MESSAGE);
  if (Array.isArray(returned) && (returned.length === 1 || returned.length === 2)) {
    const [passed, message] = returned as unknown[];
    if (typeof passed === 'boolean' && (message === undefined || message === null || typeof message === 'string')) {
      if (passed) return PASSED;
      return failed(typeof message === 'string' ? message : GENERIC_VALIDATION_MESSAGE);
    }
  }
  if (isThenable(returned)) {
    return failed('the validator returned a Promise; validators must be synchronous');
  }
  return failed(
    `the validator returned an invalid value (${describeValue(returned)}); expected true, false or [boolean, message]`,
  );
}

/** What a validator's throw means. */
export function verdictFromThrow(thrown: unknown): Verdict {
  const { name, message } = describeThrown(thrown);
  return failed(`Validator threw ${name}: ${message}`);
}

function failed(error: string): Verdict {
  return { passed: false, error };
}
