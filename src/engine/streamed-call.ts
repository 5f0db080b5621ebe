import type { ReplyStream } from '../decide/model-call.js';
import { type AnswerRule, ReplyReader } from '../reply/stream-reader.js';
import type { AnswerSchema } from '../decide/schema.js';
import { streamNews } from '../../machines/checkpoint/streamed.js';
import type { RunTelemetry } from '../telemetry/run-telemetry.js';
import { describeValue, isThenable } from '../util/values.js';
import { iterate } from '../reply/reply-streams.js';
import type { PartialReply } from './partial-reply.js';
import type { CallOutcome, CheckpointRun } from './checkpoint-run.js';

/**
 * A reply that streams, as an interpreter reads it: each chunk goes to the reader and to
 * `onPartial`; only what changes a decision's footing goes to the machine, which alone
 * decides; the finished text comes to it as any reply does. The stream is ended (its
 * iterator's `return()`, the call's signal aborted) as soon as the machine no longer waits
 * for the call: an early verdict, a timeout, the deadline, the run's end.
 */

/** Who a streamed call reports to. */
export interface StreamTarget {
  readonly run: CheckpointRun;
  readonly call: number;
  readonly attempt: number;
  readonly sample: number | undefined;
  readonly model: string | null;
  readonly rule: AnswerRule | null;
  /** The schema, which confirms a member the rule flags. */
  readonly schema: AnswerSchema | null;
  readonly onPartial: ((partial: PartialReply) => void) | null;
  /** Whether an earlier stream of this call or sample was shown: the first partial then replaces its text. */
  readonly replaces: boolean;
  /** Aborted when Booth ends the stream. */
  readonly controller: { abort(reason: unknown): void } | null;
  /** Told when `onPartial` throws: the run stops with that error. */
  readonly halt: ((error: unknown) => void) | null;
  readonly telemetry: RunTelemetry | null;
}

const UNWANTED = Symbol('unwanted');

/**
 * Reads `stream` to its end, or until the machine no longer waits for the call. Resolves
 * with the call's outcome (the whole text, or what the stream threw), or undefined when the
 * machine moved on without it. Never rejects.
 */
export async function readReplyStream(stream: ReplyStream, target: StreamTarget): Promise<CallOutcome | undefined> {
  const { run, call, onPartial } = target;
  let chunks: ReturnType<typeof iterate> | null = null;
  const reader = new ReplyReader(target.rule);
  const unwanted = new Unwanted(run, call);
  const startedAt = performance.now();
  let firstChunkMs: number | null = null;
  let count = 0;
  let ended: 'whole' | 'early' | 'failed' = 'early';
  let replaces = target.replaces;
  try {
    // Inside the try: a stream whose iterator cannot be had (its method throws, a locked ReadableStream) is a failed call.
    chunks = iterate(stream);
    for (;;) {
      const step = await unwanted.or(chunks.next);
      if (step === UNWANTED) return undefined;
      if (step.done) {
        ended = 'whole';
        return { type: 'model.replied', reply: reader.text };
      }
      const chunk = step.value;
      if (typeof chunk !== 'string') {
        ended = 'failed';
        return { type: 'model.failed', error: new TypeError(`The reply stream yielded ${describeValue(chunk)}, not a string: a ReplyStream yields the reply's text in chunks.`) };
      }
      firstChunkMs ??= performance.now() - startedAt;
      count += 1;
      const bits = reader.push(chunk);
      // A chunk that comes once the run moved on (the caller aborted, the check ended) is nobody's to hear.
      if (!run.wantsCall(call)) return undefined;
      if (onPartial !== null) {
        try {
          const returned: unknown = onPartial(partialOf(reader, target, replaces));
          // An async onPartial's rejection is its throw, come later: it stops the run (if still running), never unhandled.
          if (isThenable(returned)) Promise.resolve(returned).then(undefined, (error: unknown) => target.halt?.(error));
        } catch (error) {
          target.halt?.(error);
          return undefined;
        }
        replaces = false;
      }
      if (bits === 0) continue;
      for (const event of streamNews(bits, reader, call, target.sample, target.schema)) {
        if (!run.wantsCall(call)) return undefined;
        run.send(event);
      }
      if (!run.wantsCall(call)) return undefined;
    }
  } catch (error) {
    ended = 'failed';
    return { type: 'model.failed', error };
  } finally {
    if (ended !== 'whole') {
      chunks?.stop();
      // Ended early or failed (a chunk that is not text, a next() that threw): either way nobody reads the rest.
      target.controller?.abort(new DOMException('Booth no longer waits for this call', 'AbortError'));
    }
    target.telemetry?.streamed(target.attempt, target.sample, { firstChunkMs, chunks: count, early: ended === 'early' });
  }
}

function partialOf(reader: ReplyReader, { attempt, sample, model }: StreamTarget, replaces: boolean): PartialReply {
  const partial: PartialReply = {
    attempt,
    ...(sample === undefined ? {} : { sample }),
    ...(model === null ? {} : { model }),
    replaces,
    ambiguous: reader.ambiguous,
    interpretations: reader.interpretations,
    answerSoFar: reader.answerSoFar,
    textSoFar: reader.text,
  };
  return partial;
}

/**
 * Waits for a stream's next chunk, or for the machine to stop waiting for call `call`,
 * whichever comes first. One listener on the run for the whole stream: a `Promise.race`
 * of each chunk with one Promise that settles only at the end left a reaction on it per
 * chunk, held until the stream ended (about 350 bytes a chunk: 180 MB for 500 000).
 */
class Unwanted {
  #gone = false;
  #settle: ((value: typeof UNWANTED) => void) | null = null;

  constructor(run: CheckpointRun, call: number) {
    const check = (): void => {
      if (run.wantsCall(call)) {
        void run.changed().then(check);
        return;
      }
      this.#gone = true;
      this.#settle?.(UNWANTED);
      this.#settle = null;
    };
    check();
  }

  /** What `next()` settles with, or UNWANTED; `next()` throwing rejects it. */
  or<T>(next: () => PromiseLike<T>): Promise<T | typeof UNWANTED> {
    if (this.#gone) return Promise.resolve(UNWANTED);
    return new Promise<T | typeof UNWANTED>((resolve, reject) => {
      this.#settle = resolve;
      // A rejection after the run moved on is handled here, and ignored.
      Promise.resolve(next()).then(resolve, reject);
    });
  }
}
