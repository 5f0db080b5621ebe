import { assign, cancel, enqueueActions, raise, setup, stopChild } from 'xstate';
import type { Timer } from '../effects.js';
import { chatMessages, type RetryKind } from '../../src/decide/prompts.js';
import { answerForSchema, answerRuleOf, replySchemaOf, type SchemaIssue } from '../../src/decide/schema.js';
import type { Usage } from '../../src/decide/usage.js';
import type { CheckpointContext, CheckpointEvent, CheckpointInput, CheckpointOutput, CheckpointState, CheckpointStatus, ModelCall, ModelFn } from './types.js';
import { appended, checkpointEffects } from './effects.js';
import type { Heard, SampleParams } from './types.js';
import { defaultCallModel, defaultCheckSchema, defaultValidate, newsReporter, usageReporter } from './actors.js';
import type { TimerName } from './timers.js';
import { guards, stageOf } from './guards.js';

/** The model a workflow's call asks: the input's `model` first, then each of the cascade's. */
function modelOf(context: CheckpointContext, first: ModelFn | null): { stage: number; model: ModelFn | null } {
  const stage = stageOf(context);
  return { stage, model: stage === 0 ? first : (context.settings.models[stage]!.model?.() ?? null) };
}

/** What the `callModel` actor is asked for call `call` (of sample `sample`): the last prompt, to the model of the stage under way. */
function modelCallOf(context: CheckpointContext, self: Parameters<typeof usageReporter>[0], call: number, sample?: number): ModelCall {
  const sent = context.prompts.at(-1)!;
  const { model, answerFormat, prompt: question } = context.settings;
  const { stage, model: staged } = modelOf(context, model);
  const input: ModelCall = {
    prompt: sent.text,
    question,
    messages: chatMessages(context.settings, sent),
    attempt: context.attempt,
    model: staged,
    stage,
    replySchema: replySchemaOf(answerFormat),
    reportUsage: usageReporter(self, context.attempt),
    call,
    answerRule: answerRuleOf(answerFormat),
    schema: context.settings.schema?.() ?? null,
    hear: newsReporter(self),
  };
  return sample === undefined ? input : { ...input, sample };
}

/** The checkpoint machine's implementations wired into XState: its types, actors, guards, and actions that wrap the effects. */

export const checkpointSetup = setup({
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
      enqueue.spawnChild('callModel', { id: 'callModel', input: modelCallOf(context, self, context.calls - 1) });
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
    readEarly: assign(({ context }, params: { heard: Heard }) => checkpointEffects.readEarly.run(context, params)),
    refuseEarly: assign(({ context }, params: { heard: Heard; issues: readonly SchemaIssue[] }) => checkpointEffects.refuseEarly.run(context, params)),
    recordSampleError: assign(({ context }, params: { sample: number; error: unknown }) => checkpointEffects.recordSampleError.run(context, params)),
    scheduleSampleTry: assign(({ context }, params: { sample: number; error: unknown }) => checkpointEffects.scheduleSampleTry.run(context, params)),
    restartSample: assign(({ context }, params: { sample: number }) => checkpointEffects.restartSample.run(context, params)),
    recordUnaffordedRetry: assign(({ context }) => checkpointEffects.recordUnaffordedRetry.run(context, undefined)),
    recordUnaffordedSampleRetry: assign(({ context }, params: { sample: number }) => checkpointEffects.recordUnaffordedSampleRetry.run(context, params)),
    armSamples: enqueueActions(({ context, enqueue }, params: { all: boolean }) => {
      for (const timer of checkpointEffects.armSamples.run(context, params) as Timer<CheckpointEvent>[]) enqueue.raise(timer.event, { id: timer.id, delay: timer.delay });
    }),
    failSampleOnTimeout: raise(({ context }, params: SampleParams) => checkpointEffects.failSampleOnTimeout.run(context, params)),
    forwardSampleReply: raise(({ context }, params: { reply: unknown }) => checkpointEffects.forwardSampleReply.run(context, params)),
    forwardSampleError: raise(({ context }, params: { error: unknown }) => checkpointEffects.forwardSampleError.run(context, params)),
    startSampleCall: enqueueActions(({ context, enqueue, self }) => {
      if (context.settings.effects !== 'actors') return;
      for (const sample of context.started) {
        const slot = context.slots[sample]!;
        if (slot.state === 'calling') enqueue.spawnChild('callModel', { id: 'callModel', input: modelCallOf(context, self, slot.call, sample) });
      }
    }),
    stopSampleCall: stopChild('callModel'),
    endSampleTimeout: cancel((_, params: { call: number }) => checkpointEffects.endSampleTimeout.id(params)),
    vote: assign(({ context }) => checkpointEffects.vote.run(context, undefined)),
    skipUnanswered: assign(({ context }) => checkpointEffects.skipUnanswered.run(context, undefined)),
    countCall: assign(({ context }) => checkpointEffects.countCall.run(context, undefined)),
    escalate: assign(({ context }) => checkpointEffects.escalate.run(context, undefined)),
    recordSamplingDeadline: assign(({ context }) => checkpointEffects.recordSamplingDeadline.run(context, undefined)),
    haltSampling: assign(({ context }, params: SampleParams & { error: unknown }) => checkpointEffects.haltSampling.run(context, params)),
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
    recordPermanentFailure: assign(({ context }, params: { error: unknown }) => checkpointEffects.recordPermanentFailure.run(context, params)),
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
    settle: assign(({ context }, params: { status: CheckpointStatus }) => checkpointEffects.settle.run(context, params)),
    endDeadline: cancel(checkpointEffects.endDeadline.id),
    clarify: assign(({ context }, params: { chosen: string | null; rephrased: string | null }) => checkpointEffects.clarify.run(context, params)),
  },
});
