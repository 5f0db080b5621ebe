import type { Attempt } from '../../src/decide/attempt.js';
import type { CallRetryPolicy, CallTry } from '../../src/decide/call-retries.js';
import { AMBIGUOUS, REPAIRED, UNCERTAIN, VERIFIED } from '../../src/decide/constants.js';
import type { JsonObject } from '../../src/reply/json-objects.js';
import type { ChatMessage, ChatTurn, Clarification, SentPrompt } from '../../src/decide/prompts.js';
import type { ParseFn } from '../../src/reply/parse.js';
import type { AnswerFormat, AnswerSchema, JsonSchema, SchemaIssue } from '../../src/decide/schema.js';
import type { Validator } from '../../src/decide/validation.js';
import type { AgreeFn, ConfidenceSource } from '../../src/decide/agreement.js';
import type { Usage, UsageReport } from '../../src/decide/usage.js';
import type { Budget } from '../../src/decide/budget.js';
import type { SamplePlan, SampleStop } from '../../src/decide/sampling.js';
import type { AnswerRule } from '../../src/reply/stream-reader.js';

/** The checkpoint machine's types: its states, input, context, events and output. */

export type CheckpointState =
  | 'asking'
  | 'calling'
  | 'sampling'
  | 'agreementGate'
  | 'backingOff'
  | 'parsing'
  | 'ambiguityGate'
  | 'awaitingClarification'
  | 'schemaGate'
  | 'validationGate'
  | 'confidenceGate'
  | 'reconsidering'
  | 'escalating'
  | 'answerRefused'
  | 'verified'
  | 'repaired'
  | 'ambiguous'
  | 'uncertain'
  | 'overBudget';

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
    /** The question as the input gives it. */
    readonly question: string;
    /** The whole chat to send: the system message (system prompt, then Booth's instructions), earlier turns, the user turn. */
    readonly messages: readonly ChatMessage[];
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
  /**
   * Replies gathered per attempt, from 1 to 20; above 1 they vote. Default 1. Or
   * `{ max, min?, stop? }`: gathered in waves until the vote is settled (`stop`: `'decided'`,
   * the default, or `{ confidence }`), at most `max`.
   */
  readonly samples?: SamplesOption;
  /**
   * Sample calls in flight at once, with `effects: 'events'`; default `samples`. A workflow's
   * machine calls its samples one after another: its one `callModel` child names its events.
   */
  readonly sampleConcurrency?: number;
  /** When two sampled answers count as the same; default normalized text, or equal JSON with a schema. */
  readonly agree?: AgreeFn<never> | null;
  /** What the confidence gate judges when sampling: default `'hybrid'`. */
  readonly confidenceFrom?: ConfidenceSource;
  /** The application's system prompt: the model receives it first, then Booth's instructions, in one system message. */
  readonly system?: string | null;
  /** Earlier turns of the conversation, sent between the system message and the question. */
  readonly messages?: readonly ChatTurn[] | null;
  /** Replaces Booth's instructions: a string, or a function of Booth's default text. */
  readonly instructions?: string | ((defaults: string) => string) | null;
  /** Reads the model's text into the envelope object instead of Booth's reader; a throw is a parse failure. */
  readonly parseFn?: ParseFn | null;
  /**
   * When the question is AMBIGUOUS, wait in `awaitingClarification` for the person who asked
   * (a `clarify.chose`, `clarify.rephrased` or `clarify.cancelled` event) instead of ending.
   * Default false: AMBIGUOUS is returned at once.
   */
  readonly awaitClarification?: boolean;
  /** How many times the question may be clarified before AMBIGUOUS stands, from 0 to 10. Default 2. */
  readonly maxClarifications?: number;
  /** The name of the model `model` (or the `callModel` actor) calls: each attempt records it. */
  readonly modelName?: string | null;
  /**
   * The models to ask, in order, when one ends UNCERTAIN: each from the first prompt, with
   * retries of its own. With `effects: 'actors'` each needs its `model` (or the provided
   * `callModel` actor reads `input.stage`).
   */
  readonly escalate?: readonly EscalationInput[] | null;
  /** Limits over every call of the run; the run stops UNCERTAIN (in `overBudget`) before a call that would pass one. */
  readonly budget?: BudgetOption | null;
}

/** `samples` as the caller gives it: a count, or an adaptive plan. */
export type SamplesOption = number | { readonly max: number; readonly min?: number; readonly stop?: SampleStop };

/** A model of a cascade, as the machine's input gives it. */
export interface EscalationInput {
  readonly name?: string;
  /** The model, for the default `callModel` actor. */
  readonly model?: ModelFn;
  /** Its own `samples`; default the run's. */
  readonly samples?: SamplesOption;
}

/** `budget` as the caller gives it: any of the three limits. */
export interface BudgetOption {
  readonly maxCalls?: number;
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
}

/** One model of a run, as its settings keep it: the first is the caller's. */
export interface ModelStage {
  /** Its name; null when the run names no model. */
  readonly name: string | null;
  readonly samples: SamplePlan;
  /** Only in workflows given plain functions, for the default `callModel` actor; persistence leaves it out. */
  readonly model?: (() => ModelFn) | null;
}

/** Where a cascade moved on: the attempt the next model began with, and its name. */
export interface Escalation {
  readonly attempt: number;
  readonly model: string | null;
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
  readonly system: string | null;
  /** The earlier turns, sent between the system message and the question. */
  readonly messages: readonly ChatTurn[];
  /** The instruction text every prompt ends with, and the system message carries. */
  readonly instructions: string;
  /** A custom reader, kept as a function as `agree` is. */
  readonly parseFn: (() => ParseFn) | null;
  readonly awaitClarification: boolean;
  readonly maxClarifications: number;
  /** The models asked in turn: one without a cascade. */
  readonly models: readonly ModelStage[];
  readonly budget: Budget | null;
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
  /** Calls started so far in the run, samples' and call retries' included: the next sample call's token, and what `budget.maxCalls` counts. */
  readonly calls: number;
  /** Calls that replied with text, and usage reports received: a token or cost budget needs a report per reply. */
  readonly replies: number;
  readonly reports: number;
  /** The usage reports that gave a cost: a cost budget cannot be kept once one did not. */
  readonly priced: number;
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
  /** AMBIGUOUS while the run waits for a clarification, as when it ends so. */
  readonly status: CheckpointStatus | null;
  /** What the person who asked said, each time the question was clarified, in order. */
  readonly clarifications: readonly Clarification[];
  /** Each time the run moved on to the next model of its cascade, in order. */
  readonly escalations: readonly Escalation[];
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
  /** Each clarification of the question, in order: its rounds' attempts follow one another in `attempts`. */
  readonly clarifications: readonly Clarification[];
  /** Each move to the next model of a cascade, in order. */
  readonly escalations: readonly Escalation[];
  /** Why the run stopped before a call its budget could not afford; null unless it did. */
  readonly budgetStop: string | null;
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
  /**
   * While `calling` or `sampling`, from a reply that streams: what its leading object made
   * known so far, sent only when it changes a decision's footing (the `ambiguous` member
   * complete, the `interpretations` complete, an answer member of a type the schema refuses),
   * never per chunk. `call` is the call's token (`sample` with samples). The finished reply
   * still comes as `model.replied` / `sample.replied`.
   */
  | { readonly type: 'reply.ambiguityKnown'; readonly call: number; readonly sample?: number; readonly heard: Heard }
  | { readonly type: 'reply.readingsComplete'; readonly call: number; readonly sample?: number; readonly heard: Heard }
  /** A completed answer member of a type the schema refuses: `issues` are the schema's own, for that member. */
  | { readonly type: 'reply.memberFailed'; readonly call: number; readonly sample?: number; readonly heard: Heard; readonly issues: readonly SchemaIssue[] }
  /** At any time: what a call of attempt `attempt` consumed, as its callFn reported it. */
  | { readonly type: 'model.usage'; readonly usage: Usage; readonly attempt: number }
  /** While `awaitingClarification`: the person chose one of the readings offered (its exact text). */
  | { readonly type: 'clarify.chose'; readonly reading: string }
  /** While `awaitingClarification`: the person asked the question again in their own words. */
  | { readonly type: 'clarify.rephrased'; readonly question: string }
  /** While `awaitingClarification`: nobody will clarify; the run ends AMBIGUOUS. */
  | { readonly type: 'clarify.cancelled' }
  /** Sent once after a persisted snapshot is restored: it re-arms the timers, which do not persist, and restarts the attempt's clock. */
  | { readonly type: 'booth.resumed' }
  /** Raised by the machine itself, after `timeoutMs` in `calling`, at the deadline, and when a backoff ends. */
  | { readonly type: 'model.timedOut' }
  | { readonly type: 'run.deadline' }
  | { readonly type: 'backoff.elapsed' }
  | { readonly type: 'sample.timedOut'; readonly sample: number; readonly call: number }
  | { readonly type: 'sample.backoffElapsed'; readonly sample: number; readonly call: number };

/** What a streaming reply has made known so far: the reader's knowledge, and the text it read. */
export interface Heard {
  readonly ambiguous: boolean | null;
  readonly interpretations: readonly string[] | null;
  readonly text: string;
}

/** What the `callModel` actor is asked. */
export interface ModelCall {
  readonly prompt: string;
  readonly attempt: number;
  readonly model: ModelFn | null;
  /** The JSON Schema of the reply asked for, as `check()` gives it to a callFn: for structured output. */
  readonly replySchema: JsonSchema;
  /** Which sample this call is, when the attempt samples several replies. */
  readonly sample?: number;
  /** Which model of the cascade is asked: 0 for the first, the input's `model`. */
  readonly stage?: number;
  readonly question: string;
  readonly messages: readonly ChatMessage[];
  /** Sends the machine a `model.usage` event: give it to the model as `info.reportUsage`. */
  readonly reportUsage?: (usage: UsageReport) => void;
  /** The call's token, which a streamed reply's news names. */
  readonly call?: number;
  /** What the answer's schema says of types, for a streamed reply's members; null without one. */
  readonly answerRule?: AnswerRule | null;
  /** The schema, which confirms a member the rule flags before the attempt fails. */
  readonly schema?: AnswerSchema | null;
  /** Sends the machine a streamed reply's news (`reply.ambiguityKnown` and the rest). */
  readonly hear?: (event: CheckpointEvent) => void;
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

/** Which sample, and which of its calls, an event or a timer is about. */
export type SampleParams = { readonly sample: number; readonly call: number };

/**
 * One of the k calls an attempt makes when it samples: its place in the queue, its call
 * and retries, and once done the reply, read as a one-sample attempt would be.
 */
export interface SampleSlot {
  /**
   * `held`: not in a wave yet (adaptive samples); `queued`: in the wave, waiting for a free
   * call; `skipped`: aborted in flight once the vote was settled.
   */
  readonly state: 'held' | 'queued' | 'calling' | 'backingOff' | 'done' | 'skipped';
  /** The token of its latest call, unique within the run: a reply or timer for an older call is ignored. */
  readonly call: number;
  readonly tries: readonly CallTry[];
  /** The wait chosen before its next try. */
  readonly backoffMs: number;
  readonly reply: Attempt<unknown> | null;
}
