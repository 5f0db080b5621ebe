import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { acheck, check, memoryStore, type PartialReply, streamCheck } from '../../src/index.js';
import type { CallInfo } from '../../src/decide/model-call.js';
import { forceEngine } from '../../src/engine/engines.js';

/**
 * Streaming with a held verdict: a callFn may return its reply in chunks; acheck() reads them
 * as they arrive, shows them through onPartial, and decides as soon as the reply allows —
 * AMBIGUOUS once the readings are complete, a failed schema member at once — and otherwise
 * exactly as for the whole text.
 */

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

const ENVELOPE = (answer: unknown, confidence: number, more: { ambiguous?: boolean; interpretations?: string[] } = {}) =>
  JSON.stringify({ ambiguous: more.ambiguous ?? false, interpretations: more.interpretations ?? [], chosen_interpretation: null, answer, confidence });

const AMBIGUOUS_REPLY = ENVELOPE('A long answer nobody needs. '.repeat(40), 0.5, { ambiguous: true, interpretations: ['Paris, France', 'Paris, Texas'] });

/** A model that streams `texts[i]` on call i (the last one again after), `size` characters a chunk, and records what it sent. */
function streamingModel(texts: readonly string[], size = 4) {
  const calls: { sent: number; closed: boolean; aborted: boolean; info: CallInfo }[] = [];
  const callFn = (_prompt: string, info: CallInfo) => {
    const text = texts[Math.min(calls.length, texts.length - 1)]!;
    const call = { sent: 0, closed: false, aborted: false, info };
    calls.push(call);
    info.signal?.addEventListener('abort', () => (call.aborted = true));
    return (async function* () {
      try {
        for (let at = 0; at < text.length; at += size) {
          await tick();
          call.sent = Math.min(text.length, at + size);
          yield text.slice(at, at + size);
        }
      } finally {
        call.closed = true;
      }
    })();
  };
  return { callFn, calls };
}

afterEach(() => forceEngine(null));

describe.each(['stepper', 'actor'] as const)('on the %s engine', (engine) => {
  it('an ambiguous question is AMBIGUOUS once its readings are complete: the stream is ended, the answer never generated', async () => {
    forceEngine(engine);
    const model = streamingModel([AMBIGUOUS_REPLY]);
    const result = await acheck(model.callFn, 'Where is Paris?');
    expect(result.status).toBe('AMBIGUOUS');
    expect(result.interpretations).toEqual(['Paris, France', 'Paris, Texas']);
    const [call] = model.calls;
    expect(call!.closed).toBe(true);
    expect(call!.aborted).toBe(true);
    // Up to the chunk that closed the readings' array, not a character of the answer.
    expect(call!.sent).toBeLessThan(AMBIGUOUS_REPLY.indexOf('"answer"') + 4);
    expect(result.attempts[0]!.rawText).toBe(AMBIGUOUS_REPLY.slice(0, call!.sent));
    expect(result.attempts[0]!.parsed).toEqual({ ambiguous: true, interpretations: ['Paris, France', 'Paris, Texas'] });
    expect(result.trace.map((step) => step.state)).toEqual(['calling', 'ambiguityGate', 'ambiguous']);
  });

  it('a clear reply is decided as the same text not streamed is, once the stream ends', async () => {
    forceEngine(engine);
    const text = ENVELOPE('Paris is in France.', 0.9);
    const streamed = await acheck(streamingModel([text], 3).callFn, 'Where is Paris?');
    const whole = await acheck(async () => text, 'Where is Paris?');
    const decided = ({ status, answer, confidence, attempts, trace, prompts }: typeof whole) => ({
      status,
      answer,
      confidence,
      trace,
      prompts,
      attempts: attempts.map(({ durationMs: _, ...attempt }) => attempt),
    });
    expect(decided(streamed)).toEqual(decided(whole));
    expect(streamed.status).toBe('VERIFIED');
  });

  it('a schema member of the wrong type fails the attempt as it arrives; the retry says why', async () => {
    forceEngine(engine);
    const wrong = `{"ambiguous": false, "interpretations": [], "chosen_interpretation": null, "answer": {"city": 42, "country": "${'France '.repeat(50)}"}, "confidence": 0.9}`;
    const right = ENVELOPE({ city: 'Paris', country: 'France' }, 0.9);
    const model = streamingModel([wrong, right]);
    const schema = z.object({ city: z.string(), country: z.string() });
    const result = await acheck(model.callFn, 'Where is Paris?', { schema });
    expect(result.status).toBe('REPAIRED');
    expect(result.answer).toEqual({ city: 'Paris', country: 'France' });
    const [first] = result.attempts;
    expect(first!.schemaIssues).toEqual([{ path: 'answer.city', message: expect.stringMatching(/expected string, received number/) }]);
    expect(first!.passedValidation).toBe(false);
    expect(model.calls[0]!.aborted).toBe(true);
    expect(model.calls[0]!.sent).toBeLessThan(wrong.indexOf('"country"') + 4);
    expect(result.prompts.map((p) => p.kind)).toEqual(['first', 'validation']);
    expect(result.prompts[1]!.text).toMatch(/answer\.city: Invalid input: expected string, received number/);
    expect(result.trace.map((step) => step.state).slice(0, 3)).toEqual(['calling', 'answerRefused', 'reconsidering']);
  });
});

describe('onPartial: the answer as it arrives, the verdict held', () => {
  it('gives the answer so far at every chunk, each a prefix of the next, with the readings once complete', async () => {
    const text = ENVELOPE('Paris is the capital of France.', 0.9);
    const partials: PartialReply[] = [];
    const result = await acheck(streamingModel([text], 2).callFn, 'Capital?', { onPartial: (partial) => partials.push(partial) });
    expect(result.status).toBe('VERIFIED');
    expect(partials).toHaveLength(Math.ceil(text.length / 2));
    const answers = partials.map((p) => p.answerSoFar).filter((a): a is string => a !== null);
    expect(answers.at(-1)).toBe('Paris is the capital of France.');
    answers.forEach((answer, i) => expect(answers.at(-1)!.startsWith(answer) && (i === 0 || answer.startsWith(answers[i - 1]!))).toBe(true));
    // The answer's first characters came before the reply was a third through.
    const first = partials.findIndex((p) => p.answerSoFar !== null && p.answerSoFar !== '');
    expect(first).toBeLessThan(partials.length * 0.8);
    expect(partials.at(-1)!.textSoFar).toBe(text);
    expect(partials.every((p) => p.attempt === 0 && p.sample === undefined && !('model' in p))).toBe(true);
    expect(partials.map((p) => p.replaces)).toEqual(partials.map((_, i) => false && i));
    expect(partials.find((p) => p.ambiguous !== null)!.ambiguous).toBe(false);
    expect(partials.at(-1)!.interpretations).toEqual([]);
  });

  it('marks the first partial of a retry as replacing what the rejected attempt showed', async () => {
    const partials: PartialReply[] = [];
    const result = await acheck(streamingModel([ENVELOPE('Lyon', 0.2), ENVELOPE('Paris', 0.95)]).callFn, 'Capital?', { onPartial: (p) => partials.push(p) });
    expect(result.status).toBe('REPAIRED');
    const starts = partials.filter((p) => p.replaces);
    expect(starts).toHaveLength(1);
    expect(starts[0]!.attempt).toBe(1);
    expect(partials.indexOf(starts[0]!)).toBe(partials.findIndex((p) => p.attempt === 1));
  });

  it('a throw in onPartial rejects acheck() with it and ends the stream', async () => {
    const model = streamingModel([ENVELOPE('Paris', 0.9)]);
    const oops = new Error('render failed');
    await expect(
      acheck(model.callFn, 'q', {
        onPartial: () => {
          throw oops;
        },
      }),
    ).rejects.toBe(oops);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.closed).toBe(true);
  });

  it('streamCheck() yields the same partials for `for await`, then the result', async () => {
    const text = ENVELOPE('Paris', 0.9);
    const told: PartialReply[] = [];
    await acheck(streamingModel([text]).callFn, 'q', { onPartial: (p) => told.push(p) });
    const run = streamCheck(streamingModel([text]).callFn, 'q');
    const iterated: PartialReply[] = [];
    for await (const partial of run) iterated.push(partial);
    expect(iterated).toEqual(told);
    expect((await run.result).status).toBe('VERIFIED');
  });

  it('streamCheck() throws the check\'s error from the loop, and result rejects with it', async () => {
    const run = streamCheck(streamingModel([ENVELOPE('Paris', 0.9)]).callFn, 'q', { threshold: 2 });
    await expect(run.result).rejects.toThrow(/threshold/);
    await expect((async () => {
      for await (const _ of run) void _;
    })()).rejects.toThrow(/threshold/);
  });
});

describe('a stream, everywhere a reply goes', () => {
  it('a web ReadableStream of strings is read as an async iterable is', async () => {
    const text = ENVELOPE('Paris', 0.9);
    const result = await acheck(
      () =>
        new ReadableStream<string>({
          start(controller) {
            for (let at = 0; at < text.length; at += 5) controller.enqueue(text.slice(at, at + 5));
            controller.close();
          },
        }),
      'q',
    );
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toBe('Paris');
  });

  it('a chunk that is not a string fails the call, as a reply that is not text does', async () => {
    const result = await acheck(
      async function* () {
        yield '{"ambiguous": false,';
        yield 42 as unknown as string;
      },
      'q',
      { maxRetries: 0 },
    );
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts[0]!.callFailed).toBe(true);
    expect(result.attempts[0]!.error).toMatch(/yielded the number 42|yielded 42/);
  });

  it('a stream cut mid-reply is a failed call, retried by callRetries, and the retry replaces its text', async () => {
    let call = 0;
    const partials: PartialReply[] = [];
    const result = await acheck(
      async function* () {
        call += 1;
        yield '{"ambiguous": false, "interpretations": [], "answer": "Par';
        if (call === 1) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        yield 'is", "confidence": 0.9}';
      },
      'q',
      { callRetries: { retries: 1, minDelayMs: 1, maxDelayMs: 1 }, onPartial: (p) => partials.push(p) },
    );
    expect(result.status).toBe('VERIFIED');
    expect(result.attempts[0]!.callTries).toHaveLength(2);
    expect(partials.map((p) => [p.attempt, p.replaces])).toEqual([
      [0, false],
      [0, true],
      [0, false],
    ]);
  });

  it('a call that times out mid-stream is ended, and the run goes on', async () => {
    const model = streamingModel([ENVELOPE('slow '.repeat(200), 0.9), ENVELOPE('Paris', 0.9)], 1);
    let calls = 0;
    const result = await acheck(
      (prompt, info) => {
        calls += 1;
        return calls === 1 ? model.callFn(prompt, info) : ENVELOPE('Paris', 0.95);
      },
      'q',
      { timeoutMs: 60 },
    );
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]!.error).toMatch(/timed out after 60 ms/);
    expect(model.calls[0]!.aborted).toBe(true);
    // Ended, not awaited: the generator finishes once its pending chunk is out.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(model.calls[0]!.closed).toBe(true);
  });

  it('each sample streams on its own and is read whole: its answer votes, an ambiguous one as well', async () => {
    const replies = [AMBIGUOUS_REPLY, AMBIGUOUS_REPLY, ENVELOPE('Paris, France', 0.9)];
    const closed: boolean[] = [];
    const partials: PartialReply[] = [];
    const result = await acheck(
      (_prompt, info) => {
        const text = replies[info.sample!]!;
        const at = info.sample!;
        return (async function* () {
          try {
            for (let i = 0; i < text.length; i += 8) {
              await tick();
              yield text.slice(i, i + 8);
            }
          } finally {
            closed[at] = true;
          }
        })();
      },
      'Where is Paris?',
      { samples: 3, onPartial: (p) => partials.push(p) },
    );
    expect(result.status).toBe('AMBIGUOUS');
    expect(closed).toEqual([true, true, true]);
    expect(new Set(partials.map((p) => p.sample))).toEqual(new Set([0, 1, 2]));
    expect(partials.filter((p) => p.sample === 0).at(-1)!.textSoFar).toBe(AMBIGUOUS_REPLY);
    expect(result.attempts[0]!.samples!.map((s) => s.ambiguous)).toEqual([true, true, false]);
    expect(result.attempts[0]!.samples!.map((s) => s.rawText)).toEqual(replies);
  });

  it('in a cascade, each model streams, and its partials name it', async () => {
    const partials: PartialReply[] = [];
    const result = await acheck(streamingModel([ENVELOPE('Lyon', 0.2)]).callFn, 'q', {
      maxRetries: 0,
      modelName: 'small',
      escalate: [{ call: streamingModel([ENVELOPE('Paris', 0.95)]).callFn, name: 'large' }],
      onPartial: (p) => partials.push(p),
    });
    expect(result.status).toBe('VERIFIED');
    expect(result.model).toBe('large');
    expect([...new Set(partials.map((p) => p.model))]).toEqual(['small', 'large']);
    expect(partials.find((p) => p.model === 'large')!.replaces).toBe(true);
  });

  it('a durable run stopped mid-stream repeats only that call when resumed', async () => {
    const store = memoryStore();
    const key = 'stream-1';
    const asked: number[] = [];
    const controller = new AbortController();
    const firstRun = acheck(
      (_prompt, info) => {
        asked.push(info.attempt);
        if (info.attempt === 0) return ENVELOPE('Lyon', 0.2);
        return (async function* () {
          yield '{"ambiguous": false, "interpretations": [], "answer": "Pa';
          controller.abort(new Error('the process died'));
          await new Promise(() => undefined);
        })();
      },
      'Capital?',
      { checkpoint: store, key, signal: controller.signal },
    );
    await expect(firstRun).rejects.toThrow('the process died');
    const resumed = await acheck(
      (_prompt, info) => {
        asked.push(info.attempt);
        return streamingModel([ENVELOPE('Paris', 0.95)]).callFn(_prompt, info);
      },
      'Capital?',
      { checkpoint: store, key },
    );
    expect(resumed.status).toBe('REPAIRED');
    expect(asked).toEqual([0, 1, 1]);
    expect(resumed.attempts.map((a) => a.answer)).toEqual(['Lyon', 'Paris']);
  });

  it('an ambiguous question waits for its clarification as soon as the readings are complete', async () => {
    const store = memoryStore();
    const model = streamingModel([AMBIGUOUS_REPLY]);
    const waiting = await acheck(model.callFn, 'Where is Paris?', { checkpoint: store, key: 'k', awaitClarification: true });
    expect(waiting.status).toBe('AMBIGUOUS');
    expect(waiting.interpretations).toEqual(['Paris, France', 'Paris, Texas']);
    expect(model.calls[0]!.aborted).toBe(true);
    expect(store.size).toBe(1);
  });

  it('check() refuses a stream with a TypeError pointing to acheck(), and ends it', () => {
    let closed = false;
    const stream = (async function* () {
      try {
        yield 'x';
      } finally {
        closed = true;
      }
    })();
    expect(() => check(() => stream as unknown as string, 'q')).toThrow(/`callFn` returned a stream, but check\(\) is synchronous.*use acheck\(\)/);
    void closed;
  });
});

describe('in a workflow: the machine spawns its callModel actor', () => {
  it('a model that streams is read as it arrives: AMBIGUOUS at once, the stream ended, on the machine a parent embeds', async () => {
    const { createActor, toPromise } = await import('xstate');
    const { checkpointMachine } = await import('../../machines/index.js');
    const model = streamingModel([AMBIGUOUS_REPLY]);
    const output = await toPromise(createActor(checkpointMachine, { input: { prompt: 'Where is Paris?', model: model.callFn } }).start());
    expect(output.status).toBe('AMBIGUOUS');
    expect(output.interpretations).toEqual(['Paris, France', 'Paris, Texas']);
    expect(output.trace.map((step) => step.state)).toEqual(['calling', 'ambiguityGate', 'ambiguous']);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(model.calls[0]!.aborted).toBe(true);
    expect(model.calls[0]!.closed).toBe(true);
    expect(model.calls[0]!.sent).toBeLessThan(AMBIGUOUS_REPLY.indexOf('"answer"') + 4);
  });

  it('a clear streamed reply is the actor\'s output whole, decided as text is', async () => {
    const { createActor, toPromise } = await import('xstate');
    const { checkpointMachine } = await import('../../machines/index.js');
    const output = await toPromise(createActor(checkpointMachine, { input: { prompt: 'q', model: streamingModel([ENVELOPE('Paris', 0.9)]).callFn } }).start());
    expect(output.status).toBe('VERIFIED');
    expect(output.answer).toBe('Paris');
  });
});

describe('the early rule for schema members: a plain `type` of the answer or of its properties, judged once the member is complete', () => {
  const streamed = (text: string) => streamingModel([text, ENVELOPE({ city: 'Paris', population: 2, code: null }, 0.9)], 7);
  const reply = (answer: string) => `{"ambiguous": false, "interpretations": [], "answer": ${answer}, "confidence": 0.9}`;
  const run = async (schema: Parameters<typeof acheck>[2] extends infer O ? (O extends { schema?: infer S } ? S : never) : never, answer: string) => {
    const model = streamed(reply(answer));
    const result = await acheck(model.callFn, 'q', { schema, maxRetries: 1 });
    return { early: result.trace.some((step) => step.state === 'answerRefused'), result, model };
  };

  it('an integer is a number; a number with a fraction is no integer', async () => {
    expect((await run(z.object({ population: z.number() }), '{"population": 42}')).early).toBe(false);
    const fraction = await run(z.object({ population: z.number().int() }), '{"population": 4.5}');
    expect(fraction.early).toBe(true);
    expect(fraction.result.attempts[0]!.schemaIssues![0]).toMatchObject({ path: 'answer.population', message: expect.stringMatching(/int/i) });
  });

  it('a nullable member takes null; a union without a plain type is never judged early, only by the schema once the reply is whole', async () => {
    expect((await run(z.object({ code: z.string().nullable() }), '{"code": null}')).early).toBe(false);
    const union = await run(z.object({ code: z.union([z.string(), z.object({ iso: z.string() })]) }), '{"code": 42}');
    expect(union.early).toBe(false);
    expect(union.result.attempts[0]!.passedValidation).toBe(false);
    expect(union.model.calls[0]!.aborted).toBe(false);
  });

  it('the answer itself of the wrong type fails once it is complete', async () => {
    const whole = await run(z.object({ city: z.string() }), '"Paris"');
    expect(whole.early).toBe(true);
    expect(whole.result.attempts[0]!.schemaIssues).toEqual([{ path: 'answer', message: expect.stringMatching(/expected object, received string/) }]);
  });

  it('the schema itself confirms a flagged member: a coercing or catching member that takes the value is not failed early', async () => {
    const coerced = await run(z.object({ count: z.coerce.number() }), '{"count": "5"}');
    expect(coerced.early).toBe(false);
    expect(coerced.model.calls[0]!.aborted).toBe(false);
    expect(coerced.result.status).toBe('VERIFIED');
    expect(coerced.result.answer).toEqual({ count: 5 });
    const caught = await run(z.object({ city: z.string().catch('unknown') }), '{"city": 42}');
    expect(caught.early).toBe(false);
    expect(caught.result.answer).toEqual({ city: 'unknown' });
  });

  it('an asynchronous schema is never asked mid-stream: the whole reply is awaited, then judged', async () => {
    // A Standard Schema that says its type, and answers only asynchronously.
    const schema = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: async (value: unknown) =>
          typeof (value as { city?: unknown }).city === 'string' ? { value } : { issues: [{ message: 'city must be text', path: ['city'] }] },
        jsonSchema: { input: () => ({ type: 'object', properties: { city: { type: 'string' } } }), output: () => ({}) },
      },
    } as const;
    const { early, result, model } = await run(schema as never, '{"city": 42}');
    expect(early).toBe(false);
    expect(model.calls[0]!.aborted).toBe(false);
    expect(result.attempts[0]!.schemaIssues).toEqual([{ path: 'answer.city', message: 'city must be text' }]);
  });

  it('an ambiguous reply\'s answer is never judged: its readings decide', async () => {
    const model = streamingModel([`{"ambiguous": true, "interpretations": ["a", "b"], "answer": 42, "confidence": 0.9}`]);
    const result = await acheck(model.callFn, 'q', { schema: z.object({ city: z.string() }) });
    expect(result.status).toBe('AMBIGUOUS');
    expect(result.trace.map((step) => step.state)).not.toContain('answerRefused');
  });

  it('without a schema nothing is judged early', async () => {
    const model = streamingModel([reply('{"city": 42}'), ENVELOPE('Paris', 0.9)]);
    const result = await acheck(model.callFn, 'q', { maxRetries: 1 });
    expect(result.trace.map((step) => step.state)).not.toContain('answerRefused');
  });
});

describe('streams and budgets', () => {
  it('a stream ended early reported no usage: under a token budget the run cannot wait for a clarification it could not count, and ends AMBIGUOUS', async () => {
    const store = memoryStore();
    const model = streamingModel([AMBIGUOUS_REPLY]);
    const result = await acheck(model.callFn, 'Where is Paris?', { checkpoint: store, key: 'k', awaitClarification: true, budget: { maxTokens: 10_000 } });
    expect(result.status).toBe('AMBIGUOUS');
    expect(result.trace.at(-1)!.state).toBe('ambiguous');
    expect(store.size).toBe(0);
  });

  it('a stream that reports its usage before it ends is counted as any call', async () => {
    const text = ENVELOPE('Paris', 0.9);
    const result = await acheck(
      (_prompt, info) =>
        (async function* () {
          yield text.slice(0, 20);
          info.reportUsage?.({ inputTokens: 30, outputTokens: 12 });
          yield text.slice(20);
        })(),
      'q',
      { budget: { maxTokens: 10_000 } },
    );
    expect(result.status).toBe('VERIFIED');
    expect(result.usage).toMatchObject({ inputTokens: 30, outputTokens: 12, totalTokens: 42 });
  });
});
