import type { CheckpointEvent, CheckpointOutput } from '../machines/checkpoint.js';
import { type CallOutcome, CheckpointRun, sampleEvent } from './checkpoint-run.js';
import { type CallFn, type CallInfo, type CheckOptions, type CheckSettings, readCheckArguments, type TypedCheckOptions } from './options.js';
import { type CheckResult, checkResult, type TypedCheckResult } from './result.js';
import type { AnswerSchema } from './schema.js';
import { AMBIGUOUS, REPAIRED, UNCERTAIN, VERIFIED } from './constants.js';
import { RunTelemetry } from './telemetry.js';
import { checkOutput } from './stored.js';
import { describeValue, isThenable, swallowRejection } from './values.js';

/**
 * Asks the model through `callFn` and checks the reply: ambiguity first, then the schema
 * (when given), the validator, then confidence, reconsidering up to `maxRetries` times. Fully
 * synchronous: `callFn` must return the model's text, not a Promise (use `acheck()`).
 *
 * @example
 * const result = check((prompt) => model.complete(prompt), 'What is the boiling point of water at sea level in °C?');
 * if (result.ok) console.log(result.answer);
 *
 * @example
 * // With a schema, the answer is typed: here { city: string; population: number }.
 * const result = check(callFn, 'Largest city in Japan?', { schema: z.object({ city: z.string(), population: z.number() }) });
 */
export function check<T>(callFn: CallFn, prompt: string, options: TypedCheckOptions<T>): TypedCheckResult<T>;
export function check(callFn: CallFn, prompt: string, options?: CheckOptions | null): CheckResult;
/** A schema that may be absent: the answer's type is known only at run time. */
export function check(callFn: CallFn, prompt: string, options?: CheckOptions<unknown> | null): CheckResult<unknown, unknown>;
export function check(callFn: CallFn, prompt: string, options?: object | null): CheckResult<unknown, unknown> {
  const settings = readCheckArguments('check', callFn, prompt, options);
  if (settings.telemetry === null) return runCheck(callFn, prompt, settings, null);
  const telemetry = new RunTelemetry(settings.telemetry, 'check', prompt);
  return telemetry.around(() => runCheck(callFn, prompt, settings, telemetry));
}

function runCheck(callFn: CallFn, prompt: string, settings: CheckSettings, telemetry: RunTelemetry | null): CheckResult<unknown, unknown> {
  const run = new CheckpointRun(prompt, settings, undefined, telemetry);
  try {
    for (;;) {
      const need = run.next();
      switch (need.kind) {
        case 'call': {
          const info = { attempt: need.attempt, replySchema: need.replySchema, reportUsage: run.usageReporter(need) };
          run.send(called(callFn, need.prompt, info, telemetry));
          break;
        }
        case 'sample': {
          const { attempt, replySchema, sample } = need;
          const info = { attempt, replySchema, sample, reportUsage: run.usageReporter(need) };
          run.send(sampleEvent(called(callFn, need.prompt, info, telemetry), need));
          break;
        }
        case 'schema':
          run.send(runSchemaSynchronously(settings.schema!, need.answer));
          break;
        case 'validate':
          run.send(runValidator(settings, need.answer));
          break;
        case 'report': {
          const returned = settings.onAttempt?.(need.index, need.attempt);
          if (isThenable(returned)) {
            swallowRejection(returned);
            throw new TypeError('`onAttempt` returned a Promise, but check() is synchronous; use acheck() to await it.');
          }
          break;
        }
        case 'wait':
          throw new Error('Booth internal error: a synchronous run has nothing to wait for');
        case 'done':
          return resultOf(need.output);
      }
    }
  } finally {
    run.stop();
  }
}

/** With telemetry a call runs inside its attempt's (or sample's) span, as in `acheck()`. */
function called(callFn: CallFn, prompt: string, info: CallInfo, telemetry: RunTelemetry | null): CallOutcome {
  return telemetry ? telemetry.within(info.sample, () => callSynchronously(callFn, prompt, info)) : callSynchronously(callFn, prompt, info);
}

function callSynchronously(callFn: CallFn, prompt: string, info: CallInfo): CallOutcome {
  let reply: unknown;
  try {
    reply = callFn(prompt, info);
  } catch (error) {
    return { type: 'model.failed', error };
  }
  if (isThenable(reply)) {
    swallowRejection(reply);
    throw new TypeError('`callFn` returned a Promise, but check() is synchronous; use acheck() for async model calls.');
  }
  return { type: 'model.replied', reply };
}

/** A schema that validates asynchronously (zod's async refinements) needs `acheck()`, which awaits it. */
function runSchemaSynchronously(schema: AnswerSchema, answer: unknown): CheckpointEvent {
  let result: unknown;
  try {
    result = schema['~standard'].validate(answer);
  } catch (error) {
    return { type: 'schema.threw', error };
  }
  if (isThenable(result)) {
    swallowRejection(result);
    throw new TypeError('`schema` validated asynchronously (its validate returned a Promise), but check() is synchronous; use acheck() for schemas with async checks.');
  }
  return { type: 'schema.returned', result };
}

/** The schema's result, awaited: `acheck()` lets a schema validate asynchronously. */
export async function runSchema(schema: AnswerSchema, answer: unknown): Promise<CheckpointEvent> {
  try {
    return { type: 'schema.returned', result: await schema['~standard'].validate(answer) };
  } catch (error) {
    return { type: 'schema.threw', error };
  }
}

/** Validators are synchronous in both interpreters; a returned Promise is judged (and refused) by the machine. */
export function runValidator(settings: CheckSettings, answer: unknown): CheckpointEvent {
  try {
    const value = settings.validator?.(answer);
    if (isThenable(value)) swallowRejection(value);
    return { type: 'validator.returned', value };
  } catch (error) {
    return { type: 'validator.threw', error };
  }
}

/**
 * The `BoothResult` of a checkpoint machine's output: what a parent workflow receives in
 * `onDone` gets `ok`, `method`, `unwrap()` and the rest, and draws with `boothjs/visualize`.
 *
 * @example
 * onDone: { actions: ({ event }) => publish(resultFrom(event.output).unwrap()) }
 *
 * With a `schema` in the machine's input, name the answer's type: `resultFrom<City>(event.output)`.
 */
export function resultFrom(output: CheckpointOutput): CheckResult;
export function resultFrom<T>(output: CheckpointOutput<unknown>): TypedCheckResult<T>;
export function resultFrom(output: CheckpointOutput<unknown>): CheckResult<unknown, unknown> {
  const expected = "Expected `output` to be the checkpoint machine's output (event.output in an invoke's onDone)";
  if (!isCheckpointOutput(output)) throw new TypeError(`${expected}, got ${describeValue(output)}.`);
  // An output may come back from a file or a queue (a booth batch line): it reaches results and pages only once every field is of its type.
  checkOutput(output, (problem) => {
    throw new TypeError(`${expected} or a result's JSON as Booth wrote it, but its ${problem}. Pass the output or the result line unchanged.`);
  });
  return resultOf(output);
}

/** The result of an output the machine just made: check() and acheck() need not check it again. */
export function resultOf(output: CheckpointOutput<unknown>): CheckResult<unknown, unknown> {
  return checkResult<unknown, unknown>({
    status: output.status,
    answer: output.answer,
    confidence: output.confidence,
    agreement: output.agreement,
    attempts: output.attempts,
    ambiguous: output.ambiguous,
    interpretations: output.interpretations,
    evidenceAgreement: null,
    parsed: output.parsed,
    reason: null,
    detail: null,
    prompts: output.prompts,
    trace: output.trace,
    settings: output.settings,
    // An output saved by a Booth from before usage and time were kept has neither.
    usage: output.usage ?? null,
    durationMs: output.durationMs ?? output.attempts.reduce((sum, attempt) => sum + attempt.durationMs, 0),
  });
}

const CHECK_STATUSES: readonly unknown[] = [VERIFIED, REPAIRED, AMBIGUOUS, UNCERTAIN];

function isCheckpointOutput(value: unknown): value is CheckpointOutput<unknown> {
  const output = value as Partial<Record<keyof CheckpointOutput<unknown>, unknown>> | null;
  return (
    typeof output === 'object' &&
    output !== null &&
    CHECK_STATUSES.includes(output.status) &&
    Array.isArray(output.attempts) &&
    Array.isArray(output.prompts) &&
    Array.isArray(output.trace) &&
    Array.isArray(output.interpretations)
  );
}
