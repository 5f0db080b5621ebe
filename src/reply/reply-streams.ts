import { isThenable, swallowRejection } from '../util/values.js';

/**
 * A reply that arrives in pieces, for `acheck()`: its text chunks in order, as an async
 * iterable (an async generator, a provider SDK's text stream) or a web `ReadableStream` of
 * strings. Booth reads it as it arrives and may end it early: it calls the iterator's
 * `return()` (or cancels the stream) and aborts the call's `signal`.
 */
export type ReplyStream = AsyncIterable<string> | ReadableStream<string>;

/** Telling a reply that streams from text, and reading or ending it, whichever kind of stream it is: async iterable or web ReadableStream. */

/** Whether a callFn returned a stream rather than text: an async iterable, or a web `ReadableStream`. */
export function isReplyStream(value: unknown): value is ReplyStream {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function' || typeof (value as ReadableStream).getReader === 'function';
  } catch {
    return false;
  }
}

/** Ends a stream nobody will read; never throws, even for one whose iterator cannot be had. */
export function endStream(stream: ReplyStream): void {
  quietly(() => iterate(stream).stop());
}

/** A stream's chunks, one at a time, and a way to end it early that never throws. */
export function iterate(stream: ReplyStream): { next(): Promise<IteratorResult<unknown>>; stop(): void } {
  if (typeof (stream as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
    const iterator = (stream as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    return {
      next: () => iterator.next(),
      stop: () => quietly(() => iterator.return?.()),
    };
  }
  const reader = (stream as ReadableStream<unknown>).getReader();
  return {
    next: () => reader.read() as Promise<IteratorResult<unknown>>,
    stop: () => quietly(() => reader.cancel()),
  };
}

/** Ends a stream without waiting for it: whatever its end throws or rejects with is its own. */
function quietly(end: () => unknown): void {
  try {
    const ending = end();
    // Any thenable, not only this realm's Promise: a stream made in a vm context or an iframe returns its own.
    if (isThenable(ending)) swallowRejection(ending);
  } catch {
    // A stream that cannot be ended is left to its signal.
  }
}
