import { and } from 'xstate';
import { remember } from '../effects.js';
import { isTransient } from '../../src/decide/call-retries.js';
import { MAX_REPHRASED_CHARS, roundStart } from '../../src/decide/clarification.js';
import type { SampleSlot } from './types.js';
import type { Attempt } from '../../src/decide/attempt.js';
import { budgetStop } from '../../src/decide/budget.js';
import { isSettled, tallyOf } from '../../src/decide/sampling.js';
import { spentOf } from './context.js';
import { voteSettings } from './vote.js';
import type { Heard, SampleParams } from './types.js';
import type { CheckpointContext, CheckpointEvent } from './types.js';

/** Every question the checkpoint machine asks before it moves. */


const timeLeft = ({ settings }: CheckpointContext) => settings.deadlineAt === null || Date.now() < settings.deadlineAt;

type GuardArgs = { readonly context: CheckpointContext };
/** Every decision the machine makes, as a question about its context (or the event's payload). */
export const guards = {
  // Retries are counted per round: a clarified question gets its own.
  canRetry: ({ context }: GuardArgs) => context.attempt - roundStart(context.clarifications, context.escalations) < context.settings.maxRetries && timeLeft(context),
  canRetryCall: ({ context }: GuardArgs, { error }: { error: unknown }) => callRetryDue(context, error) && withinBudget(context),
  // A call retry was due, but the budget cannot afford it: the run stops for the budget, not for the failure.
  isUnaffordedCallRetry: ({ context }: GuardArgs, { error }: { error: unknown }) => callRetryDue(context, error) && !withinBudget(context),
  // A model gave up: the next of the cascade is asked, while time remains.
  canEscalate: ({ context }: GuardArgs) => stageOf(context) < context.settings.models.length - 1 && timeLeft(context),
  budgetSpent: ({ context }: GuardArgs) => !withinBudget(context),
  // An outage or a refused key at one provider: the next model of the cascade may be another's.
  failedForGoodWithNextModel: (args: GuardArgs, { error }: { error: unknown }) => !isTransient(error) && guards.canEscalate(args),
  sampleFailedForGoodWithNextModel: (args: GuardArgs, params: SampleParams & { error: unknown }) => guards.isPermanentSampleFailure(args, params) && guards.canEscalate(args),
  // A status no retry can fix, such as 401 or 404: another attempt would fail alike.
  isPermanentFailure: (_: GuardArgs, { error }: { error: unknown }) => !isTransient(error),
  isText: (_: GuardArgs, { reply }: { reply: unknown }) => typeof reply === 'string',
  parseFailed: ({ context }: GuardArgs) => !context.draft.parseOk,
  isAmbiguous: ({ context }: GuardArgs) => context.draft.ambiguous,
  hasValidator: ({ context }: GuardArgs) => context.settings.hasValidator,
  hasSchema: ({ context }: GuardArgs) => context.settings.answerFormat !== null,
  passedValidation: ({ context }: GuardArgs) => !context.awaitingVerdict && context.draft.passedValidation,
  failedValidation: ({ context }: GuardArgs) => !context.awaitingVerdict && !context.draft.passedValidation,
  // Asked only of a draft that parsed, which has a confidence.
  isConfident: ({ context }: GuardArgs) => context.draft.confidence! >= context.settings.threshold,
  isFirstAttempt: ({ context }: GuardArgs) => context.attempt === roundStart(context.clarifications, context.escalations),
  // A run that could not afford the clarified round's first call does not wait for it.
  canAwaitClarification: ({ context }: GuardArgs) =>
    context.settings.awaitClarification && context.clarifications.length < context.settings.maxClarifications && withinBudget(context),
  // A reading the model did not offer (a parent's typo, a forged event) leaves the run waiting.
  isOfferedReading: ({ context }: GuardArgs, { reading }: { reading: unknown }) =>
    typeof reading === 'string' && context.clarifications.length < context.settings.maxClarifications && context.draft.interpretations.includes(reading),
  isRephrasing: ({ context }: GuardArgs, { question }: { question: unknown }) =>
    typeof question === 'string' && question.trim() !== '' && question.length <= MAX_REPHRASED_CHARS && context.clarifications.length < context.settings.maxClarifications,
  isUnaffordedReading: (args: GuardArgs, params: { reading: unknown }) => guards.isOfferedReading(args, params) && !withinBudget(args.context),
  isUnaffordedRephrasing: (args: GuardArgs, params: { question: unknown }) => guards.isRephrasing(args, params) && !withinBudget(args.context),
  callFailed: ({ context }: GuardArgs) => context.draft.callFailed,
  isSampling: ({ context }: GuardArgs) => planOf(context).max > 1,
  allSampled: ({ context }: GuardArgs) => context.slots.every((slot) => slot.state === 'done'),
  // Adaptive samples: what the samples not yet answered could say no longer changes the vote.
  isVoteSettled: ({ context }: GuardArgs) => voteSettled(context),
  // No sample call is under way, and the budget starts none of those left.
  samplingHalted: ({ context }: GuardArgs) => context.slots.every((slot) => slot.state !== 'calling' && slot.state !== 'backingOff') && context.slots.some((slot) => slot.state === 'queued'),
  // A reply or timer for a call the sample no longer waits for (it timed out, or was retried) changes nothing.
  isCurrentCall: ({ context }: GuardArgs, { sample, call }: SampleParams) => isSlot(context, sample, call, 'calling'),
  isCurrentBackoff: ({ context }: GuardArgs, { sample, call }: SampleParams) => isSlot(context, sample, call, 'backingOff'),
  // A sample's backoff ended, but calls started or usage reported since leave no budget for its retry.
  isUnaffordedBackoff: ({ context }: GuardArgs, { sample, call }: SampleParams) =>
    isSlot(context, sample, call, 'backingOff') && !withinBudget(context, context.slots.filter((slot) => slot.state === 'calling').length),
  canRetrySampleCall: ({ context }: GuardArgs, { sample, call, error }: SampleParams & { error: unknown }) => {
    const policy = context.settings.callRetries;
    const slot = context.slots[sample];
    return (
      isSlot(context, sample, call, 'calling') &&
      policy !== null &&
      slot!.tries.length < policy.retries &&
      isTransient(error) &&
      timeLeft(context) &&
      // A sample's call retry is a call as any other: the budget must allow it, beside the other samples' calls in flight.
      withinBudget(context, context.slots.filter((other) => other.state === 'calling').length - 1)
    );
  },
  isPermanentSampleFailure: ({ context }: GuardArgs, { sample, call, error }: SampleParams & { error: unknown }) =>
    isSlot(context, sample, call, 'calling') && !isTransient(error),
  // A streamed reply said `"ambiguous": true` and listed its readings: AMBIGUOUS needs nothing more of it.
  // Not with a parseFn of the caller's: what Booth's envelope reader heard is not how the reply will be read.
  // Only the lone call's: a sample ended at its readings would vote without an answer, so samples are read whole.
  readsAmbiguous: ({ context }: GuardArgs, { call, sample, heard }: StreamParams) =>
    sample === undefined && readsEnvelope(context) && isStreamOf(context, call, sample) && heard.ambiguous === true && heard.interpretations !== null,
  // A member of a streamed answer has a type the schema refuses. Only once the reply said it is not
  // ambiguous: an ambiguous reply's answer is never judged. A sample's answer is judged only if it wins the vote.
  refusesMember: ({ context }: GuardArgs, { call, sample, heard }: StreamParams) =>
    sample === undefined && readsEnvelope(context) && isStreamOf(context, call, sample) && context.settings.answerFormat !== null && heard.ambiguous === false,
  isSplit: ({ context }: GuardArgs) => (context.draft.clusters?.length ?? 0) > 1,
  // A call abandoned by an earlier attempt may report what it cost after that attempt was committed.
  isCurrentAttempt: ({ context }: GuardArgs, { attempt }: { attempt: number }) => attempt === context.attempt,
};

/** Whether the call retry policy (and the time left) would retry a call that failed with `error`. */
function callRetryDue(context: CheckpointContext, error: unknown): boolean {
  const policy = context.settings.callRetries;
  return policy !== null && context.tries.length < policy.retries && isTransient(error) && timeLeft(context);
}

/** Whether the budget allows one more call, beside `inFlight` calls that have not reported yet. */
// Without a budget nothing is summed: a run that sets none never pays for spentOf().
export const withinBudget = (context: CheckpointContext, inFlight = 0) =>
  context.settings.budget === null || budgetStop(context.settings.budget, spentOf(context), inFlight) === null;


/** Which model of the cascade the run asks now: the moves on since the latest clarification, which starts again at the first. */
export function stageOf({ escalations, clarifications }: Pick<CheckpointContext, 'escalations' | 'clarifications'>): number {
  const since = clarifications.at(-1)?.attempt ?? -1;
  let stage = 0;
  for (const escalation of escalations) if (escalation.attempt > since) stage += 1;
  return stage;
}

/** How the model asked now gathers its samples. */
export const planOf = (context: Pick<CheckpointContext, 'escalations' | 'clarifications' | 'settings'>) => context.settings.models[stageOf(context)]!.samples;

/**
 * Whether the vote of an adaptive attempt is settled: the replies so far, and the samples
 * not yet answered (held, queued or in flight) as what could still change it.
 */
export function voteSettled(context: CheckpointContext): boolean {
  const { stop } = planOf(context);
  if (stop === null) return false;
  const answered: Attempt<unknown>[] = [];
  let remaining = 0;
  for (const slot of context.slots) {
    if (slot.state === 'done') answered.push(slot.reply!);
    else if (slot.state !== 'skipped') remaining += 1;
  }
  return remaining > 0 && isSettled(tallyOf(answered, voteSettings(context.settings)), remaining, stop);
}

type StreamParams = { readonly call: number; readonly sample?: number | undefined; readonly heard: Heard };

/** Whether replies are read as Booth's envelope, as the streamed reader reads them: not with a `parseFn` of the caller's (kept, or lost in a persisted snapshot). */
function readsEnvelope(context: CheckpointContext): boolean {
  return context.settings.parseFn === null;
}

/** Whether a streamed reply's news is of the call the run waits for: the lone call just counted, or a sample's current one. */
function isStreamOf(context: CheckpointContext, call: number, sample: number | undefined): boolean {
  return sample === undefined ? call === context.calls - 1 : isSlot(context, sample, call, 'calling');
}

function isSlot(context: CheckpointContext, sample: number, call: number, state: SampleSlot['state']): boolean {
  const slot = context.slots[sample];
  return slot !== undefined && slot.state === state && slot.call === call;
}
type GuardName = keyof typeof guards;
/** Both guards, in order: XState's `and()`, noted for the stepper. */
export const allOf = <const TNames extends readonly [GuardName, GuardName]>(names: TNames) =>
  remember(and<CheckpointContext, CheckpointEvent, [...TNames]>(names as never), names);
