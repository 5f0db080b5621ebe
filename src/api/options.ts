import type { AgreeFn, ConfidenceSource } from '../decide/agreement.js';
import type { Attempt, ModelAnswer } from '../decide/attempt.js';
import type { CallRetryPolicy } from '../decide/call-retries.js';
import type { CheckpointStore } from '../stores/store.js';
import { DEFAULT_EVIDENCE_THRESHOLD, DEFAULT_THRESHOLD } from '../decide/constants.js';
import type { JsonValue } from '../reply/json-objects.js';
import { type AnswerSchema, answerFormatOf, readSchema } from '../decide/schema.js';
import { type ChatTurn, instructions } from '../decide/prompts.js';
import type { ParseFn } from '../reply/parse.js';
import { readTelemetry, rejectedCheck, type TelemetryOptions, type TelemetrySettings } from '../telemetry/settings.js';
import type { Validator } from '../decide/validation.js';
import type { ClarificationChoice } from '../decide/clarification.js';
import { ASYNC_ONLY_KEYS, budgetOption, distinctModelNames, escalateOption, modelNameOption, widestPlan, clarificationOptions, concurrency, conversationOptions, optionalFunction, readPrompt, readShape, retries, samplingOptions, timers, unitInterval } from '../options/read-options.js';
import type { CheckSettings } from '../engine/settings.js';
import type { AsyncCallFn, CallFn } from '../decide/model-call.js';
import type { BudgetOption, SamplesOption } from '../../machines/checkpoint/types.js';
import type { Inspector } from '../engine/machine-run.js';
import { describeValue, isAsyncFunction } from '../util/values.js';
import type { PartialReply } from '../engine/partial-reply.js';

/** The options of `check()`, `acheck()` and `checkWithEvidence()`, and how each is read. */

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
   * (`confidenceFrom`); each sample is a model call. Or `{ max, min?, stop? }`: samples are
   * asked in waves (the first `min`, default the fewest that could settle the vote) and the
   * attempt stops calling once the winner is settled — `stop: 'decided'` (the default) when no
   * outcome of the samples not yet asked could change it, `{ confidence: 0.95 }` when a Beta
   * posterior says the leader wins with that probability. Calls in flight then are aborted
   * and recorded as skipped (`sample.skipped`).
   */
  samples?: SamplesOption | undefined;
  /** The name of `callFn`'s model: each attempt records it as `attempt.model`, and pages and spans show it. */
  modelName?: string | null | undefined;
  /**
   * A cascade: the models asked in turn when one ends UNCERTAIN (low confidence, a failed
   * validator or schema, a split vote, unreadable replies, or every call failed — an outage
   * falls back to the next provider). Each starts afresh from the first prompt, with
   * `maxRetries` of its own; AMBIGUOUS never escalates. Each entry is a callFn, or
   * `{ call, name?, samples? }` to name it and give it its own `samples`.
   */
  escalate?: readonly Escalate<CallFn>[] | null | undefined;
  /**
   * Limits over every call of the check — attempts, samples, call retries, escalations.
   * Before each call the budget is checked against the usage reported so far; when the next
   * call could pass it, no call starts and the result is UNCERTAIN with `method: 'budget'`.
   * A token or cost limit needs every call to report its usage (`info.reportUsage`); a call
   * that replied without one stops the run, since the budget could not be kept.
   */
  budget?: BudgetOption | null | undefined;
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
  /**
   * The application's system prompt. The model receives it through `info.messages`, which
   * the adapters send: one system message holding it and then Booth's instructions.
   */
  system?: string | null | undefined;
  /** Earlier turns of the conversation, sent through `info.messages` after the system message and before the question. */
  messages?: readonly ChatTurn[] | null | undefined;
  /**
   * Replaces Booth's instructions (the envelope's keys, in order): a string, or a function
   * of Booth's default text (`INSTRUCTIONS`, or the schema's variant) returning the text to
   * use. Retry paragraphs still come before it. A text that no longer asks for the
   * envelope's keys is the caller's choice: Booth reads replies by the same rules.
   */
  instructions?: string | ((defaults: string) => string) | null | undefined;
  /**
   * Reads the model's text the caller's way, for a provider-native response format: returns
   * the envelope object (`answer` and `confidence` at least), judged by the same rules as
   * one Booth finds; a throw is a parse failure with its message, and earns a parse retry.
   */
  parseFn?: ParseFn | null | undefined;
  /**
   * How many times an AMBIGUOUS question may be clarified (with `clarify()`, or a waiting
   * run's `clarification`) before AMBIGUOUS stands: from 0 to 10, default 2.
   */
  maxClarifications?: number | undefined;
}

/** `check()`'s options with a schema whose output is `T`: name it to build the options apart from the call. */
export type TypedCheckOptions<T> = Omit<CheckOptions<T>, 'agree'> & { readonly schema: AnswerSchema<T>; agree?: TypedAgree };
/** `acheck()`'s options with a schema whose output is `T`. */
export type TypedAsyncCheckOptions<T> = Omit<AsyncCheckOptions<T>, 'agree'> & { readonly schema: AnswerSchema<T>; agree?: TypedAgree };
/** With a schema `agree` compares the model's own values, before the schema: any JSON, whatever the schema's output. */
type TypedAgree = AgreeFn<JsonValue> | null | undefined;

/** A model of a cascade: its callFn, or the callFn with a name and samples of its own. */
export type Escalate<TFn> = TFn | { readonly call: TFn; readonly name?: string | undefined; readonly samples?: SamplesOption | undefined };

export interface AsyncCheckOptions<T = string> extends Omit<CheckOptions<T>, 'onAttempt' | 'escalate'> {
  /** As for check(), with callFns that may return a Promise. */
  escalate?: readonly Escalate<AsyncCallFn>[] | null | undefined;
  /** Like `check()`'s, and awaited when it returns a Promise. */
  onAttempt?: ((index: number, attempt: Attempt<T>) => void | PromiseLike<unknown>) | null | undefined;
  /**
   * Called, synchronously, as a reply that streams arrives (a callFn returning a `ReplyStream`):
   * the attempt, the answer so far, the readings once complete. The verdict is held: it is the
   * result's, once every gate has passed. A throw stops the run and rejects `acheck()` with it; so
   * does the rejection of a Promise it returns (it is not awaited), if the run has not ended.
   */
  onPartial?: ((partial: PartialReply) => void) | null | undefined;
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
  /**
   * With `checkpoint` and `key`: an AMBIGUOUS run is kept in the store, waiting for the
   * person who asked, and the result (AMBIGUOUS) is returned. A later `acheck()` with the
   * same key and a `clarification` continues it, in any process that reaches the store.
   */
  awaitClarification?: boolean | undefined;
  /**
   * With `checkpoint` and `key`: the person's answer to the run waiting under `key` — a
   * reading's index or exact text, or `{ rephrased }`. The run continues from where it waited;
   * its finished attempts are not repeated.
   */
  clarification?: ClarificationChoice | null | undefined;
}

export interface EvidenceOptions {
  /** Lowest agreement score accepted, from 0 to 1. Default 0.7. */
  evidenceThreshold?: number | undefined;
  /** An OpenTelemetry span for the check (needs `@opentelemetry/api`); see `check()`'s. */
  telemetry?: boolean | TelemetryOptions | null | undefined;
}

type Entry = 'check' | 'acheck' | 'clarify';

const CHECK_KEYS = [
  'threshold',
  'maxRetries',
  'onAttempt',
  'schema',
  'validator',
  'samples',
  'agree',
  'confidenceFrom',
  'inspect',
  'telemetry',
  'system',
  'messages',
  'instructions',
  'parseFn',
  'modelName',
  'escalate',
  'budget',
] as const;
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
  const escalate = escalateOption(given['escalate'], 'call', entry === 'check');
  const sampling = samplingOptions(given, escalate);
  const inspect = inspector(given['inspect']);
  const signal = abortSignal(given['signal']);
  const { timeoutMs, deadlineMs, callRetries } = timers(given);
  const checkpoint = checkpointOption(given['checkpoint'], given['key']);
  const { samples, plan, agree, confidenceFrom } = sampling;
  const { system, messages, instructions: instructionText, parseFn } = conversationOptions(given, instructions(answerFormatOf(schema)));
  const { awaitClarification, maxClarifications } = clarificationOptions(given);
  const clarification = given['clarification'] ?? null;
  if ((awaitClarification || clarification !== null) && checkpoint === null) {
    throw new TypeError(
      `\`${awaitClarification ? 'awaitClarification' : 'clarification'}\` needs \`checkpoint\` and \`key\`: a run waits for its clarification in a store. Without one, continue an AMBIGUOUS result with clarify(result, choice, callFn).`,
    );
  }
  // check() calls its samples one after another.
  const sampleConcurrency = entry === 'check' ? 1 : concurrency(given['sampleConcurrency'], widestPlan(samples, escalate));
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
    plan,
    agree,
    confidenceFrom,
    sampleConcurrency,
    telemetry,
    system,
    messages,
    instructions: instructionText,
    parseFn,
    awaitClarification,
    maxClarifications,
    clarification,
    modelName: distinctlyNamed(modelNameOption(given['modelName']), escalate),
    escalate: escalate as CheckSettings['escalate'],
    budget: budgetOption(given['budget']),
    onPartial: entry === 'check' ? null : optionalFunction('onPartial', given['onPartial']),
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

function checkpointOption(store: unknown, key: unknown): CheckSettings['checkpoint'] {
  if ((store === undefined || store === null) && (key === undefined || key === null)) return null;
  const methods = ['load', 'save', 'delete'] as const;
  if (typeof store !== 'object' || store === null || methods.some((m) => typeof (store as Record<string, unknown>)[m] !== 'function')) {
    throw new TypeError(
      `Expected \`checkpoint\` to be a store with load(key), save(key, checkpoint) and delete(key), such as memoryStore() or fileStore(dir) from boothjs/node, got ${describeValue(store)}.`,
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

/** `modelName`, once the cascade's models are known to be named apart. */
function distinctlyNamed(modelName: string | null, escalate: Parameters<typeof distinctModelNames>[1]): string | null {
  distinctModelNames(modelName, escalate);
  return modelName;
}
