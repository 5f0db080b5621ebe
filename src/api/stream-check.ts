import { acheck } from './acheck.js';
import type { AsyncCheckOptions, TypedAsyncCheckOptions } from './options.js';
import type { AsyncCallFn } from '../decide/model-call.js';
import type { CheckResult, TypedCheckResult } from '../results/result.js';
import type { PartialReply } from '../engine/partial-reply.js';
import { isPlainObject, swallowRejection } from '../util/values.js';

/**
 * A check whose reply streams, for `for await`: the partials as they arrive, and the
 * verdict, held until the run decides, in `result`.
 */
export interface CheckStream<TResult = CheckResult> extends AsyncIterable<PartialReply> {
  /** The check's result, as `acheck()` returns it. Iterating is not needed to get it. */
  readonly result: Promise<TResult>;
}

/**
 * `acheck()` for `for await`: yields each `PartialReply` (as `onPartial` would be told) until
 * the run decides, then ends; `result` is the verdict. A check that fails makes the loop throw
 * its error, as `result` rejects with it. Breaking out of the loop stops the partials, not the
 * check: abort it with `signal`.
 *
 * @example
 * const run = streamCheck(openAICompatible({ baseURL, model, stream: true }), question);
 * for await (const partial of run) render(partial.answerSoFar, partial.replaces);
 * const { status, answer } = await run.result;
 */
export function streamCheck<T>(callFn: AsyncCallFn, prompt: string, options: TypedAsyncCheckOptions<T>): CheckStream<TypedCheckResult<T>>;
export function streamCheck(callFn: AsyncCallFn, prompt: string, options?: AsyncCheckOptions | null): CheckStream<CheckResult>;
export function streamCheck(callFn: AsyncCallFn, prompt: string, options?: AsyncCheckOptions<unknown> | null): CheckStream<CheckResult<unknown, unknown>>;
export function streamCheck(callFn: AsyncCallFn, prompt: string, options?: object | null): CheckStream<CheckResult<unknown, unknown>> {
  const partials = new PartialQueue();
  const own = (isPlainObject(options) ? options : {}) as { onPartial?: unknown };
  const theirs = typeof own.onPartial === 'function' ? (own.onPartial as (partial: PartialReply) => unknown) : null;
  const onPartial = (partial: PartialReply): unknown => {
    const returned = theirs?.(partial);
    partials.push(partial);
    // An async onPartial's Promise goes back to acheck(), which stops the run if it rejects.
    return returned;
  };
  // Options of any other shape, or an onPartial that is no function, go to acheck() as given: it names what is wrong with them.
  const readable = options === undefined || options === null || (isPlainObject(options) && (own.onPartial === undefined || own.onPartial === null || theirs !== null));
  const given = readable ? { ...options, onPartial } : options;
  const result = acheck(callFn, prompt, given as AsyncCheckOptions<unknown>);
  result.then(
    () => partials.end(null),
    (error: unknown) => partials.end({ error }),
  );
  // Whoever only iterates learns of a failure from the loop: the Promise left unawaited is not an unhandled rejection.
  swallowRejection(result);
  return { result, [Symbol.asyncIterator]: () => partials.iterator() };
}

/** Partials waiting for a reader, and the reader waiting for them. */
class PartialQueue {
  readonly #waiting: PartialReply[] = [];
  /** Every `next()` waiting: two loops over one run (or a `next()` not awaited) each wait, as they would on an async generator. */
  #wakes: Array<() => void> = [];
  #ended: { readonly error: unknown } | null | undefined = undefined;
  #stopped = false;

  push(partial: PartialReply): void {
    if (this.#stopped) return;
    this.#waiting.push(partial);
    this.#notify();
  }

  end(failure: { readonly error: unknown } | null): void {
    this.#ended = failure;
    this.#notify();
  }

  #notify(): void {
    const wakes = this.#wakes;
    this.#wakes = [];
    for (const wake of wakes) wake();
  }

  iterator(): AsyncIterator<PartialReply> {
    return {
      next: async (): Promise<IteratorResult<PartialReply>> => {
        for (;;) {
          const partial = this.#waiting.shift();
          if (partial !== undefined) return { done: false, value: partial };
          if (this.#ended !== undefined || this.#stopped) {
            const ended = this.#ended;
            this.#stopped = true;
            // Thrown once: the loop that met it has ended.
            this.#ended = null;
            if (ended) throw ended.error;
            return { done: true, value: undefined };
          }
          await new Promise<void>((resolve) => this.#wakes.push(resolve));
        }
      },
      return: async (): Promise<IteratorResult<PartialReply>> => {
        this.#stopped = true;
        this.#waiting.length = 0;
        // A next() still waiting ends now, not when the check does.
        this.#notify();
        return { done: true, value: undefined };
      },
    };
  }
}
