import { and, assign, setup } from 'xstate';
import { type Attempt, NO_REPLY_YET, attemptFromCallError, attemptFromNonText, attemptFromReply, withVerdict } from '../src/attempt.js';
import { AMBIGUOUS, REPAIRED, UNCERTAIN, VERIFIED } from '../src/constants.js';
import type { JsonObject } from '../src/json-objects.js';
import { firstPrompt, type RetryKind, retryPrompt, type SentPrompt } from '../src/prompts.js';
import { verdictFromReturn, verdictFromThrow } from '../src/validation.js';

/**
 * The checkpoint: every decision Booth makes about a model's replies lives here.
 *
 * Per attempt: `calling` waits for the model's reply to the last prompt sent;
 * `parsing` reads it; `ambiguityGate` returns an ambiguous question at once;
 * `validationGate`, entered only when the caller gave a validator, waits for its
 * verdict; `confidenceGate` accepts a confident answer. A rejected attempt goes to
 * `reconsidering`, which picks the retry prompt, or to `uncertain` when no attempts
 * remain.
 *
 * The machine performs no effects: whoever runs it calls the model and the validator
 * and reports back with events. That keeps it pure data (a snapshot persists as JSON)
 * and lets one machine serve the synchronous `check()` and the asynchronous `acheck()`.
 */

export type CheckpointState =
  | 'calling'
  | 'parsing'
  | 'ambiguityGate'
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

export interface CheckpointInput {
  /** The caller's question, as given. */
  readonly prompt: string;
  /** Lowest confidence accepted, in [0, 1]. */
  readonly threshold: number;
  /** Reconsiderations allowed after the first attempt: at most `maxRetries + 1` calls. */
  readonly maxRetries: number;
  /** Whether a validator will judge parsed, unambiguous answers. */
  readonly hasValidator: boolean;
}

export interface CheckpointContext extends CheckpointInput {
  /** Index of the attempt under way, from 0. */
  readonly attempt: number;
  /** The prompts sent so far, one per attempt: the last is the one the model is answering. */
  readonly prompts: readonly SentPrompt[];
  /** The attempt under way, completed step by step; once committed, the latest attempt. */
  readonly draft: Attempt;
  /** True while the validator's verdict on the draft is outstanding. */
  readonly awaitingVerdict: boolean;
  /** Finished attempts, frozen, in order. */
  readonly attempts: readonly Attempt[];
  readonly trace: readonly TraceStep[];
  readonly status: CheckpointStatus | null;
}

/** The result data of a run; `check()` wraps it in a `BoothResult`. */
export interface CheckpointOutput {
  readonly status: CheckpointStatus;
  readonly answer: string | null;
  readonly confidence: number | null;
  readonly ambiguous: boolean;
  readonly interpretations: readonly string[];
  readonly parsed: JsonObject | null;
  readonly attempts: readonly Attempt[];
  readonly prompts: readonly SentPrompt[];
  readonly trace: readonly TraceStep[];
}

/**
 * What the world tells the machine. While `calling`, the model's reply to the last of
 * `context.prompts` (any value: the machine judges non-strings) or what the call threw; while in `validationGate`, what the validator returned for `context.draft.answer`
 * or what it threw.
 */
export type CheckpointEvent =
  | { readonly type: 'model.replied'; readonly reply: unknown }
  | { readonly type: 'model.failed'; readonly error: unknown }
  | { readonly type: 'validator.returned'; readonly value: unknown }
  | { readonly type: 'validator.threw'; readonly error: unknown };

const enter = (state: CheckpointState) => ({ type: 'enter', params: { state } }) as const;
const conclude = (status: CheckpointStatus) => ({ type: 'conclude', params: { status } }) as const;
const retryWith = (kind: RetryKind) => ({ type: 'prepareRetry', params: { kind } }) as const;
/** The finished attempts with the draft committed: frozen, so no callback can change what was decided. */
const withDraft = (context: CheckpointContext): readonly Attempt[] => [...context.attempts, Object.freeze(context.draft)];

export const checkpointMachine = setup({
  types: {
    input: {} as CheckpointInput,
    context: {} as CheckpointContext,
    output: {} as CheckpointOutput,
    events: {} as CheckpointEvent,
  },
  guards: {
    canRetry: ({ context }) => context.attempt < context.maxRetries,
    isText: (_, params: { reply: unknown }) => typeof params.reply === 'string',
    parseFailed: ({ context }) => !context.draft.parseOk,
    isAmbiguous: ({ context }) => context.draft.ambiguous,
    hasValidator: ({ context }) => context.hasValidator,
    passedValidation: ({ context }) => !context.awaitingVerdict && context.draft.passedValidation,
    failedValidation: ({ context }) => !context.awaitingVerdict && !context.draft.passedValidation,
    isConfident: ({ context }) => (context.draft.confidence ?? -1) >= context.threshold,
    isFirstAttempt: ({ context }) => context.attempt === 0,
    callFailed: ({ context }) => context.draft.callFailed,
  },
  actions: {
    enter: assign(({ context }, { state }: { state: CheckpointState }) => ({
      trace: [...context.trace, { state, attempt: context.attempt }],
    })),
    recordReply: assign((_, { reply }: { reply: string }) => ({ draft: { ...NO_REPLY_YET, rawText: reply } })),
    parse: assign(({ context }) => ({ draft: attemptFromReply(context.draft.rawText) })),
    recordNonText: assign((_, { reply }: { reply: unknown }) => ({ draft: attemptFromNonText(reply) })),
    recordCallError: assign((_, { error }: { error: unknown }) => ({ draft: attemptFromCallError(error) })),
    awaitVerdict: assign({ awaitingVerdict: true }),
    recordReturn: assign(({ context }, { returned }: { returned: unknown }) => ({
      draft: withVerdict(context.draft, verdictFromReturn(returned)),
      awaitingVerdict: false,
    })),
    recordThrow: assign(({ context }, { thrown }: { thrown: unknown }) => ({
      draft: withVerdict(context.draft, verdictFromThrow(thrown)),
      awaitingVerdict: false,
    })),
    commitAttempt: assign(({ context }) => ({ attempts: withDraft(context) })),
    prepareRetry: assign(({ context }, { kind }: { kind: RetryKind }) => ({
      attempt: context.attempt + 1,
      prompts: [...context.prompts, Object.freeze({ kind, text: retryPrompt(context.prompt, kind, context.draft) })],
    })),
    conclude: assign(({ context }, { status }: { status: CheckpointStatus }) => ({ attempts: withDraft(context), status })),
  },
}).createMachine({
  id: 'checkpoint',
  context: ({ input }) => ({
    prompt: input.prompt,
    threshold: input.threshold,
    maxRetries: input.maxRetries,
    hasValidator: input.hasValidator,
    attempt: 0,
    prompts: [Object.freeze({ kind: 'first' as const, text: firstPrompt(input.prompt) })],
    draft: NO_REPLY_YET,
    awaitingVerdict: false,
    attempts: [],
    trace: [],
    status: null,
  }),
  initial: 'calling',
  states: {
    calling: {
      entry: enter('calling'),
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
            guard: 'canRetry',
            target: 'reconsidering',
            actions: { type: 'recordCallError', params: ({ event }) => ({ error: event.error }) },
          },
          { target: 'uncertain', actions: { type: 'recordCallError', params: ({ event }) => ({ error: event.error }) } },
        ],
      },
    },
    parsing: {
      entry: [enter('parsing'), 'parse'],
      always: [
        { guard: and(['parseFailed', 'canRetry']), target: 'reconsidering' },
        { guard: 'parseFailed', target: 'uncertain' },
        { target: 'ambiguityGate' },
      ],
    },
    ambiguityGate: {
      entry: enter('ambiguityGate'),
      always: [
        { guard: 'isAmbiguous', target: 'ambiguous' },
        { guard: 'hasValidator', target: 'validationGate' },
        { target: 'confidenceGate' },
      ],
    },
    validationGate: {
      entry: [enter('validationGate'), 'awaitVerdict'],
      on: {
        'validator.returned': { actions: { type: 'recordReturn', params: ({ event }) => ({ returned: event.value }) } },
        'validator.threw': { actions: { type: 'recordThrow', params: ({ event }) => ({ thrown: event.error }) } },
      },
      always: [
        { guard: 'passedValidation', target: 'confidenceGate' },
        { guard: and(['failedValidation', 'canRetry']), target: 'reconsidering' },
        { guard: 'failedValidation', target: 'uncertain' },
      ],
    },
    confidenceGate: {
      entry: enter('confidenceGate'),
      always: [
        { guard: and(['isConfident', 'isFirstAttempt']), target: 'verified' },
        { guard: 'isConfident', target: 'repaired' },
        { guard: 'canRetry', target: 'reconsidering' },
        { target: 'uncertain' },
      ],
    },
    reconsidering: {
      entry: [enter('reconsidering'), 'commitAttempt'],
      always: [
        { guard: 'callFailed', target: 'calling', actions: retryWith('repeat') },
        { guard: 'parseFailed', target: 'calling', actions: retryWith('parse') },
        { guard: 'failedValidation', target: 'calling', actions: retryWith('validation') },
        { target: 'calling', actions: retryWith('confidence') },
      ],
    },
    verified: { type: 'final', entry: [enter('verified'), conclude(VERIFIED)] },
    repaired: { type: 'final', entry: [enter('repaired'), conclude(REPAIRED)] },
    ambiguous: { type: 'final', entry: [enter('ambiguous'), conclude(AMBIGUOUS)] },
    uncertain: { type: 'final', entry: [enter('uncertain'), conclude(UNCERTAIN)] },
  },
  output: ({ context }) => summarize(context),
});

/**
 * Accepted and ambiguous runs report their last attempt; an uncertain run reports the
 * last attempt that parsed, if any, so the caller still sees the model's best try.
 */
function summarize(context: CheckpointContext): CheckpointOutput {
  const status = context.status ?? UNCERTAIN;
  const { attempts, prompts, trace } = context;
  const last = attempts.at(-1);
  const reported = status === UNCERTAIN ? attempts.findLast((a) => a.parseOk) : last;
  return {
    status,
    answer: reported?.answer ?? null,
    confidence: reported?.confidence ?? null,
    ambiguous: status === AMBIGUOUS,
    interpretations: status === AMBIGUOUS && last ? last.interpretations : [],
    parsed: reported?.parsed ?? null,
    attempts,
    prompts,
    trace,
  };
}
