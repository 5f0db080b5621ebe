import {
  type AnyStateMachine,
  and,
  assign,
  cancel,
  type DoneActorEvent,
  type ErrorActorEvent,
  type EventObject,
  enqueueActions,
  fromPromise,
  raise,
  setup,
  stopChild,
} from 'xstate';
import {
  type Attempt,
  attemptFromCallError,
  attemptFromNonText,
  attemptFromRawText,
  attemptFromReply,
  finished,
  NO_REPLY_YET,
  timeoutError,
  withSchemaVerdict,
  withVerdict,
} from '../src/attempt.js';
import { appending, CHILD, cancelling, cancellingBy, raising, remember, schedule, type Timer, update } from './effects.js';
import { backoffDelay, type CallRetryPolicy, type CallTry, isTransient, retryAfterOf } from '../src/call-retries.js';
import { AMBIGUOUS, DEFAULT_MAX_RETRIES, DEFAULT_THRESHOLD, REPAIRED, UNCERTAIN, VERIFIED } from '../src/constants.js';
import type { JsonObject } from '../src/json-objects.js';
import { type AnswerFormat, firstPrompt, type PreviousAttempt, type RetryKind, retryPrompt, type SentPrompt } from '../src/prompts.js';
import {
  type AnswerSchema,
  answerForSchema,
  answerFormatOf,
  type JsonSchema,
  replySchemaOf,
  schemaFailure,
  schemaThrew,
  verdictFromResult,
} from '../src/schema.js';
import { type Validator, verdictFromReturn, verdictFromThrow } from '../src/validation.js';
import { type MachineInput, readMachineInput } from '../src/options.js';
import { type AgreeFn, agreementOf, type ConfidenceSource, defaultAgree } from '../src/agreement.js';
import { keyArrived, QUEUED, type SampleSlot, type VoteSettings, votedAttempt } from '../src/sampling.js';
import { describeThrown } from '../src/values.js';
import { addUsage, totalUsage, type Usage, type UsageReport, usageFromReport } from '../src/usage.js';

/**
 * The checkpoint: every decision Booth makes about a model's replies lives here.
 *
 * Per attempt: `asking` routes to one call or to several samples. `calling` waits for the
 * model's reply to the last prompt sent (a failed call may first go `backingOff` and try
 * again); `parsing` reads it. With `samples` above 1, `sampling` gathers that many replies
 * instead, each read as it arrives, and `agreementGate` votes: the winning answer goes on
 * with the vote's confidence, and a split vote earns a `disagreement` retry. `ambiguityGate`
 * returns an ambiguous question at once; `schemaGate`, entered only when there is a
 * schema, turns the answer into the schema's output or fails it with the schema's issues;
 * `validationGate`, entered only when there is a validator, waits for its verdict;
 * `confidenceGate` accepts a confident answer. A
 * rejected attempt goes to `reconsidering`, which picks the retry prompt, or to
 * `uncertain` when no attempts (or no time) remain.
 *
 * Who calls the model and the validator is the runner's choice (`input.effects`):
 * `check()` and `acheck()` do it themselves and report back with events, which keeps the
 * machine pure data; a parent workflow lets the machine spawn its `callModel` and
 * `validate` actors. Both paths meet in the same events, so every decision is made once.
 */

export type CheckpointState =
  | 'asking'
  | 'calling'
  | 'sampling'
  | 'agreementGate'
  | 'backingOff'
  | 'parsing'
  | 'ambiguityGate'
  | 'schemaGate'
  | 'validationGate'
  | 'confidenceGate'
  | 'reconsidering'
  | 'verified'
  | 'repaired'
  | 'ambiguous'
  | 'uncertain';

export type CheckpointStatus = typeof VERIFIED | typeof REPAIRED | typeof AMBIGUOUS | typeof UNCERTAIN;

/** One step of a run: a state the machine entered, during which attempt. */
export interface TraceStep<TState extends string = CheckpointState> {
  readonly state: TState;
  readonly attempt: number;
}

/** A model call as a plain function: the prompt in, the raw text (or a Promise of it) out. */
export type ModelFn = (
  prompt: string,
  info: {
    readonly attempt: number;
    readonly signal: AbortSignal;
    readonly replySchema: JsonSchema;
    readonly sample?: number;
    /** Tell the run what this call consumed: the attempt's and the result's `usage` add it up. */
    readonly reportUsage: (usage: UsageReport) => void;
  },
) => unknown;

/**
 * A validator in a workflow, where it may also answer with a Promise. With a schema in the
 * input it judges the schema's output: give it with `validatorActor<T>()`, which types it.
 */
export type WorkflowValidator<T = string> = (answer: T) => ReturnType<Validator> | PromiseLike<ReturnType<Validator>>;

export interface CheckpointInput {
  /** The question, as the caller wrote it. */
  readonly prompt: string;
  /** Lowest confidence accepted, from 0 to 1. Default 0.7. */
  readonly threshold?: number;
  /** Reconsiderations allowed after the first attempt: at most `maxRetries + 1` attempts. Default 1. */
  readonly maxRetries?: number;
  /**
   * `'actors'` (the default, for workflows): the machine spawns its `callModel` actor for
   * each call and its `validate` actor for each verdict. `'events'`: whoever runs the
   * machine sends `model.replied` / `model.failed` and `validator.returned` /
   * `validator.threw` itself, as `check()` and `acheck()` do.
   */
  readonly effects?: 'actors' | 'events';
  /** The model, for the default `callModel` actor; or `.provide()` your own `callModel` actor. */
  readonly model?: ModelFn;
  /** A validator function for the default `validate` actor, or `true` when a provided `validate` actor judges. */
  readonly validator?: WorkflowValidator | boolean;
  /** A Standard Schema (zod, valibot, arktype…) the answer must satisfy; its output becomes the answer. */
  readonly schema?: AnswerSchema | null;
  /** A call that takes longer fails as timed out. */
  readonly timeoutMs?: number | null;
  /** When this many ms have passed since the run began, no new call starts and the run ends UNCERTAIN. */
  readonly deadlineMs?: number | null;
  /** Retry failed calls (not bad answers) with jittered exponential backoff. */
  readonly callRetries?: CallRetryPolicy | null;
  /** Replies gathered per attempt, from 1 to 20; above 1 they vote. Default 1. */
  readonly samples?: number;
  /**
   * Sample calls in flight at once, with `effects: 'events'`; default `samples`. A workflow's
   * machine calls its samples one after another: its one `callModel` child names its events.
   */
  readonly sampleConcurrency?: number;
  /** When two sampled answers count as the same; default normalized text, or equal JSON with a schema. */
  readonly agree?: AgreeFn<never> | null;
  /** What the confidence gate judges when sampling: default `'hybrid'`. */
  readonly confidenceFrom?: ConfidenceSource;
}

/** What a run was asked to do; set once when it starts. */
export interface CheckpointSettings {
  readonly prompt: string;
  readonly threshold: number;
  readonly maxRetries: number;
  readonly effects: 'actors' | 'events';
  /** Only in workflows given a plain function: functions do not survive persistence. */
  readonly model: ModelFn | null;
  /** What it is given is the answer: a string, or with a schema the schema's output. */
  readonly validator: WorkflowValidator<unknown> | null;
  readonly hasValidator: boolean;
  /** Only in workflows: the schema, for the default `checkSchema` actor. Kept as a function, which persistence leaves out. */
  readonly schema: (() => AnswerSchema) | null;
  /** What the answer must be, as the prompts say it: null for free text, or the schema's description. */
  readonly answerFormat: AnswerFormat | null;
  readonly timeoutMs: number | null;
  readonly deadlineMs: number | null;
  /** Epoch ms after which no new call starts; null without a deadline. */
  readonly deadlineAt: number | null;
  readonly callRetries: CallRetryPolicy | null;
  readonly samples: number;
  readonly sampleConcurrency: number;
  readonly confidenceFrom: ConfidenceSource;
  /** A custom `agree`, kept as a function, which persistence leaves out: a resumed run is given it again. */
  readonly agree: (() => AgreeFn<unknown>) | null;
}

/**
 * The machine's data. The settings sit in one object of their own: the context is copied
 * on every update, and a flat context this wide would drop out of V8's fast object mode
 * and make every copy several times slower.
 */
export interface CheckpointContext {
  readonly settings: CheckpointSettings;
  /** Index of the attempt under way, from 0. */
  readonly attempt: number;
  /** Epoch ms when the attempt under way made its first call: attempts record how long they took. */
  readonly startedAt: number;
  /** The prompts sent so far, one per attempt: the last is the one the model is answering. */
  readonly prompts: readonly SentPrompt[];
  /** The calls made for the attempt under way, so far. */
  readonly tries: readonly CallTry[];
  /** The wait chosen before the next try. */
  readonly backoffMs: number;
  /** The attempt under way, completed step by step; once committed, the latest attempt. */
  readonly draft: Attempt<unknown>;
  /** The samples of the attempt under way; empty for a one-sample run. */
  readonly slots: readonly SampleSlot[];
  /** Sample calls made so far in the run: the next call's token. */
  readonly calls: number;
  /** The samples whose call or backoff the last update started: their timers are armed next. */
  readonly started: readonly number[];
  /** What the calls of the attempt under way have consumed so far, as reported; null until one reports. */
  readonly usage: Usage | null;
  /** What calls reported after their attempt was committed (an abandoned call's late report): the result's, no attempt's. */
  readonly lateUsage: Usage | null;
  /** True while the schema's or the validator's verdict on the draft is outstanding. */
  readonly awaitingVerdict: boolean;
  /** Finished attempts, frozen, in order. */
  readonly attempts: readonly Attempt<unknown>[];
  readonly trace: readonly TraceStep[];
  readonly status: CheckpointStatus | null;
}

/** What a run was asked to do, as plain data: results and traces show it. */
export interface RunSettings {
  readonly threshold: number;
  readonly maxRetries: number;
  /** Whether a validator judged the answers. */
  readonly validator: boolean;
  /** Whether a schema judged (and typed) the answers. */
  readonly schema: boolean;
  readonly timeoutMs: number | null;
  readonly deadlineMs: number | null;
  readonly callRetries: CallRetryPolicy | null;
  /** Replies gathered per attempt. */
  readonly samples: number;
  /** What the confidence gate judged: `'self'` with one sample. */
  readonly confidenceFrom: ConfidenceSource;
}

/**
 * The result data of a run; `check()` wraps it in a `BoothResult`. `TAnswer` is the
 * answer's type: a string, as the machine declares it; with a schema in the input it is
 * the schema's output (for AMBIGUOUS, the model's own value), which `resultFrom<T>()` types.
 */
export interface CheckpointOutput<TAnswer = string> {
  readonly settings: RunSettings;
  readonly status: CheckpointStatus;
  readonly answer: TAnswer | null;
  readonly confidence: number | null;
  /** With several samples, the winning cluster's share of the parsed samples; otherwise null. */
  readonly agreement: number | null;
  readonly ambiguous: boolean;
  readonly interpretations: readonly string[];
  readonly parsed: JsonObject | null;
  readonly attempts: readonly Attempt<TAnswer>[];
  readonly prompts: readonly SentPrompt[];
  readonly trace: readonly TraceStep[];
  /** The attempts' usage summed, failed calls and late reports included; null when no call reported usage. */
  readonly usage: Usage | null;
  /** The attempts' `durationMs` summed: the time the run spent deciding, which a resumed run keeps. */
  readonly durationMs: number;
}

/**
 * What the world tells the machine. While `calling`, the model's reply to the last of
 * `context.prompts` (any value: the machine judges non-strings) or what the call threw;
 * while in `schemaGate`, the Standard Schema result of validating
 * `context.draft.parsed.answer` or what validating threw; while in `validationGate`, what
 * the validator returned for `context.draft.answer` or what it threw.
 */
export type CheckpointEvent =
  | { readonly type: 'model.replied'; readonly reply: unknown }
  | { readonly type: 'model.failed'; readonly error: unknown }
  | { readonly type: 'schema.returned'; readonly result: unknown }
  | { readonly type: 'schema.threw'; readonly error: unknown }
  | { readonly type: 'validator.returned'; readonly value: unknown }
  | { readonly type: 'validator.threw'; readonly error: unknown }
  /** While `sampling`: the reply to, or the failure of, sample `sample`'s call `call` (the token its need gave). */
  | { readonly type: 'sample.replied'; readonly sample: number; readonly call: number; readonly reply: unknown }
  | { readonly type: 'sample.failed'; readonly sample: number; readonly call: number; readonly error: unknown }
  /** At any time: what a call of attempt `attempt` consumed, as its callFn reported it. */
  | { readonly type: 'model.usage'; readonly usage: Usage; readonly attempt: number }
  /** Sent once after a persisted snapshot is restored: it re-arms the timers, which do not persist, and restarts the attempt's clock. */
  | { readonly type: 'booth.resumed' }
  /** Raised by the machine itself, after `timeoutMs` in `calling`, at the deadline, and when a backoff ends. */
  | { readonly type: 'model.timedOut' }
  | { readonly type: 'run.deadline' }
  | { readonly type: 'backoff.elapsed' }
  | { readonly type: 'sample.timedOut'; readonly sample: number; readonly call: number }
  | { readonly type: 'sample.backoffElapsed'; readonly sample: number; readonly call: number };

/** What the `callModel` actor is asked. */
export interface ModelCall {
  readonly prompt: string;
  readonly attempt: number;
  readonly model: ModelFn | null;
  /** The JSON Schema of the reply asked for, as `check()` gives it to a callFn: for structured output. */
  readonly replySchema: JsonSchema;
  /** Which sample this call is, when the attempt samples several replies. */
  readonly sample?: number;
  /** Sends the machine a `model.usage` event: give it to the model as `info.reportUsage`. */
  readonly reportUsage?: (usage: UsageReport) => void;
}

/** What the `validate` actor is asked. */
export interface ValidationRequest {
  /** The answer: with a schema in the input, the schema's output. */
  readonly answer: string;
  readonly validator: WorkflowValidator<unknown> | null;
}

/** What the `checkSchema` actor is asked: the model's answer, and the schema to validate it with. */
export interface SchemaRequest {
  readonly answer: unknown;
  readonly schema: AnswerSchema | null;
}

const enter = (state: CheckpointState) => ({ type: 'enter', params: { state } }) as const;
const conclude = (status: CheckpointStatus) => ({ type: 'conclude', params: { status } }) as const;
const retryWith = (kind: RetryKind) => ({ type: 'prepareRetry', params: { kind } }) as const;
// Spawned actors' done and error events are not part of the machine's typed events.
const outputOf = (event: EventObject): unknown => (event as DoneActorEvent).output;
const errorOf = (event: EventObject): unknown => (event as ErrorActorEvent).error;
const timeLeft = ({ settings }: CheckpointContext) => settings.deadlineAt === null || Date.now() < settings.deadlineAt;
// Timer ids only tell the machine's timers apart: any three distinct names would do.
// Stryker disable next-line StringLiteral: a timer id is a name, not a behaviour
const CALL_TIMEOUT = 'callTimeout';
// Stryker disable next-line StringLiteral: a timer id is a name, not a behaviour
const BACKOFF = 'backoff';
/** `[...list, item]` as V8 builds it fastest: a spread goes through the iterator protocol. */
function appended<T>(list: readonly T[], item: T): T[] {
  const copy = list.slice();
  copy.push(item);
  return copy;
}
const firstTry = (tries: readonly CallTry[]): CallTry[] => appended(tries, { error: null, delayMs: null });

/** `context.slots` with sample `sample` replaced. */
function withSlot(context: CheckpointContext, sample: number, slot: SampleSlot): SampleSlot[] {
  const slots = context.slots.slice();
  slots[sample] = slot;
  return slots;
}

/** Starts queued samples, in order, while fewer than `sampleConcurrency` are calling or backing off. */
function startQueued(context: CheckpointContext, slots: SampleSlot[], started: number[] = []): Partial<CheckpointContext> {
  let { calls } = context;
  let active = slots.filter((slot) => slot.state === 'calling' || slot.state === 'backingOff').length;
  for (let i = 0; i < slots.length && active < context.settings.sampleConcurrency; i += 1) {
    if (slots[i]!.state !== 'queued') continue;
    slots[i] = { state: 'calling', call: calls, tries: [], backoffMs: 0, reply: null };
    calls += 1;
    active += 1;
    started.push(i);
  }
  return { slots, calls, started };
}

/** How the samples vote: a custom `agree`, or the default for the answer's kind. */
function voteSettings({ answerFormat, agree, confidenceFrom }: CheckpointSettings): VoteSettings {
  const typed = answerFormat !== null;
  return { typed, agree: agree?.() ?? defaultAgree(typed), confidenceFrom };
}

/** The sample under way when a workflow's one `callModel` child answers: a workflow calls one sample at a time. */
function callingSample(context: CheckpointContext): { sample: number; call: number } {
  const sample = context.slots.findIndex((slot) => slot.state === 'calling');
  return { sample, call: context.slots[sample]?.call ?? -1 };
}

type SampleParams = { readonly sample: number; readonly call: number };

const timers = {
  callTimeout: ({ settings }: CheckpointContext): Timer<CheckpointEvent> | null =>
    settings.timeoutMs === null ? null : { id: CALL_TIMEOUT, delay: settings.timeoutMs, event: { type: 'model.timedOut' } },
  deadline: ({ settings }: CheckpointContext): Timer<CheckpointEvent> | null =>
    // Stryker disable next-line StringLiteral: a timer id is a name, not a behaviour
    settings.deadlineAt === null ? null : { id: 'deadline', delay: Math.max(0, settings.deadlineAt - Date.now()), event: { type: 'run.deadline' } },
  backoff: ({ backoffMs }: CheckpointContext): Timer<CheckpointEvent> | null => ({ id: BACKOFF, delay: backoffMs, event: { type: 'backoff.elapsed' } }),
};

const sampleTimeoutId = (call: number) => `callTimeout.${call}`;

/** A sample's timer: its call's timeout, or the end of its backoff. Ids name the call, so no two runs' timers collide. */
function sampleTimer(context: CheckpointContext, sample: number): Timer<CheckpointEvent> | null {
  const { state, call, backoffMs } = context.slots[sample]!;
  const { timeoutMs } = context.settings;
  if (state === 'backingOff') return { id: `backoff.${call}`, delay: backoffMs, event: { type: 'sample.backoffElapsed', sample, call } };
  if (state === 'calling' && timeoutMs !== null) return { id: sampleTimeoutId(call), delay: timeoutMs, event: { type: 'sample.timedOut', sample, call } };
  return null;
}
type TimerName = keyof typeof timers;
const arm = (timer: TimerName) => ({ type: 'arm', params: { timer } }) as const;
const armSamples = (all: boolean) => ({ type: 'armSamples', params: { all } }) as const;

/**
 * What each action does, as plain functions: the actions in `setup()` below wrap them, and
 * the compiled stepper (src/stepper.ts) calls them directly.
 */
export const checkpointEffects = {
  enter: appending('trace', (context: CheckpointContext, { state }: { state: CheckpointState }): TraceStep => ({ state, attempt: context.attempt })),
  // Timers are delayed events raised only when asked for: a run without them schedules nothing.
  arm: schedule((context: CheckpointContext, { timer }: { timer: TimerName }) => timers[timer](context)),
  endCall: cancelling(CALL_TIMEOUT),
  endBackoff: cancelling(BACKOFF),
  startCall: CHILD,
  startValidation: CHILD,
  stopValidation: CHILD,
  failOnTimeout: raising(
    (context: CheckpointContext, _: undefined): CheckpointEvent => ({
      type: 'model.failed',
      error: timeoutError(`callFn timed out after ${context.settings.timeoutMs} ms`),
    }),
  ),
  forwardReply: raising((_: CheckpointContext, { reply }: { reply: unknown }): CheckpointEvent => ({ type: 'model.replied', reply })),
  forwardCallError: raising((_: CheckpointContext, { error }: { error: unknown }): CheckpointEvent => ({ type: 'model.failed', error })),
  forwardVerdict: raising((_: CheckpointContext, { value }: { value: unknown }): CheckpointEvent => ({ type: 'validator.returned', value })),
  forwardValidatorError: raising((_: CheckpointContext, { error }: { error: unknown }): CheckpointEvent => ({ type: 'validator.threw', error })),
  startSchema: CHILD,
  stopSchema: CHILD,
  forwardSchemaResult: raising((_: CheckpointContext, { result }: { result: unknown }): CheckpointEvent => ({ type: 'schema.returned', result })),
  forwardSchemaError: raising((_: CheckpointContext, { error }: { error: unknown }): CheckpointEvent => ({ type: 'schema.threw', error })),
  recordReply: update((context: CheckpointContext, { reply }: { reply: string }) => ({ draft: attemptFromRawText(reply, firstTry(context.tries)) })),
  parse: update((context: CheckpointContext, _: undefined) => ({
    draft: attemptFromReply(context.draft.rawText, context.draft.callTries, context.settings.answerFormat !== null),
  })),
  recordNonText: update((context: CheckpointContext, { reply }: { reply: unknown }) => ({
    draft: attemptFromNonText(reply, firstTry(context.tries)),
  })),
  recordCallError: update((context: CheckpointContext, { error }: { error: unknown }) => ({
    draft: attemptFromCallError(error, appended(context.tries, { error: describeThrown(error).message, delayMs: null })),
  })),
  scheduleTry: update((context: CheckpointContext, { error }: { error: unknown }) => {
    const policy = context.settings.callRetries ?? { retries: 0 };
    const backoffMs = backoffDelay(policy, context.tries.length + 1, retryAfterOf(error), Math.random());
    return { backoffMs, tries: appended(context.tries, { error: describeThrown(error).message, delayMs: backoffMs }) };
  }),
  awaitVerdict: update((_: CheckpointContext, __: undefined) => ({ awaitingVerdict: true })),
  recordReturn: update((context: CheckpointContext, { returned }: { returned: unknown }) => ({
    draft: withVerdict(context.draft, verdictFromReturn(returned)),
    awaitingVerdict: false,
  })),
  recordThrow: update((context: CheckpointContext, { thrown }: { thrown: unknown }) => ({
    draft: withVerdict(context.draft, verdictFromThrow(thrown)),
    awaitingVerdict: false,
  })),
  recordSchemaResult: update((context: CheckpointContext, { result }: { result: unknown }) => ({
    draft: withSchemaVerdict(context.draft, verdictFromResult(result)),
    awaitingVerdict: false,
  })),
  recordSchemaThrow: update((context: CheckpointContext, { thrown }: { thrown: unknown }) => ({
    draft: withSchemaVerdict(context.draft, schemaThrew(thrown)),
    awaitingVerdict: false,
  })),
  recordSchemaDeadline: update((context: CheckpointContext, _: undefined) => ({
    draft: withSchemaVerdict(context.draft, schemaFailure(`the deadline of ${context.settings.deadlineMs} ms passed while the schema validated`)),
    awaitingVerdict: false,
  })),
  startSampling: update((context: CheckpointContext, _: undefined) =>
    startQueued(context, Array.from({ length: context.settings.samples }, () => QUEUED)),
  ),
  // Each reply is read as it arrives, as a one-sample run reads its reply.
  recordSampleReply: update((context: CheckpointContext, { sample, reply }: { sample: number; reply: unknown }) => {
    const slot = context.slots[sample]!;
    const tries = firstTry(slot.tries);
    const typed = context.settings.answerFormat !== null;
    const read = typeof reply === 'string' ? attemptFromReply(reply, tries, typed) : attemptFromNonText(reply, tries);
    keyArrived(read, typed, context.settings.agree !== null);
    return startQueued(context, withSlot(context, sample, { ...slot, state: 'done', tries, reply: read }));
  }),
  recordSampleError: update((context: CheckpointContext, { sample, error }: { sample: number; error: unknown }) => {
    const slot = context.slots[sample]!;
    const tries = appended(slot.tries, { error: describeThrown(error).message, delayMs: null });
    return startQueued(context, withSlot(context, sample, { ...slot, state: 'done', tries, reply: attemptFromCallError(error, tries) }));
  }),
  scheduleSampleTry: update((context: CheckpointContext, { sample, error }: { sample: number; error: unknown }) => {
    const slot = context.slots[sample]!;
    const policy = context.settings.callRetries ?? { retries: 0 };
    const backoffMs = backoffDelay(policy, slot.tries.length + 1, retryAfterOf(error), Math.random());
    const tries = appended(slot.tries, { error: describeThrown(error).message, delayMs: backoffMs });
    return { slots: withSlot(context, sample, { ...slot, state: 'backingOff', tries, backoffMs }), started: [sample] };
  }),
  restartSample: update((context: CheckpointContext, { sample }: { sample: number }) => ({
    slots: withSlot(context, sample, { ...context.slots[sample]!, state: 'calling', call: context.calls }),
    calls: context.calls + 1,
    started: [sample],
  })),
  /** The timers of the samples just started, or after a resume of every sample under way. */
  armSamples: schedule((context: CheckpointContext, { all }: { all: boolean }) =>
    (all ? context.slots.map((_, i) => i) : context.started).flatMap((i) => sampleTimer(context, i) ?? []),
  ),
  failSampleOnTimeout: raising(
    (context: CheckpointContext, { sample, call }: SampleParams): CheckpointEvent => ({
      type: 'sample.failed',
      sample,
      call,
      error: timeoutError(`callFn timed out after ${context.settings.timeoutMs} ms`),
    }),
  ),
  forwardSampleReply: raising((context: CheckpointContext, { reply }: { reply: unknown }): CheckpointEvent => ({ type: 'sample.replied', ...callingSample(context), reply })),
  forwardSampleError: raising((context: CheckpointContext, { error }: { error: unknown }): CheckpointEvent => ({ type: 'sample.failed', ...callingSample(context), error })),
  startSampleCall: CHILD,
  stopSampleCall: CHILD,
  // The call answered: its timeout will not be needed.
  endSampleTimeout: cancellingBy(({ call }: { call: number }) => sampleTimeoutId(call)),
  vote: update((context: CheckpointContext, _: undefined) => ({
    draft: votedAttempt(
      context.slots.map((slot) => slot.reply!),
      voteSettings(context.settings),
    ),
  })),
  // As a one-sample run records it: a call in flight or a wait fails with a try of its own; a sample never called has none.
  recordSamplingDeadline: update((context: CheckpointContext, _: undefined) => {
    const { deadlineMs } = context.settings;
    const replies = context.slots.map((slot) => {
      if (slot.reply !== null) return slot.reply;
      if (slot.state === 'queued') return attemptFromCallError(timeoutError(`the deadline of ${deadlineMs} ms passed before this sample was called`), slot.tries);
      const late = timeoutError(`the deadline of ${deadlineMs} ms passed ${slot.state === 'calling' ? 'during the call' : 'while waiting to retry'}`);
      return attemptFromCallError(late, appended(slot.tries, { error: late.message, delayMs: null }));
    });
    return { draft: votedAttempt(replies, voteSettings(context.settings)) };
  }),
  recordUsage: update((context: CheckpointContext, { usage }: { usage: Usage }) => ({ usage: addUsage(context.usage, usage) })),
  // A run is saved as an attempt begins, and resumed to make its calls again: its time starts over, the pause not counted.
  restartClock: update((_: CheckpointContext, __: undefined) => ({ startedAt: Date.now() })),
  recordLateUsage: update((context: CheckpointContext, { usage }: { usage: Usage }) => ({ lateUsage: addUsage(context.lateUsage, usage) })),
  commitAttempt: update((context: CheckpointContext, _: undefined) => ({ attempts: withDraft(context) })),
  prepareRetry: update((context: CheckpointContext, { kind }: { kind: RetryKind }) => ({
    attempt: context.attempt + 1,
    startedAt: Date.now(),
    tries: [],
    usage: null,
    prompts: appended(context.prompts, Object.freeze({ kind, text: nextPrompt(context, kind) })),
  })),
  conclude: update((context: CheckpointContext, { status }: { status: CheckpointStatus }) => ({ attempts: withDraft(context), status })),
} as const;

/** The prompt of the next attempt; a typed answer is quoted as the model wrote it, whatever the schema made of it. */
export function nextPrompt({ settings, draft }: Pick<CheckpointContext, 'settings' | 'draft'>, kind: RetryKind): string {
  const { answerFormat } = settings;
  // The draft itself, not a spread of it: V8 copies a literal-shaped object several times slower.
  const previous: PreviousAttempt =
    answerFormat === null
      ? draft
      : {
          answer: draft.parsed?.['answer'] ?? null,
          confidence: draft.confidence,
          error: draft.error,
          validationError: draft.validationError,
          clusters: draft.clusters ?? null,
        };
  return retryPrompt(settings.prompt, kind, previous, answerFormat);
}

/** The finished attempts with the draft committed: frozen, so no callback can change what was decided. */
function withDraft(context: CheckpointContext): readonly Attempt<unknown>[] {
  return appended(context.attempts, finished(context.draft, Date.now() - context.startedAt, context.usage));
}

type GuardArgs = { readonly context: CheckpointContext };
/** Every decision the machine makes, as a question about its context (or the event's payload). */
const guards = {
  canRetry: ({ context }: GuardArgs) => context.attempt < context.settings.maxRetries && timeLeft(context),
  canRetryCall: ({ context }: GuardArgs, { error }: { error: unknown }) => {
    const policy = context.settings.callRetries;
    return policy !== null && context.tries.length < policy.retries && isTransient(error) && timeLeft(context);
  },
  isText: (_: GuardArgs, { reply }: { reply: unknown }) => typeof reply === 'string',
  parseFailed: ({ context }: GuardArgs) => !context.draft.parseOk,
  isAmbiguous: ({ context }: GuardArgs) => context.draft.ambiguous,
  hasValidator: ({ context }: GuardArgs) => context.settings.hasValidator,
  hasSchema: ({ context }: GuardArgs) => context.settings.answerFormat !== null,
  passedValidation: ({ context }: GuardArgs) => !context.awaitingVerdict && context.draft.passedValidation,
  failedValidation: ({ context }: GuardArgs) => !context.awaitingVerdict && !context.draft.passedValidation,
  // Asked only of a draft that parsed, which has a confidence.
  isConfident: ({ context }: GuardArgs) => context.draft.confidence! >= context.settings.threshold,
  isFirstAttempt: ({ context }: GuardArgs) => context.attempt === 0,
  callFailed: ({ context }: GuardArgs) => context.draft.callFailed,
  isSampling: ({ context }: GuardArgs) => context.settings.samples > 1,
  allSampled: ({ context }: GuardArgs) => context.slots.every((slot) => slot.state === 'done'),
  // A reply or timer for a call the sample no longer waits for (it timed out, or was retried) changes nothing.
  isCurrentCall: ({ context }: GuardArgs, { sample, call }: SampleParams) => isSlot(context, sample, call, 'calling'),
  isCurrentBackoff: ({ context }: GuardArgs, { sample, call }: SampleParams) => isSlot(context, sample, call, 'backingOff'),
  canRetrySampleCall: ({ context }: GuardArgs, { sample, call, error }: SampleParams & { error: unknown }) => {
    const policy = context.settings.callRetries;
    const slot = context.slots[sample];
    return (
      isSlot(context, sample, call, 'calling') && policy !== null && slot!.tries.length < policy.retries && isTransient(error) && timeLeft(context)
    );
  },
  isSplit: ({ context }: GuardArgs) => (context.draft.clusters?.length ?? 0) > 1,
  // A call abandoned by an earlier attempt may report what it cost after that attempt was committed.
  isCurrentAttempt: ({ context }: GuardArgs, { attempt }: { attempt: number }) => attempt === context.attempt,
};

function isSlot(context: CheckpointContext, sample: number, call: number, state: SampleSlot['state']): boolean {
  const slot = context.slots[sample];
  return slot !== undefined && slot.state === state && slot.call === call;
}
type GuardName = keyof typeof guards;
/** Both guards, in order: XState's `and()`, noted for the stepper. */
const allOf = <const TNames extends readonly [GuardName, GuardName]>(names: TNames) =>
  remember(and<CheckpointContext, CheckpointEvent, [...TNames]>(names as never), names);

/** A workflow's model reports usage to the run that called it, as an interpreter's callFn does; a finished run has no use for it. */
function usageReporter(run: { send(event: CheckpointEvent): void; getSnapshot(): { status: string } }, attempt: number): (report: UsageReport) => void {
  return (report) => {
    const usage = usageFromReport(report);
    if (run.getSnapshot().status === 'active') run.send({ type: 'model.usage', usage, attempt });
  };
}

/** Calls the model once. The default runs `input.model`; provide a `fromPromise` of your own instead. */
const defaultCallModel = fromPromise<unknown, ModelCall>(async ({ input, signal }) => {
  // Checked at start; a run resumed from a persisted snapshot has lost its functions, though.
  if (!input.model) throw new TypeError('No model: pass `model` in the input or provide a `callModel` actor.');
  const { attempt, replySchema, sample } = input;
  // An input built by other code may have left it out.
  const reportUsage = input.reportUsage ?? ((report: UsageReport) => void usageFromReport(report));
  return input.model(input.prompt, sample === undefined ? { attempt, signal, replySchema, reportUsage } : { attempt, signal, replySchema, sample, reportUsage });
});
/** Validates one answer against the schema, resolving to its Standard Schema result. Provide your own to validate elsewhere. */
const defaultCheckSchema = fromPromise<unknown, SchemaRequest>(async ({ input }) => {
  if (!input.schema) throw new TypeError('No schema: pass `schema` in the input or provide a `checkSchema` actor.');
  return input.schema['~standard'].validate(input.answer);
});
/** Judges one answer. The default runs `input.validator`; provide a `fromPromise` of your own instead. */
const defaultValidate = fromPromise<unknown, ValidationRequest>(async ({ input }) => {
  if (!input.validator) throw new TypeError('No validator: pass `validator` in the input or provide a `validate` actor.');
  return input.validator(input.answer);
});

/**
 * In a workflow the machine calls the model itself, so a run without a model (or with
 * `validator: true` but no `validate` actor) cannot do its job: that is the caller's
 * mistake, reported when the actor starts, not an attempt that fails on every retry.
 */
function requireImplementations(input: MachineInput, machine: AnyStateMachine): void {
  const { actors } = machine.implementations;
  if (input.model === null && actors['callModel'] === defaultCallModel) {
    throw new TypeError(
      'No model: the checkpoint machine calls the model itself in a workflow; pass `model: (prompt, { attempt, signal }) => …` in its input, provide a `callModel` actor (modelActor(fn)), or use effects: \'events\' and send the replies.',
    );
  }
  if (input.validator === true && actors['validate'] === defaultValidate) {
    throw new TypeError(
      'No validator: the input says `validator: true`, but no `validate` actor is provided; pass the validator function itself, or provide one with validatorActor(fn).',
    );
  }
}

export const checkpointMachine = setup({
  // Stryker disable next-line ObjectLiteral: types exist for TypeScript alone
  types: {
    input: {} as CheckpointInput,
    context: {} as CheckpointContext,
    output: {} as CheckpointOutput,
    events: {} as CheckpointEvent,
  },
  actors: { callModel: defaultCallModel, checkSchema: defaultCheckSchema, validate: defaultValidate },
  guards,
  actions: {
    enter: assign(({ context }, params: { state: CheckpointState }) => ({ trace: appended(context.trace, checkpointEffects.enter.run(context, params)) })),
    arm: enqueueActions(({ context, enqueue }, params: { timer: TimerName }) => {
      const timer = checkpointEffects.arm.run(context, params) as Timer<CheckpointEvent> | null;
      if (timer !== null) enqueue.raise(timer.event, { id: timer.id, delay: timer.delay });
    }),
    startCall: enqueueActions(({ context, enqueue, self }) => {
      if (context.settings.effects !== 'actors') return;
      const prompt = context.prompts.at(-1)!.text;
      const { model, answerFormat } = context.settings;
      const input: ModelCall = { prompt, attempt: context.attempt, model, replySchema: replySchemaOf(answerFormat), reportUsage: usageReporter(self, context.attempt) };
      enqueue.spawnChild('callModel', { id: 'callModel', input });
    }),
    endCall: enqueueActions(({ context, enqueue }) => {
      enqueue.cancel(checkpointEffects.endCall.id);
      // Without a child (effects: 'events') stopping it does nothing.
      enqueue.stopChild('callModel');
    }),
    endBackoff: cancel(checkpointEffects.endBackoff.id),
    startValidation: enqueueActions(({ context, enqueue }) => {
      if (context.settings.effects !== 'actors') return;
      // Only a draft that parsed is validated, and it has an answer.
      // With a schema the answer is its output, not a string: validatorActor<T>() types it so.
      const answer = context.draft.answer as string;
      enqueue.spawnChild('validate', { id: 'validate', input: { answer, validator: context.settings.validator } });
    }),
    stopValidation: stopChild('validate'),
    startSchema: enqueueActions(({ context, enqueue }) => {
      if (context.settings.effects !== 'actors') return;
      // Only a draft that parsed is checked, and it has an answer.
      enqueue.spawnChild('checkSchema', {
        id: 'checkSchema',
        input: { answer: answerForSchema(context.draft), schema: context.settings.schema?.() ?? null },
      });
    }),
    stopSchema: stopChild('checkSchema'),
    startSampling: assign(({ context }) => checkpointEffects.startSampling.run(context, undefined)),
    recordSampleReply: assign(({ context }, params: { sample: number; reply: unknown }) => checkpointEffects.recordSampleReply.run(context, params)),
    recordSampleError: assign(({ context }, params: { sample: number; error: unknown }) => checkpointEffects.recordSampleError.run(context, params)),
    scheduleSampleTry: assign(({ context }, params: { sample: number; error: unknown }) => checkpointEffects.scheduleSampleTry.run(context, params)),
    restartSample: assign(({ context }, params: { sample: number }) => checkpointEffects.restartSample.run(context, params)),
    armSamples: enqueueActions(({ context, enqueue }, params: { all: boolean }) => {
      for (const timer of checkpointEffects.armSamples.run(context, params) as Timer<CheckpointEvent>[]) enqueue.raise(timer.event, { id: timer.id, delay: timer.delay });
    }),
    failSampleOnTimeout: raise(({ context }, params: SampleParams) => checkpointEffects.failSampleOnTimeout.run(context, params)),
    forwardSampleReply: raise(({ context }, params: { reply: unknown }) => checkpointEffects.forwardSampleReply.run(context, params)),
    forwardSampleError: raise(({ context }, params: { error: unknown }) => checkpointEffects.forwardSampleError.run(context, params)),
    startSampleCall: enqueueActions(({ context, enqueue, self }) => {
      if (context.settings.effects !== 'actors') return;
      const prompt = context.prompts.at(-1)!.text;
      const { model, answerFormat } = context.settings;
      for (const sample of context.started) {
        if (context.slots[sample]!.state !== 'calling') continue;
        const input: ModelCall = { prompt, attempt: context.attempt, model, replySchema: replySchemaOf(answerFormat), sample, reportUsage: usageReporter(self, context.attempt) };
        enqueue.spawnChild('callModel', { id: 'callModel', input });
      }
    }),
    stopSampleCall: stopChild('callModel'),
    endSampleTimeout: cancel((_, params: { call: number }) => checkpointEffects.endSampleTimeout.id(params)),
    vote: assign(({ context }) => checkpointEffects.vote.run(context, undefined)),
    recordSamplingDeadline: assign(({ context }) => checkpointEffects.recordSamplingDeadline.run(context, undefined)),
    forwardSchemaResult: raise(({ context }, params: { result: unknown }) => checkpointEffects.forwardSchemaResult.run(context, params)),
    forwardSchemaError: raise(({ context }, params: { error: unknown }) => checkpointEffects.forwardSchemaError.run(context, params)),
    recordSchemaResult: assign(({ context }, params: { result: unknown }) => checkpointEffects.recordSchemaResult.run(context, params)),
    recordSchemaThrow: assign(({ context }, params: { thrown: unknown }) => checkpointEffects.recordSchemaThrow.run(context, params)),
    recordSchemaDeadline: assign(({ context }) => checkpointEffects.recordSchemaDeadline.run(context, undefined)),
    failOnTimeout: raise(({ context }) => checkpointEffects.failOnTimeout.run(context, undefined)),
    forwardReply: raise(({ context }, params: { reply: unknown }) => checkpointEffects.forwardReply.run(context, params)),
    forwardCallError: raise(({ context }, params: { error: unknown }) => checkpointEffects.forwardCallError.run(context, params)),
    forwardVerdict: raise(({ context }, params: { value: unknown }) => checkpointEffects.forwardVerdict.run(context, params)),
    forwardValidatorError: raise(({ context }, params: { error: unknown }) => checkpointEffects.forwardValidatorError.run(context, params)),
    recordReply: assign(({ context }, params: { reply: string }) => checkpointEffects.recordReply.run(context, params)),
    parse: assign(({ context }) => checkpointEffects.parse.run(context, undefined)),
    recordNonText: assign(({ context }, params: { reply: unknown }) => checkpointEffects.recordNonText.run(context, params)),
    recordCallError: assign(({ context }, params: { error: unknown }) => checkpointEffects.recordCallError.run(context, params)),
    scheduleTry: assign(({ context }, params: { error: unknown }) => checkpointEffects.scheduleTry.run(context, params)),
    awaitVerdict: assign(({ context }) => checkpointEffects.awaitVerdict.run(context, undefined)),
    recordReturn: assign(({ context }, params: { returned: unknown }) => checkpointEffects.recordReturn.run(context, params)),
    recordThrow: assign(({ context }, params: { thrown: unknown }) => checkpointEffects.recordThrow.run(context, params)),
    recordUsage: assign(({ context }, params: { usage: Usage }) => checkpointEffects.recordUsage.run(context, params)),
    restartClock: assign(({ context }) => checkpointEffects.restartClock.run(context, undefined)),
    recordLateUsage: assign(({ context }, params: { usage: Usage }) => checkpointEffects.recordLateUsage.run(context, params)),
    commitAttempt: assign(({ context }) => checkpointEffects.commitAttempt.run(context, undefined)),
    prepareRetry: assign(({ context }, params: { kind: RetryKind }) => checkpointEffects.prepareRetry.run(context, params)),
    conclude: assign(({ context }, params: { status: CheckpointStatus }) => checkpointEffects.conclude.run(context, params)),
  },
}).createMachine({
  id: 'checkpoint',
  // A workflow's machine may have its actors replaced with .provide(): the context checks the running logic's.
  context: ({ input, self }) => checkpointContext(input, (self as unknown as { logic: AnyStateMachine }).logic),
  entry: arm('deadline'),
  on: {
    'booth.resumed': { actions: ['restartClock', arm('deadline')] },
    'model.usage': [
      {
        guard: { type: 'isCurrentAttempt', params: ({ event }) => ({ attempt: event.attempt }) },
        actions: { type: 'recordUsage', params: ({ event }) => ({ usage: event.usage }) },
      },
      { actions: { type: 'recordLateUsage', params: ({ event }) => ({ usage: event.usage }) } },
    ],
  },
  initial: 'asking',
  states: {
    // Only routes, so the trace leaves it out: a one-sample run's trace is what it always was.
    asking: {
      always: [{ guard: 'isSampling', target: 'sampling' }, { target: 'calling' }],
    },
    calling: {
      entry: [enter('calling'), arm('callTimeout'), 'startCall'],
      exit: 'endCall',
      on: {
        'model.replied': [
          {
            guard: { type: 'isText', params: ({ event }) => ({ reply: event.reply }) },
            target: 'parsing',
            actions: { type: 'recordReply', params: ({ event }) => ({ reply: event.reply as string }) },
          },
          {
            guard: 'canRetry',
            target: 'reconsidering',
            actions: { type: 'recordNonText', params: ({ event }) => ({ reply: event.reply }) },
          },
          { target: 'uncertain', actions: { type: 'recordNonText', params: ({ event }) => ({ reply: event.reply }) } },
        ],
        'model.failed': [
          {
            guard: { type: 'canRetryCall', params: ({ event }) => ({ error: event.error }) },
            target: 'backingOff',
            actions: { type: 'scheduleTry', params: ({ event }) => ({ error: event.error }) },
          },
          {
            guard: 'canRetry',
            target: 'reconsidering',
            actions: { type: 'recordCallError', params: ({ event }) => ({ error: event.error }) },
          },
          { target: 'uncertain', actions: { type: 'recordCallError', params: ({ event }) => ({ error: event.error }) } },
        ],
        'model.timedOut': { actions: 'failOnTimeout' },
        'run.deadline': {
          target: 'uncertain',
          actions: {
            type: 'recordCallError',
            params: ({ context }) => ({ error: timeoutError(`the deadline of ${context.settings.deadlineMs} ms passed during the call`) }),
          },
        },
        'booth.resumed': { actions: ['restartClock', arm('deadline'), arm('callTimeout')] },
        // The spawned actor's outcome, translated into the machine's own events.
        'xstate.done.actor.callModel': { actions: { type: 'forwardReply', params: ({ event }: { event: EventObject }) => ({ reply: outputOf(event) }) } },
        'xstate.error.actor.callModel': { actions: { type: 'forwardCallError', params: ({ event }: { event: EventObject }) => ({ error: errorOf(event) }) } },
      },
    },
    backingOff: {
      entry: [enter('backingOff'), arm('backoff')],
      exit: 'endBackoff',
      on: {
        'backoff.elapsed': { target: 'calling' },
        // A snapshot keeps no timer: a run resumed while it waited to retry waits again, in full.
        'booth.resumed': { actions: ['restartClock', arm('deadline'), arm('backoff')] },
        'run.deadline': {
          target: 'uncertain',
          actions: {
            type: 'recordCallError',
            params: ({ context }) => ({ error: timeoutError(`the deadline of ${context.settings.deadlineMs} ms passed while waiting to retry`) }),
          },
        },
      },
    },
    sampling: {
      entry: [enter('sampling'), 'startSampling', armSamples(false), 'startSampleCall'],
      exit: 'stopSampleCall',
      on: {
        'sample.replied': {
          guard: { type: 'isCurrentCall', params: ({ event }) => event },
          actions: [
            'stopSampleCall',
            { type: 'endSampleTimeout', params: ({ event }) => event },
            { type: 'recordSampleReply', params: ({ event }) => event },
            armSamples(false),
            'startSampleCall',
          ],
        },
        'sample.failed': [
          {
            guard: { type: 'canRetrySampleCall', params: ({ event }) => event },
            actions: ['stopSampleCall', { type: 'endSampleTimeout', params: ({ event }) => event }, { type: 'scheduleSampleTry', params: ({ event }) => event }, armSamples(false)],
          },
          {
            guard: { type: 'isCurrentCall', params: ({ event }) => event },
            actions: [
              'stopSampleCall',
              { type: 'endSampleTimeout', params: ({ event }) => event },
              { type: 'recordSampleError', params: ({ event }) => event },
              armSamples(false),
              'startSampleCall',
            ],
          },
        ],
        'sample.timedOut': {
          guard: { type: 'isCurrentCall', params: ({ event }) => event },
          actions: { type: 'failSampleOnTimeout', params: ({ event }) => event },
        },
        'sample.backoffElapsed': {
          guard: { type: 'isCurrentBackoff', params: ({ event }) => event },
          actions: [{ type: 'restartSample', params: ({ event }) => event }, armSamples(false), 'startSampleCall'],
        },
        'run.deadline': { target: 'uncertain', actions: 'recordSamplingDeadline' },
        'booth.resumed': { actions: ['restartClock', arm('deadline'), armSamples(true)] },
        'xstate.done.actor.callModel': { actions: { type: 'forwardSampleReply', params: ({ event }: { event: EventObject }) => ({ reply: outputOf(event) }) } },
        'xstate.error.actor.callModel': { actions: { type: 'forwardSampleError', params: ({ event }: { event: EventObject }) => ({ error: errorOf(event) }) } },
      },
      always: { guard: 'allSampled', target: 'agreementGate' },
    },
    agreementGate: {
      entry: [enter('agreementGate'), 'vote'],
      always: [
        { guard: allOf(['parseFailed', 'canRetry']), target: 'reconsidering' },
        { guard: 'parseFailed', target: 'uncertain' },
        { target: 'ambiguityGate' },
      ],
    },
    parsing: {
      entry: [enter('parsing'), 'parse'],
      always: [
        { guard: allOf(['parseFailed', 'canRetry']), target: 'reconsidering' },
        { guard: 'parseFailed', target: 'uncertain' },
        { target: 'ambiguityGate' },
      ],
    },
    ambiguityGate: {
      entry: enter('ambiguityGate'),
      always: [
        { guard: 'isAmbiguous', target: 'ambiguous' },
        { guard: 'hasSchema', target: 'schemaGate' },
        { guard: 'hasValidator', target: 'validationGate' },
        { target: 'confidenceGate' },
      ],
    },
    schemaGate: {
      entry: [enter('schemaGate'), 'awaitVerdict', 'startSchema'],
      exit: 'stopSchema',
      on: {
        'schema.returned': { actions: { type: 'recordSchemaResult', params: ({ event }) => ({ result: event.result }) } },
        'schema.threw': { actions: { type: 'recordSchemaThrow', params: ({ event }) => ({ thrown: event.error }) } },
        // An asynchronous schema may outlast the run: its verdict then comes too late, and no retry starts.
        'run.deadline': { actions: 'recordSchemaDeadline' },
        'xstate.done.actor.checkSchema': { actions: { type: 'forwardSchemaResult', params: ({ event }: { event: EventObject }) => ({ result: outputOf(event) }) } },
        'xstate.error.actor.checkSchema': { actions: { type: 'forwardSchemaError', params: ({ event }: { event: EventObject }) => ({ error: errorOf(event) }) } },
      },
      always: [
        { guard: allOf(['passedValidation', 'hasValidator']), target: 'validationGate' },
        { guard: 'passedValidation', target: 'confidenceGate' },
        { guard: allOf(['failedValidation', 'canRetry']), target: 'reconsidering' },
        { guard: 'failedValidation', target: 'uncertain' },
      ],
    },
    validationGate: {
      entry: [enter('validationGate'), 'awaitVerdict', 'startValidation'],
      exit: 'stopValidation',
      on: {
        'validator.returned': { actions: { type: 'recordReturn', params: ({ event }) => ({ returned: event.value }) } },
        'validator.threw': { actions: { type: 'recordThrow', params: ({ event }) => ({ thrown: event.error }) } },
        'xstate.done.actor.validate': { actions: { type: 'forwardVerdict', params: ({ event }: { event: EventObject }) => ({ value: outputOf(event) }) } },
        'xstate.error.actor.validate': { actions: { type: 'forwardValidatorError', params: ({ event }: { event: EventObject }) => ({ error: errorOf(event) }) } },
      },
      always: [
        { guard: 'passedValidation', target: 'confidenceGate' },
        { guard: allOf(['failedValidation', 'canRetry']), target: 'reconsidering' },
        { guard: 'failedValidation', target: 'uncertain' },
      ],
    },
    confidenceGate: {
      entry: enter('confidenceGate'),
      always: [
        { guard: allOf(['isConfident', 'isFirstAttempt']), target: 'verified' },
        { guard: 'isConfident', target: 'repaired' },
        { guard: 'canRetry', target: 'reconsidering' },
        { target: 'uncertain' },
      ],
    },
    reconsidering: {
      entry: [enter('reconsidering'), 'commitAttempt'],
      always: [
        { guard: 'callFailed', target: 'asking', actions: retryWith('repeat') },
        { guard: 'parseFailed', target: 'asking', actions: retryWith('parse') },
        { guard: 'failedValidation', target: 'asking', actions: retryWith('validation') },
        { guard: 'isSplit', target: 'asking', actions: retryWith('disagreement') },
        { target: 'asking', actions: retryWith('confidence') },
      ],
    },
    verified: { type: 'final', entry: [enter('verified'), conclude(VERIFIED)] },
    repaired: { type: 'final', entry: [enter('repaired'), conclude(REPAIRED)] },
    ambiguous: { type: 'final', entry: [enter('ambiguous'), conclude(AMBIGUOUS)] },
    uncertain: { type: 'final', entry: [enter('uncertain'), conclude(UNCERTAIN)] },
  },
  // Declared with a string answer, the common case, so a workflow without a schema reads it typed.
  output: ({ context }) => checkpointOutput(context) as CheckpointOutput,
});

/**
 * The context a run starts with, from its input, checked as `check()` checks its
 * arguments; `machine` is the logic that will run it, whose actors a workflow needs.
 */
export function checkpointContext(input: CheckpointInput, machine: AnyStateMachine): CheckpointContext {
  return contextOf(readMachineInput(input), machine);
}

/** The context a run starts with, from input already checked. */
export function contextOf(checked: MachineInput, machine: AnyStateMachine): CheckpointContext {
  if (checked.effects === 'actors') requireImplementations(checked, machine);
  const { validator, schema } = checked;
  const answerFormat = answerFormatOf(schema);
  const settings: CheckpointSettings = Object.freeze({
    prompt: checked.prompt,
    threshold: checked.threshold,
    maxRetries: checked.maxRetries,
    effects: checked.effects,
    model: checked.model as ModelFn | null,
    validator: typeof validator === 'function' ? (validator as WorkflowValidator<unknown>) : null,
    hasValidator: validator !== null,
    schema: schema === null || checked.effects !== 'actors' ? null : () => schema,
    answerFormat,
    timeoutMs: checked.timeoutMs,
    deadlineMs: checked.deadlineMs,
    deadlineAt: checked.deadlineMs === null ? null : Date.now() + checked.deadlineMs,
    callRetries: checked.callRetries,
    samples: checked.samples,
    sampleConcurrency: checked.sampleConcurrency,
    confidenceFrom: checked.confidenceFrom,
    agree: checked.agree === null ? null : () => checked.agree as AgreeFn<unknown>,
  });
  return {
    settings,
    attempt: 0,
    startedAt: Date.now(),
    prompts: [Object.freeze({ kind: 'first' as const, text: firstPrompt(checked.prompt, answerFormat) })],
    tries: [],
    backoffMs: 0,
    draft: NO_REPLY_YET,
    slots: [],
    calls: 0,
    started: [],
    usage: null,
    lateUsage: null,
    // Stryker disable next-line BooleanLiteral: read only in validationGate, which sets it on entry
    awaitingVerdict: false,
    attempts: [],
    trace: [],
    status: null,
  };
}

/**
 * A run reports the last attempt that parsed: for accepted and ambiguous runs that is the
 * last attempt; an uncertain one reports the model's best try, if any.
 */
export function checkpointOutput(context: CheckpointContext): CheckpointOutput<unknown> {
  const status = context.status ?? UNCERTAIN;
  const { attempts, prompts, trace } = context;
  const last = attempts.at(-1);
  // With a schema, an answer it rejected is no answer: the last one it passed is reported.
  const reported = attempts.findLast((a) => a.parseOk && a.schemaIssues === null);
  const { settings } = context;
  return {
    settings: {
      threshold: settings.threshold,
      maxRetries: settings.maxRetries,
      validator: settings.hasValidator,
      schema: settings.answerFormat !== null,
      timeoutMs: settings.timeoutMs,
      deadlineMs: settings.deadlineMs,
      callRetries: settings.callRetries,
      samples: settings.samples,
      confidenceFrom: settings.confidenceFrom,
    },
    status,
    // An ambiguous answer never reaches the schema: it is reported as the model wrote it.
    answer: status === AMBIGUOUS && settings.answerFormat !== null ? (reported?.parsed?.['answer'] ?? null) : (reported?.answer ?? null),
    confidence: reported?.confidence ?? null,
    agreement: reported?.clusters?.length ? agreementOf(reported.clusters) : null,
    ambiguous: status === AMBIGUOUS,
    interpretations: status === AMBIGUOUS && last ? last.interpretations : [],
    parsed: reported?.parsed ?? null,
    attempts,
    prompts,
    trace,
    usage: addUsage(totalUsage(attempts.map((attempt) => attempt.usage)), context.lateUsage),
    durationMs: attempts.reduce((sum, attempt) => sum + attempt.durationMs, 0),
  };
}
