import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { acheck, type PartialReply, streamCheck } from '../../src/index.js';
import type { CallInfo } from '../../src/decide/model-call.js';

/**
 * What docs/streaming.md says beyond tests/api/streaming.test.ts: samples replace per lane,
 * the spans of a streamed run, a reply that does not open with an object, and how a token
 * budget meets an attempt ended early.
 */

const ENVELOPE = (answer: unknown, confidence: number, more: { ambiguous?: boolean; interpretations?: string[] } = {}) =>
  JSON.stringify({ ambiguous: more.ambiguous ?? false, interpretations: more.interpretations ?? [], chosen_interpretation: null, answer, confidence });

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

/** `text` in chunks of `size`, a tick apart; the usage reported only if the stream is read to its end, as the adapters do. */
function streamOf(text: string, info: CallInfo, size = 4) {
  return (async function* () {
    for (let at = 0; at < text.length; at += size) {
      await tick();
      yield text.slice(at, at + size);
    }
    info.reportUsage?.({ inputTokens: 10, outputTokens: 10 });
  })();
}

describe('docs/streaming.md', () => {
  it('with samples, sample k of the retry replaces sample k of the attempt before, each lane on its own', async () => {
    const partials: PartialReply[] = [];
    let attempt0 = 0;
    const result = await acheck(
      (_prompt, info) => {
        // Attempt 0's samples split; attempt 1's agree.
        const answer = info.attempt === 0 ? `Paris ${attempt0++}` : 'Paris';
        return streamOf(ENVELOPE(answer, 0.9), info);
      },
      'Capital of France?',
      { samples: 2, maxRetries: 1, onPartial: (partial) => partials.push(partial) },
    );
    expect(result.status).toBe('REPAIRED');
    for (const sample of [0, 1]) {
      const lane = partials.filter((partial) => partial.sample === sample);
      expect(lane.filter((partial) => partial.replaces).map((partial) => partial.attempt)).toEqual([1]);
      expect(lane.findIndex((partial) => partial.replaces)).toBe(lane.findIndex((partial) => partial.attempt === 1));
    }
  });

  it('a reply that does not open with an object shows no answer so far, and is decided whole at its end', async () => {
    const partials: PartialReply[] = [];
    const text = `Here you are: ${ENVELOPE('Paris', 0.9)}`;
    const result = await acheck((_prompt, info) => streamOf(text, info), 'Capital of France?', { onPartial: (partial) => partials.push(partial) });
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.every((partial) => partial.answerSoFar === null && partial.ambiguous === null)).toBe(true);
    expect(partials.at(-1)?.textSoFar).toBe(text);
    expect(result.status).toBe(
      (await acheck(async () => text, 'Capital of France?')).status,
    );
  });

  it('judged early: only plain types of the answer\'s own members; an integer is a number, a union (anyOf), a deeper member and the rest wait for the whole reply', async () => {
    const schema = z.object({ n: z.number(), u: z.union([z.string(), z.object({ a: z.string() })]), deep: z.object({ x: z.string() }) });
    const text = ENVELOPE({ n: 3, u: true, deep: { x: 5 }, tail: 'x'.repeat(200) }, 0.9);
    let ended = false;
    const result = await acheck(
      (_prompt, info) =>
        (async function* () {
          yield* streamOf(text, info);
          ended = true;
        })(),
      'q',
      { schema, maxRetries: 0 },
    );
    // Read whole: the schema refused it at the end, as it would the same text unstreamed.
    expect(ended).toBe(true);
    expect(result.status).toBe('UNCERTAIN');
    const issues = result.attempts[0]?.schemaIssues ?? [];
    expect(issues.map((issue) => issue.path).sort()).toEqual(['answer.deep.x', 'answer.u']);
      });

  it("an enum's member is judged by its type only: a value of the right type the enum refuses waits for the whole reply", async () => {
    const schema = z.object({ kind: z.enum(['train', 'bus']) });
    const text = ENVELOPE({ kind: 'boat', tail: 'x'.repeat(200) }, 0.9);
    let ended = false;
    const result = await acheck(
      (_prompt, info) =>
        (async function* () {
          yield* streamOf(text, info);
          ended = true;
        })(),
      'q',
      { schema, maxRetries: 0 },
    );
    expect(ended).toBe(true);
    expect(result.attempts[0]?.schemaIssues?.map((issue) => issue.path)).toEqual(['answer.kind']);
  });

  it('an answer that is itself of the wrong type fails the attempt once complete', async () => {
    const schema = z.object({ city: z.string() });
    const text = `${ENVELOPE('Paris', 0.9).slice(0, -1)}, "note": "${'x'.repeat(300)}"}`;
    let ended = false;
    const result = await acheck(
      (_prompt, info) =>
        (async function* () {
          yield* streamOf(text, info);
          ended = true;
        })(),
      'q',
      { schema, maxRetries: 0 },
    );
    expect(ended).toBe(false);
    expect(result.attempts[0]?.schemaIssues).toEqual([{ path: 'answer', message: expect.stringMatching(/expected object, received string/) }]);
    expect(result.attempts[0]?.rawText.length).toBeLessThan(text.length / 2);
  });

  it('streamCheck() calls your onPartial too; breaking out of its loop stops the partials, not the check', async () => {
    const told: PartialReply[] = [];
    const run = streamCheck((_prompt, info) => streamOf(ENVELOPE('Paris', 0.9), info), 'q', { onPartial: (partial) => told.push(partial) });
    let seen = 0;
    for await (const _ of run) {
      void _;
      seen += 1;
      break;
    }
    expect(seen).toBe(1);
    const result = await run.result;
    expect(result.status).toBe('VERIFIED');
    expect(told.length).toBeGreaterThan(1);
    expect(told.at(-1)?.answerSoFar).toBe('Paris');
  });

  // What the core does today, as the doc says it; when it changes, the doc's "Usage and budgets" changes with it.
  it('a token budget: an attempt ended early by a member of the wrong type reported no usage, so the run stops there; a call budget retries', async () => {
    const wrong = ENVELOPE({ city: 42, country: 'France '.repeat(30) }, 0.9);
    const right = ENVELOPE({ city: 'Paris', country: 'France' }, 0.9);
    const schema = z.object({ city: z.string(), country: z.string() });
    const model = () => {
      let calls = 0;
      return (_prompt: string, info: CallInfo) => streamOf(calls++ === 0 ? wrong : right, info);
    };
    const tokens = await acheck(model(), 'Where is Paris?', { schema, budget: { maxTokens: 100_000 } });
    expect(tokens.status).toBe('UNCERTAIN');
    expect(tokens.method).toBe('budget');
    expect(tokens.detail).toMatch(/usage is unknown/);
    expect(tokens.attempts.map((attempt) => attempt.usage)).toEqual([null]);
    const calls = await acheck(model(), 'Where is Paris?', { schema, budget: { maxCalls: 5 } });
    expect(calls.status).toBe('REPAIRED');
    expect(calls.attempts[0]?.usage).toBeNull();
  });
});

describe('the spans of a streamed run', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('streaming-docs-test');
  afterAll(() => provider.shutdown());

  it('an attempt span counts its chunks and the time to the first; an early end is an event; the check span has the time to the verdict', async () => {
    exporter.reset();
    const ambiguous = ENVELOPE('A long answer nobody needs. '.repeat(20), 0.9, { ambiguous: true, interpretations: ['Paris, France', 'Paris, Texas'] });
    const result = await acheck((_prompt, info) => streamOf(ambiguous, info), 'Where is Paris?', { telemetry: { tracer } });
    expect(result.status).toBe('AMBIGUOUS');
    const spans = exporter.getFinishedSpans();
    const attempt = spans.find((span) => span.name === 'booth.attempt');
    const check = spans.find((span) => span.name === 'booth.check');
    const chunks = attempt?.attributes['booth.stream.chunks'] as number;
    expect(chunks).toBeGreaterThan(0);
    expect(chunks).toBeLessThan(ambiguous.length / 4 / 2);
    expect(attempt?.attributes['booth.stream.first_chunk_ms']).toBeTypeOf('number');
    expect(attempt?.events.map((event) => event.name)).toContain('booth.stream.ended_early');
    expect(check?.attributes['booth.stream.verdict_ms']).toBeTypeOf('number');
  });
});
