import type { Actor } from 'xstate';
import { type CheckpointEvent, type CheckpointOutput, checkpointMachine } from '../machines/checkpoint.js';
import type { Attempt } from './attempt.js';
import { failIfBroken, startRun } from './machine-run.js';
import {
  type AsyncCallFn,
  type AsyncCheckOptions,
  type CallFn,
  type CallInfo,
  type CheckOptions,
  type CheckSettings,
  readCheckArguments,
} from './options.js';
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
        case 'done':
          return toResult(need.output);
      }
    }
  } finally {
    run.stop();
  }
}

/**
 * The asynchronous `check()`: `callFn` may return the text or a Promise of it, and
 * `onAttempt` is awaited. With `signal`, aborting rejects with `signal.reason` at once,
 * without waiting for the call in flight, and no further call is made.
 *
 * @example
 * const result = await acheck((prompt, { signal }) => llm(prompt, { signal }), question, { signal: AbortSignal.timeout(30_000) });
 */
export async function acheck(callFn: AsyncCallFn, prompt: string, options?: AsyncCheckOptions | null): Promise<BoothResult> {
  const settings = readCheckArguments('acheck', callFn, prompt, options);
  const { signal } = settings;
  signal?.throwIfAborted();
  const run = new CheckpointRun(prompt, settings);
  try {
    for (;;) {
      const need = run.next();
      switch (need.kind) {
        case 'call': {
          const info: CallInfo = signal ? { attempt: need.attempt, signal } : { attempt: need.attempt };
          const outcome = await callAsynchronously(callFn, need.prompt, info, signal);
          signal?.throwIfAborted();
          run.send(outcome);
          break;
        }
        case 'validate':
          run.send(runValidator(settings, need.answer));
          break;
        case 'report': {
          const returned = settings.onAttempt?.(need.index, need.attempt);
          if (isThenable(returned)) await untilAborted(Promise.resolve(returned), signal);
          signal?.throwIfAborted();
          break;
        }
        case 'done':
          return toResult(need.output);
      }
    }
  } finally {
    run.stop();
  }
}

/** What the machine needs next from its interpreter. */
type Need =
  | { readonly kind: 'call'; readonly prompt: string; readonly attempt: number }
  | { readonly kind: 'validate'; readonly answer: string }
  | { readonly kind: 'report'; readonly index: number; readonly attempt: Attempt }
  | { readonly kind: 'done'; readonly output: CheckpointOutput };

/**
 * One run of the checkpoint machine, seen from an interpreter: a sequence of needs.
 * Each finished attempt is reported before anything else happens, so `onAttempt(n)`
 * always runs before the call of attempt n + 1 and before the result is returned.
 */
class CheckpointRun {
  readonly #actor: Actor<typeof checkpointMachine>;
  #reported = 0;

  constructor(prompt: string, settings: CheckSettings) {
    const input = {
      prompt,
      threshold: settings.threshold,
      maxRetries: settings.maxRetries,
      hasValidator: settings.validator !== null,
    };
    this.#actor = startRun(checkpointMachine, input, settings.inspect);
  }

  next(): Need {
    const snapshot = this.#actor.getSnapshot();
    failIfBroken(snapshot);
    const { context } = snapshot;
    const unreported = context.attempts[this.#reported];
    if (unreported) return { kind: 'report', index: this.#reported++, attempt: unreported };
    if (snapshot.status === 'done') return { kind: 'done', output: snapshot.output };
    const prompt = context.prompts[context.attempt];
    if (snapshot.value === 'calling' && prompt) return { kind: 'call', prompt: prompt.text, attempt: context.attempt };
    if (snapshot.value === 'validationGate') return { kind: 'validate', answer: context.draft.answer ?? '' };
    throw new Error(`Booth internal error: the checkpoint machine rests in ${JSON.stringify(snapshot.value)}`);
  }

  /** Tells the machine what the model or the validator did; it decides synchronously. */
  send(event: CheckpointEvent): void {
    this.#actor.send(event);
  }

  stop(): void {
    this.#actor.stop();
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

async function callAsynchronously(
  callFn: AsyncCallFn,
  prompt: string,
  info: CallInfo,
  signal: AbortSignal | null,
): Promise<CheckpointEvent> {
  let reply: unknown;
  try {
    reply = callFn(prompt, info);
  } catch (error) {
    return { type: 'model.failed', error };
  }
  if (!isThenable(reply)) return { type: 'model.replied', reply };
  const settled = Promise.resolve(reply).then(
    (resolved): CheckpointEvent => ({ type: 'model.replied', reply: resolved }),
    (error: unknown): CheckpointEvent => ({ type: 'model.failed', error }),
  );
  return untilAborted(settled, signal);
}

/** Settles like `promise`, or rejects with `signal.reason` as soon as the signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | null): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Validators are synchronous in both interpreters; a returned Promise is judged (and refused) by the machine. */
function runValidator(settings: CheckSettings, answer: string): CheckpointEvent {
  try {
    const value = settings.validator?.(answer);
    if (isThenable(value)) swallowRejection(value);
    return { type: 'validator.returned', value };
  } catch (error) {
    return { type: 'validator.threw', error };
  }
}

function toResult(output: CheckpointOutput): BoothResult {
  return new BoothResult({ ...output, evidenceAgreement: null, reason: null, detail: null });
}
