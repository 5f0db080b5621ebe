import type { CheckpointState, TraceStep } from '../machines/checkpoint.js';
import type { EvidenceState } from '../machines/evidence.js';
import type { Attempt } from './attempt.js';
import {
  AMBIGUOUS,
  COMPARE_FAILED,
  INVALID_SCORE,
  type Reason,
  REPAIRED,
  type Status,
  VERIFIED,
} from './constants.js';
import type { JsonObject } from './json-objects.js';
import type { SentPrompt } from './prompts.js';

/** Which acceptance condition decided the result. */
export type Method = 'ambiguity' | 'evidence' | 'parse_failure' | 'validation' | 'confidence';

export type Step = TraceStep<CheckpointState | EvidenceState>;

export interface ResultFields {
  readonly status: Status;
  readonly answer: string | null;
  readonly confidence: number | null;
  readonly attempts: readonly Attempt[];
  readonly ambiguous: boolean;
  readonly interpretations: readonly string[];
  readonly evidenceAgreement: number | null;
  readonly parsed: JsonObject | null;
  readonly reason: Reason | null;
  readonly detail: string | null;
  readonly prompts: readonly SentPrompt[];
  readonly trace: readonly Step[];
}

/**
 * The outcome of a check. `VERIFIED` and `REPAIRED` mean an acceptance condition was
 * met (self-reported confidence, the caller's validator, or agreement with the
 * caller's evidence), never that the answer is true. Frozen.
 */
export class BoothResult implements ResultFields {
  readonly status: Status;
  readonly answer: string | null;
  readonly confidence: number | null;
  readonly attempts: readonly Attempt[];
  readonly ambiguous: boolean;
  readonly interpretations: readonly string[];
  readonly evidenceAgreement: number | null;
  readonly parsed: JsonObject | null;
  readonly reason: Reason | null;
  readonly detail: string | null;
  /** The prompt sent for each attempt, in order, with its kind: `first`, or the kind of retry. */
  readonly prompts: readonly SentPrompt[];
  /** The states the machine entered, in order, with the attempt under way at each. */
  readonly trace: readonly Step[];

  /** @internal Results come from `check()`, `acheck()` and `checkWithEvidence()`. */
  constructor(fields: ResultFields) {
    this.status = fields.status;
    this.answer = fields.answer;
    this.confidence = fields.confidence;
    this.attempts = Object.freeze(fields.attempts);
    this.ambiguous = fields.ambiguous;
    this.interpretations = Object.freeze(fields.interpretations);
    this.evidenceAgreement = fields.evidenceAgreement;
    this.parsed = fields.parsed;
    this.reason = fields.reason;
    this.detail = fields.detail;
    this.prompts = Object.freeze(fields.prompts);
    this.trace = Object.freeze(fields.trace);
    Object.freeze(this);
  }

  get nAttempts(): number {
    return this.attempts.length;
  }

  /** VERIFIED or REPAIRED. */
  get ok(): boolean {
    return this.status === VERIFIED || this.status === REPAIRED;
  }

  /** At least one attempt, and none parsed. */
  get allParseFailed(): boolean {
    return this.attempts.length > 0 && this.attempts.every((a) => !a.parseOk);
  }

  /** At least one attempt, and every call failed. */
  get callFailed(): boolean {
    return this.attempts.length > 0 && this.attempts.every((a) => a.callFailed);
  }

  /** The comparator threw or returned an unusable score. */
  get checkerFailed(): boolean {
    return this.reason === COMPARE_FAILED || this.reason === INVALID_SCORE;
  }

  get method(): Method {
    if (this.status === AMBIGUOUS) return 'ambiguity';
    if (this.attempts.length === 0) return 'evidence';
    if (this.allParseFailed) return 'parse_failure';
    if (this.attempts.at(-1)?.passedValidation === false) return 'validation';
    return 'confidence';
  }

  /** The answer when the result is ok; otherwise throws `BoothRejected`. */
  unwrap(): string {
    if (this.ok && this.answer !== null) return this.answer;
    throw new BoothRejected(this);
  }

  /** The answer when the result is ok; otherwise `fallback`. */
  unwrapOr<T>(fallback: T): string | T {
    return this.ok && this.answer !== null ? this.answer : fallback;
  }

  /** Every field and derived value, attempts included, so `JSON.stringify(result)` is complete. */
  toJSON(): ResultFields & {
    nAttempts: number;
    ok: boolean;
    allParseFailed: boolean;
    callFailed: boolean;
    checkerFailed: boolean;
    method: Method;
  } {
    return {
      status: this.status,
      answer: this.answer,
      confidence: this.confidence,
      attempts: this.attempts,
      ambiguous: this.ambiguous,
      interpretations: this.interpretations,
      evidenceAgreement: this.evidenceAgreement,
      parsed: this.parsed,
      reason: this.reason,
      detail: this.detail,
      prompts: this.prompts,
      trace: this.trace,
      nAttempts: this.nAttempts,
      ok: this.ok,
      allParseFailed: this.allParseFailed,
      callFailed: this.callFailed,
      checkerFailed: this.checkerFailed,
      method: this.method,
    };
  }
}

/**
 * Thrown by `result.unwrap()` when the result is not ok. The message names the status
 * and method, never the answer (it may be wrong, or sensitive); the whole result is on
 * `.result`.
 */
export class BoothRejected extends Error {
  override readonly name = 'BoothRejected';
  readonly result: BoothResult;

  constructor(result: BoothResult) {
    super(`Booth did not accept the answer: status ${result.status}, method ${result.method}`);
    this.result = result;
  }
}
