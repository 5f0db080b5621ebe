import { redactUrls } from '../util/urls.js';
import { describeValue } from '../util/values.js';
import { ProviderError } from './http.js';

/** What the streaming adapters share: the `stream` option, the iterator Booth reads, and how a stream fails. */

/** `stream`: false unless given; anything but a boolean is refused before any call. */
export function readStream(value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  throw new TypeError(`Expected \`stream\` to be a boolean (true to stream the reply to acheck(), which reads it as it arrives), got ${describeValue(value)}.`);
}

/**
 * An AbortController that follows the call's signal: the request is sent with its signal, so
 * either the caller (`info.signal`) or the end of the iteration (`return()`) can abort it.
 */
export interface LinkedAbort {
  readonly signal: AbortSignal;
  abort(): void;
  /** Stops following the call's signal, once the stream has ended. */
  dispose(): void;
}

export function linkedAbort(outer: AbortSignal | undefined): LinkedAbort {
  const controller = new AbortController();
  const follow = () => controller.abort(outer?.reason);
  if (outer?.aborted) follow();
  else outer?.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    abort: () => controller.abort(),
    dispose: () => outer?.removeEventListener('abort', follow),
  };
}

/** Where a streaming adapter reads its provider's stream from. */
export interface ChunkSource {
  /** The texts the next piece of the stream carries (perhaps none), or null once it has ended well. Throws what the stream failed with. */
  read(): Promise<readonly string[] | null>;
  /** The caller ended the iteration early: abort the request. */
  cancel(): void;
  /** Called once, however the iteration ends: report the usage the stream gave, stop listening. */
  settle(): void;
}

const DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * The reply as Booth reads it: text chunks in order, never an empty one. `return()` (a
 * `break` in `for await`) aborts the request at once, even while a read is pending, which
 * then ends the iteration instead of failing it; an async generator would queue that
 * `return()` behind the read.
 */
export function textStream(source: ChunkSource): AsyncIterableIterator<string> {
  const queue: string[] = [];
  let state: 'open' | 'ended' | 'closed' = 'open';
  // Read through a function: return() may close the stream while next() awaits a read.
  const closed = () => state === 'closed';
  const end = () => {
    state = 'ended';
    source.settle();
  };
  const iterator: AsyncIterableIterator<string> = {
    async next(): Promise<IteratorResult<string>> {
      for (;;) {
        if (queue.length > 0) return { done: false, value: queue.shift()! };
        if (state !== 'open') return DONE;
        let texts: readonly string[] | null;
        try {
          texts = await source.read();
        } catch (error) {
          if (closed()) return DONE;
          end();
          throw error;
        }
        if (closed()) return DONE;
        if (texts === null) end();
        else for (const text of texts) if (text !== '') queue.push(text);
      }
    },
    async return(): Promise<IteratorResult<string>> {
      if (state === 'open') {
        state = 'closed';
        queue.length = 0;
        try {
          source.cancel();
        } finally {
          source.settle();
        }
      }
      return DONE;
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

/**
 * A stream that failed after its response began: the caller's abort passes unchanged, so
 * Booth still tells a timeout from an outage; anything else becomes a `ProviderError` of the
 * response's status, which `callRetries` counts transient (the request went through, the
 * stream broke). `what` names the stream and where it stopped, never what it said.
 */
export function streamFailure(error: unknown, outer: AbortSignal | undefined, status: number, what: string): unknown {
  if (outer?.aborted) return outer.reason;
  if (error instanceof ProviderError) return error;
  // An SDK's message may name the endpoint, key and all in a query or user name.
  return new ProviderError(status, `${what} (${redactUrls(failureText(error))})`, null, { cause: error });
}

/** `terminated: other side closed`: an error's message and its cause's, as undici words a cut connection. */
function failureText(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  const cause = (error as { cause?: unknown } | null)?.cause;
  const causeMessage = (cause as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' && message !== '' ? message : String(error);
  return typeof causeMessage === 'string' && causeMessage !== '' && causeMessage !== text ? `${text}: ${causeMessage}` : text;
}

/** How an SDK's stream of events becomes the reply's text: what each event says, and what its end must have. */
export interface EventReading<E> {
  /** The call's signal: its abort passes unchanged. */
  readonly outer: AbortSignal | undefined;
  /** Aborts the request; the SDK was given its signal. */
  readonly link: LinkedAbort;
  /** Names the stream in a failure: "The OpenAI client's stream". */
  readonly what: string;
  /** The texts an event carries (perhaps none). */
  textsOf(event: E): readonly string[];
  /** The stream ended: throws when what it said is no reply (no content); may wait for the usage. */
  finish(): void | Promise<void>;
  /** Reports the usage the events gave, once. */
  report(): void;
}

/**
 * The reply of an SDK's event stream (the `openai` and `@anthropic-ai/sdk` clients'
 * `Stream`, the AI SDK's `fullStream`). Those end quietly when their request is aborted, so
 * an end after the call's signal fired rejects with its reason, as a request would.
 */
export function eventTextStream<E>(events: AsyncIterable<E>, reading: EventReading<E>): AsyncIterableIterator<string> {
  const iterator = events[Symbol.asyncIterator]();
  let count = 0;
  return textStream({
    async read() {
      let next: IteratorResult<E>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw streamFailure(error, reading.outer, 200, `${reading.what} failed after ${count} events`);
      }
      if (next.done) {
        if (reading.outer?.aborted) throw reading.outer.reason;
        await reading.finish();
        return null;
      }
      count++;
      return reading.textsOf(next.value);
    },
    cancel() {
      reading.link.abort();
      // The SDK's own end of the iteration, which aborts its request too.
      Promise.resolve(iterator.return?.()).catch(() => {});
    },
    settle() {
      reading.link.dispose();
      reading.report();
    },
  });
}
