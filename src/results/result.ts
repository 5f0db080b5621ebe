import type { CheckpointState, Escalation, RunSettings, TraceStep } from '../../machines/checkpoint/types.js';
import type { EvidenceState } from '../../machines/evidence.js';
import type { Attempt, ModelAnswer, Sample } from '../decide/attempt.js';
import {
  AMBIGUOUS,
  BUDGET_SPENT,
  type BLOCKED,
  COMPARE_FAILED,
  type EVIDENCE_DISAGREES,
  INVALID_SCORE,
  type Reason,
  REPAIRED,
  type Status,
  type UNCERTAIN,
  VERIFIED,
} from '../decide/constants.js';
import type { JsonObject, JsonValue } from '../reply/json-objects.js';
import type { Clarification, SentPrompt } from '../decide/prompts.js';
import { roundStart } from '../decide/clarification.js';
import { addUsage, type Usage } from '../decide/usage.js';
import { failedForGood } from '../decide/call-retries.js';

/** Which acceptance condition decided the result. */
export type Method = 'ambiguity' | 'evidence' | 'budget' | 'call_failure' | 'parse_failure' | 'validation' | 'confidence';

/** What one model of a run did: its attempts, the calls they made, and what they consumed. */
export interface ModelSpend {
  /** The model's name; null when the run named none. */
  readonly model: string | null;
  readonly attempts: number;
  /** Calls made, call retries and samples included (skipped samples too: they were sent). */
  readonly calls: number;
  /** Its attempts' usage summed; null when none reported usage. */
  readonly usage: Usage | null;
}

export type Step = TraceStep<CheckpointState | EvidenceState>;

/** The data fields of a result, as the checks build them. */
export type ResultFields = Pick<
  Result,
  | 'status'
  | 'answer'
  | 'confidence'
  | 'agreement'
  | 'attempts'
  | 'ambiguous'
  | 'interpretations'
  | 'evidenceAgreement'
  | 'parsed'
  | 'reason'
  | 'detail'
  | 'prompts'
  | 'trace'
  | 'settings'
  | 'usage'
  | 'durationMs'
  | 'clarifications'
  | 'escalations'
>;

/**
 * The outcome of a check, as one class: the public type is the union `BoothResult`, whose
 * members say what each status guarantees. Frozen.
 */
export class Result {
  readonly status: Status;
  /**
   * The accepted answer; for AMBIGUOUS the model's answer (may be blank); for UNCERTAIN the
   * last that parsed, or null. A string, or with a `schema` the schema's output.
   */
  readonly answer: unknown;
  /** The same attempt's self-reported confidence; for evidence checks, the agreement score. */
  readonly confidence: number | null;
  /**
   * With `samples` above 1: the share of the reported attempt's parsed samples that gave its
   * answer; null with one sample and for evidence checks.
   */
  readonly agreement: number | null;
  /** Every attempt, in order. */
  readonly attempts: readonly Attempt<unknown>[];
  /** True for AMBIGUOUS only. */
  readonly ambiguous: boolean;
  /** The readings of an AMBIGUOUS question; otherwise empty. */
  readonly interpretations: readonly string[];
  /** Evidence checks only: the comparator's score. */
  readonly evidenceAgreement: number | null;
  /** The decoded JSON object of the reported attempt, uncoerced. */
  readonly parsed: JsonObject | null;
  /** Why the result is not VERIFIED: evidence checks' reasons, or `BUDGET_SPENT` when the budget stopped a check. */
  readonly reason: Reason | null;
  /** The reason in words: an evidence check's, or which limit of the budget stopped the check. */
  readonly detail: string | null;
  /** The prompt sent for each attempt, in order, with its kind: `first`, or the kind of retry. */
  readonly prompts: readonly SentPrompt[];
  /** The states the machine entered, in order, with the attempt under way at each. */
  readonly trace: readonly Step[];
  /** `check()` / `acheck()`: the threshold, retries, validator and timers the run had; null for evidence checks. */
  readonly settings: RunSettings | null;
  /**
   * What the model calls consumed, summed over every attempt, call retry and sample, failed
   * ones included, as `callFn` reported it through `info.reportUsage()`; null when no call
   * reported usage, and for evidence checks.
   */
  readonly usage: Usage | null;
  /**
   * Wall-clock ms the check spent deciding: its attempts' `durationMs` summed (a resumed run
   * counts the time before and after the resume, not the pause); for evidence checks, the comparison.
   */
  readonly durationMs: number;
  /**
   * Each time the person who asked clarified the question (`clarify()`, or a waiting run's
   * `clarification`), in order: the readings offered, the one chosen or the rephrasing, and
   * the first attempt of the round it began. Empty when the question was never clarified.
   */
  readonly clarifications: readonly Clarification[];
  /**
   * Each time a cascade (`escalate`) moved on to the next model, in order: the first attempt
   * it made, and its name. Empty when the first model decided.
   */
  readonly escalations: readonly Escalation[];

  /** @internal Results come from `check()`, `acheck()` and `checkWithEvidence()`. */
  constructor(fields: ResultFields) {
    this.status = fields.status;
    this.answer = fields.answer;
    this.confidence = fields.confidence;
    this.agreement = fields.agreement;
    this.attempts = Object.freeze(fields.attempts);
    this.ambiguous = fields.ambiguous;
    this.interpretations = Object.freeze(fields.interpretations);
    this.evidenceAgreement = fields.evidenceAgreement;
    this.parsed = fields.parsed;
    this.reason = fields.reason;
    this.detail = fields.detail;
    this.prompts = Object.freeze(fields.prompts);
    this.trace = Object.freeze(fields.trace);
    this.settings = fields.settings;
    this.usage = fields.usage;
    this.durationMs = fields.durationMs;
    this.clarifications = Object.freeze(fields.clarifications);
    this.escalations = Object.freeze(fields.escalations);
    Object.freeze(this);
  }

  /**
   * The model that gave the reported answer (the last attempt's when none parsed); null when
   * the run named no model. In a cascade, which one answered.
   */
  get model(): string | null {
    const start = roundStart(this.clarifications, this.escalations);
    const reported = this.attempts.findLast((a, index) => index >= start && a.parseOk) ?? this.attempts.at(-1);
    return reported?.model ?? null;
  }

  /** Each model asked, in the order first asked, with its attempts, calls and usage: what a cascade spent where. */
  get models(): readonly ModelSpend[] {
    const spend = new Map<string | null, { attempts: number; calls: number; usage: Usage | null }>();
    for (const attempt of this.attempts) {
      const model = attempt.model ?? null;
      const so = spend.get(model) ?? { attempts: 0, calls: 0, usage: null };
      spend.set(model, {
        attempts: so.attempts + 1,
        calls: so.calls + (attempt.samples ? attempt.samples.reduce((n, sample) => n + sample.callTries.length, 0) : attempt.callTries.length),
        usage: addUsage(so.usage, attempt.usage),
      });
    }
    return Object.freeze([...spend].map(([model, so]) => Object.freeze({ model, ...so })));
  }

  /** With `samples` above 1 (any model's, in a cascade): each attempt's samples, in order; null with one sample. */
  get samples(): readonly (readonly Sample<unknown>[])[] | null {
    // A cascade's later model may sample where the first did not.
    if (this.settings === null || (this.settings.samples === 1 && !this.attempts.some((attempt) => attempt.samples !== undefined))) return null;
    return this.attempts.map((attempt) => attempt.samples ?? []);
  }

  /** The latest clarification, or null: what the question was last said to mean. */
  get clarification(): Clarification | null {
    return this.clarifications.at(-1) ?? null;
  }

  get nAttempts(): number {
    return this.attempts.length;
  }

  /** VERIFIED or REPAIRED. */
  get ok(): boolean {
    return this.status === VERIFIED || this.status === REPAIRED;
  }

  /** At least one attempt, and none parsed (after a clarification: none of its round). */
  get allParseFailed(): boolean {
    const round = latestRound(this);
    return round.length > 0 && round.every((a) => !a.parseOk);
  }

  /** At least one attempt, and every call failed (after a clarification: every call of its round, an outage all the same). */
  get callFailed(): boolean {
    const round = latestRound(this);
    return round.length > 0 && round.every((a) => a.callFailed);
  }


  /** The comparator threw or returned an unusable score. */
  get checkerFailed(): boolean {
    return this.reason === COMPARE_FAILED || this.reason === INVALID_SCORE;
  }

  get method(): Method {
    if (this.status === AMBIGUOUS) return 'ambiguity';
    if (this.reason === BUDGET_SPENT) return 'budget';
    if (this.attempts.length === 0) return 'evidence';
    // An outage is not a bad reply: boothpy says parse_failure for both, Booth tells them apart.
    // Nor is a call that failed for good, which ended the run whatever its replies said.
    if (this.callFailed || failedForGood(this.attempts.at(-1)!.callTries)) return 'call_failure';
    if (this.allParseFailed) return 'parse_failure';
    if (this.attempts.at(-1)?.passedValidation === false) return 'validation';
    return 'confidence';
  }

  /** The answer when the result is ok; otherwise throws `BoothRejected`. */
  unwrap(): unknown {
    if (this.ok) return this.answer;
    throw new BoothRejected(this as unknown as AnyBoothResult);
  }

  /** The answer when the result is ok; otherwise `fallback`. */
  unwrapOr<F>(fallback: F): unknown {
    return this.ok ? this.answer : fallback;
  }

  /** Every field and derived value, attempts included, so `JSON.stringify(result)` is complete. */
  toJSON(): ResultFields & {
    nAttempts: number;
    ok: boolean;
    allParseFailed: boolean;
    callFailed: boolean;
    checkerFailed: boolean;
    method: Method;
    model: string | null;
    models: readonly ModelSpend[];
  } {
    return {
      status: this.status,
      answer: this.answer,
      confidence: this.confidence,
      agreement: this.agreement,
      attempts: this.attempts,
      ambiguous: this.ambiguous,
      interpretations: this.interpretations,
      evidenceAgreement: this.evidenceAgreement,
      parsed: this.parsed,
      reason: this.reason,
      detail: this.detail,
      prompts: this.prompts,
      trace: this.trace,
      settings: this.settings,
      usage: this.usage,
      durationMs: this.durationMs,
      clarifications: this.clarifications,
      escalations: this.escalations,
      nAttempts: this.nAttempts,
      ok: this.ok,
      allParseFailed: this.allParseFailed,
      callFailed: this.callFailed,
      checkerFailed: this.checkerFailed,
      method: this.method,
      model: this.model,
      models: this.models,
    };
  }
}

/**
 * The attempts of the latest round: all of them, or those asked since the latest
 * clarification. A function, not a private method: the getters that read it are also read
 * off copies of a result (a drawing's view of a result line).
 */
function latestRound({
  attempts,
  clarifications,
  escalations,
}: Pick<Result, 'attempts'> & { readonly clarifications?: readonly Clarification[]; readonly escalations?: readonly Escalation[] }): readonly Attempt<unknown>[] {
  const start = roundStart(clarifications, escalations);
  return start === 0 ? attempts : attempts.slice(start);
}

/**
 * What every result has, whatever its status. `T` is the answer's type: a string, or with
 * a `schema` the schema's output.
 */
interface ResultBase<T> extends Omit<Result, 'status' | 'ok' | 'answer' | 'confidence' | 'ambiguous' | 'reason' | 'unwrap' | 'unwrapOr' | 'attempts' | 'samples'> {
  /** Every attempt, in order. */
  readonly attempts: readonly Attempt<T>[];
  /** With `samples` above 1 (any model's, in a cascade): each attempt's samples, in order; null with one sample. */
  readonly samples: readonly (readonly Sample<ModelAnswer<T>>[])[] | null;
  /** The answer when the result is ok; otherwise `fallback`. */
  unwrapOr<F>(fallback: F): T | F;
}

/**
 * VERIFIED (accepted on the first attempt) or REPAIRED (after reconsideration): an
 * acceptance condition was met — self-reported confidence, the schema, the caller's
 * validator, or agreement with the caller's evidence — never proof that the answer is true.
 */
export interface AcceptedResult<T = string> extends ResultBase<T> {
  readonly status: typeof VERIFIED | typeof REPAIRED;
  readonly ok: true;
  readonly answer: T;
  readonly confidence: number;
  readonly ambiguous: false;
  readonly reason: null;
  /** The answer. */
  unwrap(): T;
}

/**
 * The question has several readings (`interpretations`); returned at once, never retried.
 * `TRaw` is the answer as the model wrote it: a string, or with a `schema` any JSON value,
 * since an ambiguous answer never reaches the schema.
 */
export interface AmbiguousResult<T = string, TRaw = string> extends ResultBase<T> {
  readonly status: typeof AMBIGUOUS;
  readonly ok: false;
  /**
   * The model's answer under its chosen reading; may be blank. Null when a reply that streamed
   * was decided AMBIGUOUS at its readings, before its answer arrived.
   */
  readonly answer: TRaw | null;
  /** Null as `answer` is, for a streamed reply decided at its readings. */
  readonly confidence: number | null;
  readonly ambiguous: true;
  readonly reason: null;
  /** Throws `BoothRejected`. */
  unwrap(): never;
}

/** No attempt met the bar, or the evidence check could not decide. */
export interface UncertainResult<T = string> extends ResultBase<T> {
  readonly status: typeof UNCERTAIN;
  readonly ok: false;
  /** The last answer that parsed, if any; with a `schema`, null when the schema rejected it. */
  readonly answer: T | null;
  readonly confidence: number | null;
  readonly ambiguous: false;
  readonly reason: Exclude<Reason, typeof EVIDENCE_DISAGREES> | null;
  /** Throws `BoothRejected`. */
  unwrap(): never;
}

/** `checkWithEvidence()` only: the answer disagreed with the caller's evidence. */
export interface BlockedResult extends ResultBase<string> {
  readonly status: typeof BLOCKED;
  readonly ok: false;
  readonly answer: string;
  /** The comparator's score. */
  readonly confidence: number;
  readonly ambiguous: false;
  readonly reason: typeof EVIDENCE_DISAGREES;
  /** Throws `BoothRejected`. */
  unwrap(): never;
}

/**
 * The outcome of a check, discriminated by `status` (and by `ok`): narrowing tells what
 * each status guarantees, such as a string answer once `ok` is true.
 */
export type BoothResult<T = string, TRaw = string> = AcceptedResult<T> | AmbiguousResult<T, TRaw> | UncertainResult<T> | BlockedResult;
/** What `check()` and `acheck()` return: never BLOCKED, which only evidence produces. */
export type CheckResult<T = string, TRaw = string> = AcceptedResult<T> | AmbiguousResult<T, TRaw> | UncertainResult<T>;
/** What `check()` and `acheck()` return with a `schema` whose output is `T`. */
export type TypedCheckResult<T> = CheckResult<T, JsonValue>;
/** Any result, whatever its answer's type: what the visualizations and the CLI take. */
export type AnyBoothResult = BoothResult<unknown, unknown>;
/** What `checkWithEvidence()` returns: never REPAIRED or AMBIGUOUS. */
export type EvidenceResult = (AcceptedResult & { readonly status: typeof VERIFIED }) | UncertainResult | BlockedResult;

/**
 * Thrown by `result.unwrap()` when the result is not ok. The message names the status
 * and method, never the answer (it may be wrong, or sensitive); the whole result is on
 * `.result`.
 */
export class BoothRejected extends Error {
  override readonly name = 'BoothRejected';
  /** The rejected result; with a `schema`, its answers are the schema's outputs. */
  readonly result: BoothResult;

  constructor(result: AnyBoothResult) {
    super(`Booth did not accept the answer: status ${result.status}, method ${result.method}${result.callFailed ? ' (every model call failed)' : ''}`);
    this.result = result as BoothResult;
  }
}

/**
 * The checks' results, typed by what their machine guarantees: an accepted run reports a
 * parsed attempt (a string answer and a number confidence), an ambiguous one too, and only
 * the evidence machine blocks. These two functions are the one place that says so.
 */
export function checkResult<T = string, TRaw = string>(fields: ResultFields): CheckResult<T, TRaw> {
  return new Result(fields) as unknown as CheckResult<T, TRaw>;
}

export function evidenceResult(fields: ResultFields): EvidenceResult {
  return new Result(fields) as unknown as EvidenceResult;
}
