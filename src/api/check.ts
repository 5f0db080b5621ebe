import { type CallOutcome, CheckpointRun, modelFor, sampleEvent } from '../engine/checkpoint-run.js';
import type { CallFn, CallInfo } from '../decide/model-call.js';
import { resultOf } from '../results/result-from.js';
import { runSchemaSynchronously, runValidator } from '../engine/verdicts.js';
import { type CheckOptions, readCheckArguments, type TypedCheckOptions } from './options.js';
import type { CheckSettings } from '../engine/settings.js';
import type { CheckResult, TypedCheckResult } from '../results/result.js';
import { RunTelemetry } from '../telemetry/run-telemetry.js';
import { isThenable, swallowRejection } from '../util/values.js';
import { endStream, isReplyStream } from '../reply/reply-streams.js';

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
          const { attempt, replySchema, question, messages } = need;
          const info = { attempt, replySchema, question, messages, reportUsage: run.usageReporter(need) };
          run.send(called(modelFor(need, callFn, settings), need.prompt, info, telemetry, need.stage));
          break;
        }
        case 'sample': {
          const { attempt, replySchema, sample, question, messages } = need;
          const info = { attempt, replySchema, sample, question, messages, reportUsage: run.usageReporter(need) };
          run.send(sampleEvent(called(modelFor(need, callFn, settings), need.prompt, info, telemetry, need.stage), need));
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
        case 'awaiting':
        case 'done':
          return resultOf(need.output);
      }
    }
  } finally {
    run.stop();
  }
}

/** With telemetry a call runs inside its attempt's (or sample's) span, as in `acheck()`. */
function called(callFn: CallFn, prompt: string, info: CallInfo, telemetry: RunTelemetry | null, stage: number): CallOutcome {
  return telemetry ? telemetry.within(info.sample, () => callSynchronously(callFn, prompt, info, stage)) : callSynchronously(callFn, prompt, info, stage);
}

/** `stage` names the function in a message: 0 is `callFn`, then each of `escalate`. */
function callSynchronously(callFn: CallFn, prompt: string, info: CallInfo, stage: number): CallOutcome {
  let reply: unknown;
  try {
    reply = callFn(prompt, info);
  } catch (error) {
    return { type: 'model.failed', error };
  }
  if (isThenable(reply)) {
    swallowRejection(reply);
    const name = stage === 0 ? '`callFn`' : `\`escalate[${stage - 1}]\``;
    throw new TypeError(`${name} returned a Promise, but check() is synchronous; use acheck() for async model calls.`);
  }
  if (isReplyStream(reply)) {
    const name = stage === 0 ? '`callFn`' : `\`escalate[${stage - 1}]\``;
    // Left unread, it is told so: an HTTP stream would otherwise hold its connection open.
    endStream(reply);
    throw new TypeError(`${name} returned a stream, but check() is synchronous and reads whole replies; use acheck(), which reads a streamed reply as it arrives (and onPartial shows it).`);
  }
  return { type: 'model.replied', reply };
}
