import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acheck, check, clarify, memoryStore, streamCheck } from '../../src/index.js';
import type { CallInfo } from '../../src/decide/model-call.js';
import { forceEngine } from '../../src/engine/engines.js';
import { z } from 'zod';

/**
 * Streams that misbehave: what a hostile or broken `ReplyStream` (or caller) can do, and what
 * Booth must still guarantee — a model's failure stays inside the check, nothing rejects
 * unhandled, the stream is ended once nobody reads it, and the verdict is the whole reply's
 * unless the documented early rule says otherwise.
 */

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

const ENVELOPE = (answer: unknown, confidence: number, more: { ambiguous?: boolean; interpretations?: string[] } = {}) =>
  JSON.stringify({ ambiguous: more.ambiguous ?? false, interpretations: more.interpretations ?? [], chosen_interpretation: null, answer, confidence });

function chunked(text: string, size = 5): AsyncIterable<string> {
  return (async function* () {
    for (let at = 0; at < text.length; at += size) {
      await tick();
      yield text.slice(at, at + size);
    }
  })();
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => void process.on('unhandledRejection', onUnhandled));
afterAll(() => void process.off('unhandledRejection', onUnhandled));
afterEach(async () => {
  // A rejection nobody handled is reported after a macrotask or two.
  await tick();
  await tick();
  expect(unhandled.map(String)).toEqual([]);
  unhandled.length = 0;
});

/** A stream whose iterator cannot be had: `[Symbol.asyncIterator]()` throws. */
const unopenable = () => ({
  [Symbol.asyncIterator]() {
    throw new Error('no iterator for you');
  },
});

describe('a stream that cannot be opened is a failed call, not a rejected check', () => {
  it('an async iterable whose [Symbol.asyncIterator]() throws fails the call; acheck() resolves', async () => {
    const result = await acheck(() => unopenable() as never, 'q', { maxRetries: 0 });
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts[0]!.callFailed).toBe(true);
    expect(result.attempts[0]!.error).toBe('no iterator for you');
  });

  it('a ReadableStream already locked by a reader fails the call; acheck() resolves', async () => {
    const stream = new ReadableStream<string>({
      start(controller) {
        controller.enqueue(ENVELOPE('Paris', 0.9));
        controller.close();
      },
    });
    stream.getReader();
    const result = await acheck(() => stream as never, 'q', { maxRetries: 0 });
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts[0]!.callFailed).toBe(true);
  });

  it('a sample whose stream cannot be opened fails that sample, with no unhandled rejection, and the vote goes on', async () => {
    const result = await acheck((_prompt, info: CallInfo) => (info.sample === 0 ? (unopenable() as never) : chunked(ENVELOPE('Paris', 0.9))), 'q', {
      samples: 3,
      maxRetries: 0,
    });
    expect(result.status).toBe('VERIFIED');
    expect(result.attempts[0]!.samples!.map((s) => s.callFailed)).toEqual([true, false, false]);
  }, 5_000);
});

describe('check() given a stream', () => {
  it('refuses one whose iterator cannot be had with its own TypeError, not the stream\'s error', () => {
    expect(() => check(() => unopenable() as never, 'q')).toThrow(/`callFn` returned a stream, but check\(\) is synchronous/);
    const locked = new ReadableStream<string>();
    locked.getReader();
    expect(() => check(() => locked as never, 'q')).toThrow(/`callFn` returned a stream, but check\(\) is synchronous/);
  });
});

describe('streamCheck() iterated in unusual ways', () => {
  it('two loops over the same run both end, sharing its partials as two loops over one async generator do', async () => {
    const told: unknown[] = [];
    const run = streamCheck(() => chunked(ENVELOPE('Paris', 0.9)), 'q', { onPartial: (p) => told.push(p) });
    const loop = async (into: unknown[]) => {
      for await (const partial of run) into.push(partial);
    };
    const a: unknown[] = [];
    const b: unknown[] = [];
    await Promise.all([loop(a), loop(b)]);
    expect((await run.result).status).toBe('VERIFIED');
    expect(a.length + b.length).toBe(told.length);
  }, 5_000);

  it('a next() pending when return() is called resolves done at once, not when the check ends', async () => {
    const run = streamCheck(() => chunked(ENVELOPE('Paris '.repeat(200), 0.9)), 'q');
    const iterator = run[Symbol.asyncIterator]();
    await iterator.next();
    // Drain what is queued, then wait on the next.
    let pending: Promise<IteratorResult<unknown>>;
    for (;;) {
      pending = iterator.next();
      const first = await Promise.race([pending, Promise.resolve('waiting' as const)]);
      if (first === 'waiting') break;
    }
    await iterator.return!();
    const settled = await Promise.race([pending, tick().then(() => 'still pending' as const)]);
    expect(settled).toEqual({ done: true, value: undefined });
    await run.result;
  }, 5_000);
});

describe('the early verdicts read Booth\'s envelope: a caller who reads replies with a parseFn of their own gets none', () => {
  const parseFn = () => ({ answer: 'Paris', confidence: 0.9 });
  const ambiguousLooking = '{"ambiguous": true, "interpretations": ["a", "b"], "my_format": {"answer": "Paris"}}';
  const badMember = '{"ambiguous": false, "interpretations": [], "answer": {"city": 42}, "mine": {"city": "Paris"}}';

  it.each(['stepper', 'actor'] as const)('a streamed reply is decided by the parseFn on the whole text, as when not streamed (%s)', async (engine) => {
    forceEngine(engine);
    try {
      const whole = await acheck(async () => ambiguousLooking, 'q', { parseFn });
      const streamed = await acheck(() => chunked(ambiguousLooking), 'q', { parseFn });
      expect(whole.status).toBe('VERIFIED');
      expect(streamed.status).toBe(whole.status);
      expect(streamed.trace).toEqual(whole.trace);
      const schema = z.object({ city: z.string() });
      const typedParse = () => ({ answer: { city: 'Paris' }, confidence: 0.9 });
      const wholeTyped = await acheck(async () => badMember, 'q', { parseFn: typedParse, schema });
      const streamedTyped = await acheck(() => chunked(badMember), 'q', { parseFn: typedParse, schema });
      expect(wholeTyped.status).toBe('VERIFIED');
      expect(streamedTyped.status).toBe(wholeTyped.status);
      const samples = await acheck(() => chunked(ambiguousLooking), 'q', { parseFn, samples: 2 });
      expect(samples.status).toBe('VERIFIED');
    } finally {
      forceEngine(null);
    }
  });
});

describe('a check that ends while its stream still flows', () => {
  /** A stream that ignores its signal, a chunk of the answer every `everyMs`, and records when it was ended. */
  function deafStream(everyMs: number) {
    const state = { returnedAt: null as number | null, yielded: 0 };
    const text = ENVELOPE('and on '.repeat(500), 0.9);
    const stream = {
      [Symbol.asyncIterator]: () => {
        let at = 0;
        return {
          async next() {
            await new Promise((resolve) => setTimeout(resolve, everyMs));
            if (at >= text.length) return { done: true, value: undefined };
            state.yielded += 1;
            return { done: false, value: text.slice(at, (at += 7)) };
          },
          async return() {
            state.returnedAt ??= performance.now();
            at = text.length;
            return { done: true, value: undefined };
          },
        };
      },
    };
    return { stream, state };
  }

  it('aborted by the caller: onPartial hears nothing after acheck() rejected, and the stream is ended at once', async () => {
    const { stream, state } = deafStream(2);
    const controller = new AbortController();
    let settled = false;
    let heardAfter = 0;
    const run = acheck(() => stream as never, 'q', {
      signal: controller.signal,
      onPartial: () => {
        if (settled) heardAfter += 1;
      },
    });
    while (state.yielded < 40) await tick();
    controller.abort(new Error('the user left'));
    await expect(run).rejects.toThrow('the user left');
    settled = true;
    const abortedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(heardAfter).toBe(0);
    expect(state.returnedAt).not.toBeNull();
    expect(state.returnedAt! - abortedAt).toBeLessThan(25);
  });

  it('aborted while a slow stream waits for its next chunk: the stream is ended without waiting for it', async () => {
    const { stream, state } = deafStream(200);
    const controller = new AbortController();
    const run = acheck(() => stream as never, 'q', { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 250));
    controller.abort(new Error('the user left'));
    await expect(run).rejects.toThrow('the user left');
    const abortedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(state.returnedAt).not.toBeNull();
    expect(state.returnedAt! - abortedAt).toBeLessThan(30);
  });
});

describe('an onPartial that fails later', () => {
  it('an async onPartial that rejects stops the run with its error, as a throw does; no rejection is left unhandled', async () => {
    const oops = new Error('render failed later');
    let told = 0;
    const onPartial = async () => {
      told += 1;
      await tick();
      throw oops;
    };
    await expect(acheck(() => chunked(ENVELOPE('Paris '.repeat(50), 0.9)), 'q', { onPartial })).rejects.toBe(oops);
    expect(told).toBeGreaterThan(0);
  });

  it('through streamCheck() as well: the loop throws it and result rejects with it', async () => {
    const oops = new Error('render failed later');
    const run = streamCheck(() => chunked(ENVELOPE('Paris '.repeat(50), 0.9)), 'q', {
      onPartial: async () => {
        await tick();
        throw oops;
      },
    });
    await expect(run.result).rejects.toBe(oops);
  });
});

describe('long streams', () => {
  it('memory held while a stream flows does not grow with its chunks: 300 000 empty chunks hold a few MB, not a reaction each', async () => {
    let start = 0;
    let end = 0;
    const result = await acheck(async function* () {
      yield '{"ambiguous": false, "interpretations": [], "answer": "Paris"';
      start = process.memoryUsage().heapUsed;
      for (let i = 0; i < 300_000; i += 1) yield '';
      end = process.memoryUsage().heapUsed;
      yield ', "confidence": 0.9}';
    }, 'q');
    expect(result.status).toBe('VERIFIED');
    // A Promise.race per chunk against one that settles at the end kept ~350 bytes a chunk: over 100 MB here.
    expect((end - start) / 1e6).toBeLessThan(40);
  }, 30_000);
});

describe('in a workflow (the machine\'s own callModel actor)', () => {
  it('a stream that yields something other than a string fails the call and is ended, as acheck() ends it', async () => {
    const { createActor, toPromise } = await import('xstate');
    const { checkpointMachine } = await import('../../machines/index.js');
    let returned = false;
    const model = () => ({
      [Symbol.asyncIterator]: () => {
        let i = 0;
        return {
          next: async () => (i++ === 0 ? { done: false, value: '{"ambiguous": false,' } : { done: false, value: 42 }),
          return: async () => {
            returned = true;
            return { done: true, value: undefined };
          },
        };
      },
    });
    const output = await toPromise(createActor(checkpointMachine, { input: { prompt: 'q', model, maxRetries: 0 } }).start());
    expect(output.status).toBe('UNCERTAIN');
    expect(output.attempts[0]!.error).toMatch(/not a string/);
    expect(returned).toBe(true);
  });
});

describe('streamCheck() reads its options as acheck() does', () => {
  it('an onPartial that is not a function is a TypeError, as for acheck(), not silently dropped', async () => {
    const given = { onPartial: 'render' as never };
    await expect(acheck(async () => ENVELOPE('Paris', 0.9), 'q', given)).rejects.toThrow(TypeError);
    const run = streamCheck(async () => ENVELOPE('Paris', 0.9), 'q', given);
    await expect(run.result).rejects.toThrow(/onPartial/);
  });

  it('options that are not a plain object are refused, as acheck() refuses them', async () => {
    const given = new Date() as never;
    await expect(acheck(async () => ENVELOPE('Paris', 0.9), 'q', given)).rejects.toThrow(/plain object/);
    await expect(streamCheck(async () => ENVELOPE('Paris', 0.9), 'q', given).result).rejects.toThrow(/plain object/);
  });
});

describe('a stream Booth stops reading is ended both ways', () => {
  it('a chunk that is not a string fails the call: the stream\'s return() is called and the call\'s signal aborted', async () => {
    let returned = false;
    let signal: AbortSignal | undefined;
    const result = await acheck(
      (_prompt, info) => {
        signal = info.signal;
        return (async function* () {
          try {
            yield '{"ambiguous": false,';
            yield 7 as unknown as string;
            yield '"never read"';
          } finally {
            returned = true;
          }
        })();
      },
      'q',
      { maxRetries: 0 },
    );
    expect(result.attempts[0]!.callFailed).toBe(true);
    expect(returned).toBe(true);
    expect(signal!.aborted).toBe(true);
  });
});

describe('samples that stream are read whole: a sample ended at its readings would vote without an answer', () => {
  const AMBIGUOUS = ENVELOPE('Texas', 0.6, { ambiguous: true, interpretations: ['Paris, France', 'Paris, Texas'] });
  const bySample = (replies: readonly string[]) => (_prompt: string, info: CallInfo) => chunked(replies[info.sample ?? 0]!);

  it('a run whose streamed samples voted ambiguous waits in its store, and its clarification continues it', async () => {
    const store = memoryStore();
    const options = { samples: 3, checkpoint: store, key: 'k', awaitClarification: true } as const;
    const waiting = await acheck(bySample([AMBIGUOUS, AMBIGUOUS, ENVELOPE('France', 0.9)]), 'Where is Paris?', options);
    expect(waiting.status).toBe('AMBIGUOUS');
    expect(waiting.attempts[0]!.samples!.map((sample) => sample.answer)).toEqual(['Texas', 'Texas', 'France']);
    const continued = await acheck(bySample([ENVELOPE('France', 0.9)]), 'Where is Paris?', { ...options, clarification: 'Paris, France' });
    expect(continued.status).toBe('VERIFIED');
    expect(continued.answer).toBe('France');
  });

  it('clarify() continues an AMBIGUOUS result of streamed samples', async () => {
    const result = await acheck(bySample([AMBIGUOUS, AMBIGUOUS, ENVELOPE('France', 0.9)]), 'Where is Paris?', { samples: 3 });
    expect(result.status).toBe('AMBIGUOUS');
    const clarified = await clarify(result, 0, bySample([ENVELOPE('France', 0.9)]), { samples: 3 });
    expect(clarified.status).toBe('VERIFIED');
  });

  it("a disagreement retry quotes the answers the samples gave, an ambiguous one's included", async () => {
    let round = 0;
    const result = await acheck(
      (_prompt, info) => {
        if (info.sample === 0) round += 1;
        return chunked(round === 1 ? [AMBIGUOUS, ENVELOPE('France', 0.9), ENVELOPE('Lyon', 0.9)][info.sample!]! : ENVELOPE('France', 0.95));
      },
      'Where is Paris?',
      { samples: 3, sampleConcurrency: 1 },
    );
    expect(result.prompts[1]!.kind).toBe('disagreement');
    expect(result.prompts[1]!.text).toContain('"Texas"');
    expect(result.prompts[1]!.text).not.toContain('"null"');
  });
});

describe('ending a stream whose end fails', () => {
  it('a return() that rejects with a Promise of another realm (a vm context, an iframe) leaves no unhandled rejection', async () => {
    const { runInNewContext } = await import('node:vm');
    const stream = {
      [Symbol.asyncIterator]: () => ({
        next: async () => ({ done: false, value: '{"ambiguous": true, "interpretations": ["a", "b"], ' }),
        return: () => runInNewContext('Promise.reject(new Error("cannot close"))') as Promise<IteratorResult<string>>,
      }),
    };
    const result = await acheck(() => stream as never, 'q');
    expect(result.status).toBe('AMBIGUOUS');
  });
});
