import {
  type Attempt,
  attemptFromCallError,
  attemptFromEarlyFailure,
  attemptFromEarlyReadings,
  attemptFromNonText,
  attemptFromRawText,
  attemptFromReply,
  finished,
  timeoutError,
  withSchemaVerdict,
  withVerdict,
} from '../../src/decide/attempt.js';
import { appending, cancelling, cancellingBy, CHILD, raising, schedule, update } from '../effects.js';
import { backoffDelay, type CallTry, retryAfterOf } from '../../src/decide/call-retries.js';
import { clarifiedQuestion, firstPrompt, type PreviousAttempt, type RetryKind, retryPrompt } from '../../src/decide/prompts.js';
import { earlyVerdict, type SchemaIssue, schemaFailure, schemaThrew, verdictFromResult } from '../../src/decide/schema.js';
import { verdictFromReturn, verdictFromThrow } from '../../src/decide/validation.js';
import { isSettled, keyArrived, nextWave, tallyOf, votedAttempt } from '../../src/decide/sampling.js';
import { budgetStop } from '../../src/decide/budget.js';
import { planOf, stageOf } from './guards.js';
import { spentOf } from './context.js';
import type { SampleSlot } from './types.js';
import { callersOwn, voteSettings } from './vote.js';
import { describeThrown } from '../../src/util/values.js';
import { addUsage, type Usage } from '../../src/decide/usage.js';
import { BACKOFF, CALL_TIMEOUT, DEADLINE, sampleTimeoutId, sampleTimer, type TimerName, timers } from './timers.js';
import type { CheckpointContext, CheckpointEvent, CheckpointSettings, CheckpointState, CheckpointStatus, TraceStep } from './types.js';
import type { Heard, SampleParams } from './types.js';

/** What the checkpoint machine's actions do, as plain functions the XState actions and the compiled stepper both call. */

/** `[...list, item]` as V8 builds it fastest: a spread goes through the iterator protocol. */
export function appended<T>(list: readonly T[], item: T): T[] {
  const copy = list.slice();
  copy.push(item);
  return copy;
}
const firstTry = (tries: readonly CallTry[]): CallTry[] => appended(tries, { error: null, delayMs: null });

/** A sample waiting for its call. */
export const QUEUED: SampleSlot = Object.freeze({ state: 'queued', call: -1, tries: Object.freeze([]), backoffMs: 0, reply: null });

/** Why a call retry the budget could not afford was not made, when its failed call left no words. */
const UNAFFORDED = 'the budget could not afford a retry of this call';

/** Why a skipped sample has no reply: the vote did not need it. */
const SKIPPED = 'skipped: the vote was settled before this call answered';

/** `context.slots` with sample `sample` replaced. */
function withSlot(context: CheckpointContext, sample: number, slot: SampleSlot): SampleSlot[] {
  const slots = context.slots.slice();
  slots[sample] = slot;
  return slots;
}

/** Sample `sample` answered with `read` (`replied`: with text), and the next queued samples start. */
function sampleAnswered(context: CheckpointContext, sample: number, read: Attempt<unknown>, replied: boolean): Partial<CheckpointContext> {
  const slot = context.slots[sample]!;
  keyArrived(read, context.settings.answerFormat !== null, callersOwn(context.settings, 'agree') !== null);
  // Counted before the next samples start: a reply without its usage report stops a token or cost budget at once.
  const replies = replied ? context.replies + 1 : context.replies;
  return { ...startQueued({ ...context, replies }, withSlot(context, sample, { ...slot, state: 'done', tries: read.callTries, reply: read })), replies };
}

/**
 * Starts queued samples, in order, while fewer than `sampleConcurrency` are calling or backing
 * off and the budget allows another call. An adaptive attempt whose wave has all answered,
 * its vote not settled, first queues the next wave: the fewest samples that could settle it.
 */
function startQueued(context: CheckpointContext, slots: SampleSlot[], started: number[] = []): Partial<CheckpointContext> {
  let { calls } = context;
  const isActive = (slot: SampleSlot) => slot.state === 'calling' || slot.state === 'backingOff';
  let active = slots.filter(isActive).length;
  if (active === 0 && !slots.some((slot) => slot.state === 'queued')) widen(context, slots);
  const { budget } = context.settings;
  const spent = budget === null ? null : spentOf(context);
  // Under a token or cost budget, before any call has said what a call costs, one sample goes first and the rest wait for its report.
  const probing = spent !== null && (budget!.maxTokens !== null || budget!.maxCostUsd !== null) && spent.reports === 0;
  for (let i = 0; i < slots.length && active < context.settings.sampleConcurrency; i += 1) {
    if (slots[i]!.state !== 'queued') continue;
    // The samples in flight will cost too: a wave is started only as far as the budget pays for all of it.
    if (spent !== null && ((probing && active > 0) || budgetStop(budget, { ...spent, calls }, active) !== null)) break;
    slots[i] = { state: 'calling', call: calls, tries: [], backoffMs: 0, reply: null };
    calls += 1;
    active += 1;
    started.push(i);
  }
  return { slots, calls, started };
}

/** Queues the next wave of held samples, unless the vote is settled (the machine then stops sampling) or none is held. */
function widen(context: CheckpointContext, slots: SampleSlot[]): void {
  const { stop } = planOf(context);
  const held = slots.filter((slot) => slot.state === 'held').length;
  if (stop === null || held === 0) return;
  const answered = slots.flatMap((slot) => (slot.state === 'done' ? [slot.reply!] : []));
  const tally = tallyOf(answered, voteSettings(context.settings));
  if (isSettled(tally, held, stop)) return;
  let wave = nextWave(tally, held, stop);
  for (let i = 0; i < slots.length && wave > 0; i += 1) {
    if (slots[i]!.state !== 'held') continue;
    slots[i] = QUEUED;
    wave -= 1;
  }
}

/** A sample not in a wave yet: asked only if the vote needs it. */
const HELD: SampleSlot = Object.freeze({ ...QUEUED, state: 'held' });

/** The sample under way when a workflow's one `callModel` child answers: a workflow calls one sample at a time. */
function callingSample(context: CheckpointContext): { sample: number; call: number } {
  const sample = context.slots.findIndex((slot) => slot.state === 'calling');
  return { sample, call: context.slots[sample]?.call ?? -1 };
}

/**
 * What each action does, as plain functions: the actions in `setup()` below wrap them, and
 * the compiled stepper (src/engine/stepper.ts) calls them directly.
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
      error: timeoutError(`the model call timed out after ${context.settings.timeoutMs} ms`),
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
  recordReply: update((context: CheckpointContext, { reply }: { reply: string }) => ({ draft: attemptFromRawText(reply, firstTry(context.tries)), replies: context.replies + 1 })),
  // Every call the run starts counts against `budget.maxCalls`: a call retry's and a resumed run's too.
  countCall: update((context: CheckpointContext, _: undefined) => ({ calls: context.calls + 1 })),
  parse: update((context: CheckpointContext, _: undefined) => ({
    draft: attemptFromReply(context.draft.rawText, context.draft.callTries, context.settings.answerFormat !== null, callersOwn(context.settings, 'parseFn')),
  })),
  recordNonText: update((context: CheckpointContext, { reply }: { reply: unknown }) => ({
    draft: attemptFromNonText(reply, firstTry(context.tries)),
  })),
  recordCallError: update((context: CheckpointContext, { error }: { error: unknown }) => ({
    draft: attemptFromCallError(error, appended(context.tries, { error: describeThrown(error).message, delayMs: null })),
  })),
  // The try says it failed for good: a saved run that ended early shows why it could.
  recordPermanentFailure: update((context: CheckpointContext, { error }: { error: unknown }) => ({
    draft: attemptFromCallError(error, appended(context.tries, { error: describeThrown(error).message, delayMs: null, permanent: true })),
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
  // An adaptive attempt queues its first wave and holds the rest.
  startSampling: update((context: CheckpointContext, _: undefined) => {
    const { max, min } = planOf(context);
    return startQueued(context, Array.from({ length: max }, (_, i) => (i < min ? QUEUED : HELD)));
  }),
  // Each reply is read as it arrives, as a one-sample run reads its reply.
  recordSampleReply: update((context: CheckpointContext, { sample, reply }: { sample: number; reply: unknown }) => {
    const tries = firstTry(context.slots[sample]!.tries);
    const typed = context.settings.answerFormat !== null;
    const read = typeof reply === 'string' ? attemptFromReply(reply, tries, typed, callersOwn(context.settings, 'parseFn')) : attemptFromNonText(reply, tries);
    return sampleAnswered(context, sample, read, typeof reply === 'string');
  }),
  // A streamed reply said it is ambiguous and listed its readings: the rest cannot change the verdict.
  readEarly: update((context: CheckpointContext, { heard }: { heard: Heard }) => ({
    draft: attemptFromEarlyReadings(heard.text, firstTry(context.tries), heard.interpretations!),
    replies: context.replies + 1,
  })),
  // A streamed answer's member has a type the schema refuses: the attempt fails as the schema would fail it.
  refuseEarly: update((context: CheckpointContext, { heard, issues }: { heard: Heard; issues: readonly SchemaIssue[] }) => ({
    draft: attemptFromEarlyFailure(heard.text, firstTry(context.tries), heard.interpretations, earlyVerdict(issues)),
    replies: context.replies + 1,
  })),
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
  /**
   * The backoff ended, but the budget no longer allows the retry (usage reported meanwhile,
   * or other samples' calls started): the call is not made. The attempt fails as its last
   * call did, its tries as they were, the last one the retry that never started.
   */
  recordUnaffordedRetry: update((context: CheckpointContext, _: undefined) => ({
    draft: attemptFromCallError(new Error(context.tries.at(-1)?.error ?? UNAFFORDED), context.tries),
  })),
  // As for one call: the sample fails with the tries it made, and the vote goes on without it.
  recordUnaffordedSampleRetry: update((context: CheckpointContext, { sample }: { sample: number }) => {
    const slot = context.slots[sample]!;
    const reply = attemptFromCallError(new Error(slot.tries.at(-1)?.error ?? UNAFFORDED), slot.tries);
    return startQueued(context, withSlot(context, sample, { ...slot, state: 'done', reply }));
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
      error: timeoutError(`the model call timed out after ${context.settings.timeoutMs} ms`),
    }),
  ),
  forwardSampleReply: raising((context: CheckpointContext, { reply }: { reply: unknown }): CheckpointEvent => ({ type: 'sample.replied', ...callingSample(context), reply })),
  forwardSampleError: raising((context: CheckpointContext, { error }: { error: unknown }): CheckpointEvent => ({ type: 'sample.failed', ...callingSample(context), error })),
  startSampleCall: CHILD,
  stopSampleCall: CHILD,
  // The call answered: its timeout will not be needed.
  endSampleTimeout: cancellingBy(({ call }: { call: number }) => sampleTimeoutId(call)),
  // The samples asked vote, the skipped ones listed but not counted; held or queued ones were never asked.
  vote: update((context: CheckpointContext, _: undefined) => {
    const asked = context.slots.filter((slot) => slot.reply !== null);
    if (asked.length === 0) return { draft: attemptFromCallError(new Error(budgetStop(context.settings.budget, spentOf(context)) ?? 'no sample was asked'), []) };
    const skipped = new Set(asked.flatMap((slot, i) => (slot.state === 'skipped' ? [i] : [])));
    return { draft: votedAttempt(asked.map((slot) => slot.reply!), voteSettings(context.settings), skipped.size === 0 ? null : skipped) };
  }),
  // The vote is settled: calls still in flight are abandoned (the interpreter aborts them), each recorded as skipped.
  skipUnanswered: update((context: CheckpointContext, _: undefined) => ({
    slots: context.slots.map((slot) => {
      if (slot.state !== 'calling' && slot.state !== 'backingOff') return slot;
      const tries = appended(slot.tries, { error: SKIPPED, delayMs: null });
      return { ...slot, state: 'skipped' as const, tries, reply: attemptFromCallError(new Error(SKIPPED), tries) };
    }),
  })),
  // As a one-sample run records it: a call in flight or a wait fails with a try of its own; a sample never called has none.
  recordSamplingDeadline: update((context: CheckpointContext, _: undefined) => {
    const { deadlineMs } = context.settings;
    return endSampling(context, (state) =>
      timeoutError(
        state === 'queued'
          ? `the deadline of ${deadlineMs} ms passed before this sample was called`
          : `the deadline of ${deadlineMs} ms passed ${state === 'calling' ? 'during the call' : 'while waiting to retry'}`,
      ),
    );
  }),
  // One sample's call failed for good: it keeps its error, the others end as the deadline ends them.
  haltSampling: update((context: CheckpointContext, { sample, error }: { sample: number; error: unknown }) => {
    const slot = context.slots[sample]!;
    const tries = appended(slot.tries, { error: describeThrown(error).message, delayMs: null, permanent: true });
    const halted = { ...context, slots: withSlot(context, sample, { ...slot, state: 'done', tries, reply: attemptFromCallError(error, tries) }) };
    const cause = `sample ${sample + 1}'s call failed with a status no retry can fix`;
    return endSampling(halted, (state) =>
      new Error(state === 'queued' ? `not called: ${cause}` : `abandoned ${state === 'calling' ? 'during the call' : 'while waiting to retry'}: ${cause}`),
    );
  }),
  recordUsage: update((context: CheckpointContext, { usage }: { usage: Usage }) => ({
    usage: addUsage(context.usage, usage),
    reports: context.reports + 1,
    priced: context.priced + (usage.costUsd === null ? 0 : 1),
  })),
  // A run is saved as an attempt begins, and resumed to make its calls again: its time starts over, the pause not counted.
  restartClock: update((_: CheckpointContext, __: undefined) => ({ startedAt: Date.now() })),
  recordLateUsage: update((context: CheckpointContext, { usage }: { usage: Usage }) => ({
    lateUsage: addUsage(context.lateUsage, usage),
    reports: context.reports + 1,
    priced: context.priced + (usage.costUsd === null ? 0 : 1),
  })),
  /**
   * The model asked gave up: the next of the cascade is asked the round's question afresh, from
   * the first prompt, with retries of its own.
   */
  escalate: update((context: CheckpointContext, _: undefined) => {
    const { settings } = context;
    const attempt = context.attempt + 1;
    const model = settings.models[stageOf(context) + 1]!.name;
    return {
      attempt,
      startedAt: Date.now(),
      tries: [],
      usage: null,
      prompts: appended(context.prompts, Object.freeze({ kind: 'escalation' as const, text: firstPrompt(settings.prompt, settings.answerFormat, settings.instructions) })),
      escalations: appended(context.escalations, Object.freeze({ attempt, model })),
    };
  }),
  commitAttempt: update((context: CheckpointContext, _: undefined) => ({ attempts: withDraft(context) })),
  prepareRetry: update((context: CheckpointContext, { kind }: { kind: RetryKind }) => ({
    attempt: context.attempt + 1,
    startedAt: Date.now(),
    tries: [],
    usage: null,
    prompts: appended(context.prompts, Object.freeze({ kind, text: nextPrompt(context, kind) })),
  })),
  conclude: update((context: CheckpointContext, { status }: { status: CheckpointStatus }) => ({ attempts: withDraft(context), status })),
  // The attempt was committed on the way in: an ambiguous one before the run waits, or ends.
  settle: update((_: CheckpointContext, { status }: { status: CheckpointStatus }) => ({ status })),
  endDeadline: cancelling(DEADLINE),
  /**
   * The person said what the question means: a new round begins, asked with the clarified
   * question, with retries and a deadline of its own (a person may take days to answer).
   */
  clarify: update((context: CheckpointContext, { chosen, rephrased }: { chosen: string | null; rephrased: string | null }) => {
    const { settings, draft } = context;
    const clarification = Object.freeze({ question: settings.prompt, readings: draft.interpretations, chosen, rephrased, attempt: context.attempt + 1 });
    const prompt = clarifiedQuestion(settings.prompt, clarification);
    const now = Date.now();
    return {
      settings: Object.freeze({ ...settings, prompt, deadlineAt: settings.deadlineMs === null ? null : now + settings.deadlineMs }),
      clarifications: appended(context.clarifications, clarification),
      status: null,
      attempt: context.attempt + 1,
      startedAt: now,
      tries: [],
      usage: null,
      prompts: appended(context.prompts, Object.freeze({ kind: 'clarification' as const, text: firstPrompt(prompt, settings.answerFormat, settings.instructions) })),
    };
  }),
} as const;

/**
 * The vote on the attempt's samples when it ends before all have replied: a sample without
 * a reply fails with `why(state)`, with a try of its own if it was called or waiting.
 */
function endSampling(context: CheckpointContext, why: (state: SampleSlot['state']) => Error): Partial<CheckpointContext> {
  // A held sample was never part of a wave: nobody meant to call it yet.
  const replies = context.slots.filter((slot) => slot.state !== 'held').map((slot) => {
    if (slot.reply !== null) return slot.reply;
    const error = why(slot.state);
    return attemptFromCallError(error, slot.state === 'queued' ? slot.tries : appended(slot.tries, { error: error.message, delayMs: null }));
  });
  return { draft: votedAttempt(replies, voteSettings(context.settings)) };
}

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
  return retryPrompt(settings.prompt, kind, previous, answerFormat, settings.instructions);
}

/** The finished attempts with the draft committed: frozen, so no callback can change what was decided. */
function withDraft(context: CheckpointContext): readonly Attempt<unknown>[] {
  return appended(context.attempts, finished(context.draft, Date.now() - context.startedAt, context.usage, context.settings.models[stageOf(context)]!.name));
}
