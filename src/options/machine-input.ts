import type { AgreeFn, ConfidenceSource } from '../decide/agreement.js';
import type { CallRetryPolicy } from '../decide/call-retries.js';
import { DEFAULT_THRESHOLD } from '../decide/constants.js';
import { type AnswerSchema, answerFormatOf, readSchema } from '../decide/schema.js';
import { type ChatTurn, instructions } from '../decide/prompts.js';
import type { ParseFn } from '../reply/parse.js';
import type { Budget } from '../decide/budget.js';
import type { SamplePlan } from '../decide/sampling.js';
import { budgetOption, distinctModelNames, type Escalation, escalateOption, modelNameOption, widestPlan, clarificationOptions, concurrency, conversationOptions, optionalFunction, readPrompt, readShape, retries, samplingOptions, timers, unitInterval } from './read-options.js';
import { describeValue, isPlainObject } from '../util/values.js';

/** The checkpoint machine's input, read with `check()`'s rules: pure, so the machine can sit on it. */

/** What the checkpoint machine's input may hold, checked as `check()` checks its options. */
export interface MachineInput {
  readonly prompt: string;
  readonly threshold: number;
  readonly maxRetries: number;
  readonly effects: 'actors' | 'events';
  readonly model: ((...args: never[]) => unknown) | null;
  /** A validator function, or `true` when a provided `validate` actor judges; null for none. */
  readonly validator: ((...args: never[]) => unknown) | true | null;
  readonly schema: AnswerSchema | null;
  readonly timeoutMs: number | null;
  readonly deadlineMs: number | null;
  readonly callRetries: CallRetryPolicy | null;
  /** The most samples an attempt of the first model asks. */
  readonly samples: number;
  readonly plan: SamplePlan;
  readonly sampleConcurrency: number;
  readonly agree: AgreeFn<unknown> | null;
  readonly confidenceFrom: ConfidenceSource;
  /** The application's system prompt; null for none. */
  readonly system: string | null;
  /** The earlier turns of the conversation, frozen. */
  readonly messages: readonly ChatTurn[];
  /** The instruction text every prompt ends with, resolved: Booth's for the answer format, or the caller's. */
  readonly instructions: string;
  readonly parseFn: ParseFn | null;
  readonly awaitClarification: boolean;
  readonly maxClarifications: number;
  readonly modelName: string | null;
  /** The cascade's next models; a function only in a workflow that gives one. */
  readonly escalate: readonly Escalation<((...args: never[]) => unknown) | null>[];
  readonly budget: Budget | null;
}

const MACHINE_KEYS = [
  'prompt',
  'threshold',
  'maxRetries',
  'effects',
  'model',
  'schema',
  'validator',
  'timeoutMs',
  'deadlineMs',
  'callRetries',
  'samples',
  'sampleConcurrency',
  'agree',
  'confidenceFrom',
  'system',
  'messages',
  'instructions',
  'parseFn',
  'awaitClarification',
  'maxClarifications',
  'modelName',
  'escalate',
  'budget',
] as const;

/**
 * The checkpoint machine's input, with the checks and messages of `check()`: a workflow
 * that invokes the machine with a bad input gets the same `TypeError` or `RangeError` in
 * its `onError`, before anything runs.
 */
export function readMachineInput(input: unknown): MachineInput {
  if (!isPlainObject(input)) {
    throw new TypeError(
      `Expected the checkpoint machine's \`input\` to be a plain object such as { prompt: 'Which year…?' }, got ${describeValue(input)}.`,
    );
  }
  const given = readShape(input, MACHINE_KEYS, 'the checkpoint machine\'s `input`');
  const prompt = readPrompt(given['prompt']);
  const threshold = unitInterval('threshold', given['threshold'], DEFAULT_THRESHOLD);
  const maxRetries = retries(given['maxRetries']);
  const effects = given['effects'] ?? 'actors';
  if (effects !== 'actors' && effects !== 'events') {
    throw new TypeError(
      `Expected \`effects\` to be 'actors' (the machine calls the model) or 'events' (you send it the replies), got ${describeValue(effects)}.`,
    );
  }
  const model = optionalFunction('model', given['model']);
  const schema = readSchema(given['schema']);
  const validator = given['validator'] === true ? true : optionalFunction('validator', given['validator'] === false ? null : given['validator']);
  const escalate = escalateOption(given['escalate'], 'model', false);
  const sampling = samplingOptions(given, escalate);
  const sampleConcurrency = concurrency(given['sampleConcurrency'], effects === 'actors' ? 1 : widestPlan(sampling.samples, escalate));
  if (effects === 'actors' && sampleConcurrency > 1) {
    throw new RangeError(
      `Expected \`sampleConcurrency\` to be 1 in a workflow, got ${describeValue(sampleConcurrency)}: the machine calls its samples one after another through its one \`callModel\` child; use effects: 'events' to run them concurrently.`,
    );
  }
  const conversation = conversationOptions(given, instructions(answerFormatOf(schema)));
  return {
    prompt,
    threshold,
    maxRetries,
    effects,
    model,
    schema,
    validator,
    ...timers(given),
    ...sampling,
    sampleConcurrency,
    ...conversation,
    ...clarificationOptions(given),
    modelName: distinctlyNamed(modelNameOption(given['modelName']), escalate),
    escalate,
    budget: budgetOption(given['budget']),
  };
}

/** `modelName`, once the cascade's models are known to be named apart. */
function distinctlyNamed(modelName: string | null, escalate: readonly Escalation<unknown>[]): string | null {
  distinctModelNames(modelName, escalate);
  return modelName;
}
