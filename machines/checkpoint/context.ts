import type { AnyStateMachine } from 'xstate';
import { NO_REPLY_YET } from '../../src/decide/attempt.js';
import { AMBIGUOUS, UNCERTAIN } from '../../src/decide/constants.js';
import { firstPrompt } from '../../src/decide/prompts.js';
import { roundStart } from '../../src/decide/clarification.js';
import { answerFormatOf } from '../../src/decide/schema.js';
import { type MachineInput, readMachineInput } from '../../src/options/machine-input.js';
import { type AgreeFn, agreementOf } from '../../src/decide/agreement.js';
import { addUsage, totalUsage } from '../../src/decide/usage.js';
import { budgetStop, type Spent } from '../../src/decide/budget.js';
import { modelStages } from '../../src/options/read-options.js';
import type { CheckpointContext, CheckpointInput, CheckpointOutput, CheckpointSettings, ModelFn, WorkflowValidator } from './types.js';
import { defaultCallModel, defaultValidate } from './actors.js';

/** The context a checkpoint run starts with, from its input, and the output it ends with. */

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
    system: checked.system,
    messages: checked.messages,
    instructions: checked.instructions,
    parseFn: checked.parseFn === null ? null : () => checked.parseFn!,
    awaitClarification: checked.awaitClarification,
    maxClarifications: checked.maxClarifications,
    models: Object.freeze(
      modelStages(checked.modelName, checked.plan, checked.escalate).map(({ name, samples, call }, stage) =>
        Object.freeze(
          checked.effects === 'actors'
            ? { name, samples, model: stage === 0 ? null : call === null ? null : () => call as ModelFn }
            : { name, samples },
        ),
      ),
    ),
    budget: checked.budget,
  });
  return {
    settings,
    attempt: 0,
    startedAt: Date.now(),
    prompts: [Object.freeze({ kind: 'first' as const, text: firstPrompt(checked.prompt, answerFormat, checked.instructions) })],
    tries: [],
    backoffMs: 0,
    draft: NO_REPLY_YET,
    slots: [],
    calls: 0,
    replies: 0,
    reports: 0,
    priced: 0,
    started: [],
    usage: null,
    lateUsage: null,
    // Stryker disable next-line BooleanLiteral: read only in validationGate, which sets it on entry
    awaitingVerdict: false,
    attempts: [],
    trace: [],
    status: null,
    clarifications: [],
    escalations: [],
  };
}

/**
 * A run reports the last attempt that parsed: for accepted and ambiguous runs that is the
 * last attempt; an uncertain one reports the model's best try, if any.
 */
export function checkpointOutput(context: CheckpointContext): CheckpointOutput<unknown> {
  const status = context.status ?? UNCERTAIN;
  const { attempts, prompts, trace, clarifications } = context;
  const last = attempts.at(-1);
  // With a schema, an answer it rejected is no answer: the last one it passed is reported. An
  // answer from before the latest clarification answered another question: never reported.
  const start = roundStart(clarifications, context.escalations);
  const reported = attempts.findLast((a, index) => index >= start && a.parseOk && a.schemaIssues === null);
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
    clarifications: context.clarifications,
    escalations: context.escalations,
    budgetStop: context.trace.at(-1)?.state === 'overBudget' ? budgetStop(settings.budget, spentOf(context)) : null,
  };
}

/** What the run has spent so far, as its budget counts it: every attempt's usage, the one under way's and late reports. */
export function spentOf(context: CheckpointContext): Spent {
  const { calls, replies, reports, priced } = context;
  // Once the attempt under way is committed its usage is in it: counted once.
  let usage = addUsage(context.attempts.length > context.attempt ? null : context.usage, context.lateUsage);
  for (const attempt of context.attempts) usage = addUsage(usage, attempt.usage);
  return { calls, replies, reports, priced, usage };
}
