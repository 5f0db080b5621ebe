import type { CheckpointEvent, CheckpointOutput } from '../machines/checkpoint.js';
import { CheckpointRun } from './checkpoint-run.js';
import { type CallFn, type CallInfo, type CheckOptions, type CheckSettings, readCheckArguments } from './options.js';
import { BoothResult } from './result.js';
import { isThenable, swallowRejection } from './values.js';

/**
 * Asks the model through `callFn` and checks the reply: ambiguity first, then the
 * validator, then confidence, reconsidering up to `maxRetries` times. Fully
 * synchronous: `callFn` must return the model's text, not a Promise (use `acheck()`).
 *
 * @example
 * const result = check((prompt) => model.complete(prompt), 'What is the boiling point of water at sea level in °C?');
 * if (result.ok) console.log(result.answer);
 */
export function check(callFn: CallFn, prompt: string, options?: CheckOptions | null): BoothResult {
  const settings = readCheckArguments('check', callFn, prompt, options);
  const run = new CheckpointRun(prompt, settings);
  try {
    for (;;) {
      const need = run.next();
      switch (need.kind) {
        case 'call':
          run.send(callSynchronously(callFn, need.prompt, { attempt: need.attempt }));
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
          return toResult(need.output);
      }
    }
  } finally {
    run.stop();
  }
}

function callSynchronously(callFn: CallFn, prompt: string, info: CallInfo): CheckpointEvent {
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

/** Validators are synchronous in both interpreters; a returned Promise is judged (and refused) by the machine. */
export function runValidator(settings: CheckSettings, answer: string): CheckpointEvent {
  try {
    const value = settings.validator?.(answer);
    if (isThenable(value)) swallowRejection(value);
    return { type: 'validator.returned', value };
  } catch (error) {
    return { type: 'validator.threw', error };
  }
}

export function toResult(output: CheckpointOutput): BoothResult {
  return new BoothResult({ ...output, evidenceAgreement: null, reason: null, detail: null });
}
