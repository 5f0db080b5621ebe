import * as openTelemetry from '@opentelemetry/api';
import { context, DiagLogLevel, diag, SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { createRequire } from 'node:module';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { acheck, type CallInfo, check, checkWithEvidence, clarify, memoryStore, type TelemetryApi } from '../../src/index.js';
import { forceEngine } from '../../src/engine/engines.js';
import { envelope } from '../fixtures/helpers.js';

/**
 * The spans a check leaves, read back from OpenTelemetry's own in-memory exporter, with a
 * real provider registered globally (AsyncLocalStorage context, as a Node service has).
 */
const exporter = new InMemorySpanExporter();
/** Spans started and not ended: a check must leave none open, whatever happened. */
const open = new Set<string>();
const tracking: SpanProcessor = {
  onStart: (span) => void open.add(span.spanContext().spanId),
  onEnd: (span) => void open.delete(span.spanContext().spanId),
  forceFlush: async () => {},
  shutdown: async () => {},
};
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), tracking] });
provider.register();
afterAll(() => provider.shutdown());
beforeEach(() => {
  exporter.reset();
  open.clear();
});

interface Node {
  readonly name: string;
  readonly attributes: ReadableSpan['attributes'];
  readonly states: readonly string[];
  readonly status: SpanStatusCode;
  readonly children: readonly Node[];
}

/** Spans started in the same instant (a sample's siblings) keep their index order. */
const indexOf = (span: ReadableSpan) => Number(span.attributes['booth.sample.index'] ?? span.attributes['booth.attempt.index'] ?? 0);

/** The finished spans as a tree, children in start order. */
function tree(spans: readonly ReadableSpan[] = exporter.getFinishedSpans()): Node[] {
  const byParent = (parent: string | undefined) =>
    spans
      .filter((span) => span.parentSpanContext?.spanId === parent)
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1] || indexOf(a) - indexOf(b));
  const build = (span: ReadableSpan): Node => ({
    name: span.name,
    attributes: span.attributes,
    states: span.events.filter((event) => event.name === 'booth.state').map((event) => String(event.attributes?.['booth.state'])),
    status: span.status.code,
    children: byParent(span.spanContext().spanId).map(build),
  });
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  return spans.filter((span) => !ids.has(span.parentSpanContext?.spanId ?? '')).map(build);
}

/** The one `booth.check` span's tree. */
function checkSpan(): Node {
  const roots = tree().filter((node) => node.name === 'booth.check');
  expect(roots).toHaveLength(1);
  return roots[0]!;
}

const PARIS = envelope('Paris', 0.9);

describe('telemetry: one booth.check span per check, one booth.attempt per attempt', () => {
  it('verified: the check and its attempt, each state entered an event on the attempt', () => {
    check(() => PARIS, 'Capital of France?', { telemetry: true });
    const root = checkSpan();
    expect(root.attributes).toMatchObject({
      'booth.entry': 'check',
      'booth.status': 'VERIFIED',
      'booth.method': 'confidence',
      'booth.attempts': 1,
      'booth.threshold': 0.7,
      'booth.max_retries': 1,
    });
    expect(root.status).toBe(SpanStatusCode.UNSET);
    expect(root.children.map((child) => child.name)).toEqual(['booth.attempt']);
    const [attempt] = root.children;
    expect(attempt?.states).toEqual(['calling', 'parsing', 'ambiguityGate', 'confidenceGate', 'verified']);
    expect(attempt?.attributes).toMatchObject({
      'booth.attempt.index': 0,
      'booth.attempt.parse_ok': true,
      'booth.attempt.confidence': 0.9,
      'gen_ai.operation.name': 'chat',
    });
    expect(attempt?.attributes).not.toHaveProperty('booth.attempt.retry_kind');
    expect(open.size).toBe(0);
  });

  it('repaired: two attempt spans, the second with its retry kind', () => {
    let call = 0;
    check(() => (call++ === 0 ? envelope('Lyon', 0.2) : PARIS), 'q', { telemetry: true });
    const root = checkSpan();
    expect(root.attributes).toMatchObject({ 'booth.status': 'REPAIRED', 'booth.attempts': 2 });
    expect(root.children.map((child) => [child.attributes['booth.attempt.index'], child.attributes['booth.attempt.retry_kind']])).toEqual([
      [0, undefined],
      [1, 'confidence'],
    ]);
    expect(root.children[0]?.states.at(-1)).toBe('reconsidering');
    expect(root.children[1]?.states).toEqual(['calling', 'parsing', 'ambiguityGate', 'confidenceGate', 'repaired']);
  });

  it('ambiguous and uncertain results are outcomes, not span errors', () => {
    check(() => envelope('', 0.8, { ambiguous: true, interpretations: ['a', 'b'] }), 'q', { telemetry: true });
    check(() => {
      throw new Error('connection reset');
    }, 'q', { telemetry: true, maxRetries: 1 });
    const [ambiguous, uncertain] = tree();
    expect(ambiguous?.attributes['booth.status']).toBe('AMBIGUOUS');
    expect(uncertain?.attributes).toMatchObject({ 'booth.status': 'UNCERTAIN', 'booth.method': 'call_failure' });
    for (const node of [ambiguous!, uncertain!, ...uncertain!.children]) expect(node.status).toBe(SpanStatusCode.UNSET);
    // A failed call's message is the thrower's text, which may quote the reply: without recordReplies only its name.
    expect(uncertain?.children.map((child) => child.attributes['booth.attempt.error'])).toEqual([
      'Error (its message may quote the reply or the prompt: recorded only with telemetry.recordReplies)',
      'Error (its message may quote the reply or the prompt: recorded only with telemetry.recordReplies)',
    ]);
    expect(uncertain?.children[1]?.attributes['booth.attempt.retry_kind']).toBe('repeat');
  });

  it('with recordReplies a failed call\'s span carries its message', () => {
    check(() => {
      throw new Error('connection reset');
    }, 'q', { telemetry: { recordReplies: true }, maxRetries: 0 });
    expect(checkSpan().children.map((child) => child.attributes['booth.attempt.error'])).toEqual(['connection reset']);
  });

  it('call retries: the waits are states on the attempt, every try counted', async () => {
    let call = 0;
    await acheck(
      async () => {
        if (call++ < 2) throw Object.assign(new Error('overloaded'), { status: 503 });
        return PARIS;
      },
      'q',
      { telemetry: true, callRetries: { retries: 2, minDelayMs: 1 } },
    );
    const [attempt] = checkSpan().children;
    expect(attempt?.states).toEqual(['calling', 'backingOff', 'calling', 'backingOff', 'calling', 'parsing', 'ambiguityGate', 'confidenceGate', 'verified']);
    expect(attempt?.attributes['booth.attempt.call_tries']).toBe(3);
  });

  it('samples: a booth.sample span per sample under its attempt, each with its own usage', async () => {
    await acheck(
      async (_p, info) => {
        info.reportUsage?.({ inputTokens: 10 * (info.sample! + 1), outputTokens: 1 });
        return info.sample === 2 ? envelope('Lyon', 0.9) : PARIS;
      },
      'q',
      { telemetry: true, samples: 3, threshold: 0.5 },
    );
    const [attempt] = checkSpan().children;
    expect(attempt?.states).toEqual(['sampling', 'agreementGate', 'ambiguityGate', 'confidenceGate', 'verified']);
    expect(attempt?.children.map((child) => [child.name, child.attributes['booth.sample.index'], child.attributes['gen_ai.usage.input_tokens']])).toEqual([
      ['booth.sample', 0, 10],
      ['booth.sample', 1, 20],
      ['booth.sample', 2, 30],
    ]);
    expect(attempt?.attributes['gen_ai.usage.input_tokens']).toBe(60);
    expect(open.size).toBe(0);
  });

  it('check() draws its samples one after another: each sample span opens when its call starts and ends when its sample is done', () => {
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    check(() => (busy(10), PARIS), 'q', { telemetry: true, samples: 3 });
    const ms = (time: readonly [number, number]) => time[0] * 1e3 + time[1] / 1e6;
    const samples = exporter
      .getFinishedSpans()
      .filter((span) => span.name === 'booth.sample')
      .sort((a, b) => indexOf(a) - indexOf(b))
      .map((span) => ({ start: ms(span.startTime), end: ms(span.endTime) }));
    expect(samples).toHaveLength(3);
    for (const [i, sample] of samples.entries()) {
      expect(sample.end - sample.start).toBeGreaterThanOrEqual(9);
      // Start times are kept to the millisecond: a start may read up to 1 ms early.
      if (i > 0) expect(sample.start).toBeGreaterThanOrEqual(samples[i - 1]!.end - 1);
    }
  });

  it('each sample span says how its reply went: parsed or not, its confidence or its error, its call tries', async () => {
    await acheck(async (_p, info) => (info.sample === 1 ? 'not json' : PARIS), 'q', { telemetry: true, samples: 2, threshold: 0.5 });
    const [attempt] = checkSpan().children;
    expect(attempt?.children.map((child) => child.attributes)).toEqual([
      { 'gen_ai.operation.name': 'chat', 'booth.sample.index': 0, 'booth.parse_ok': true, 'booth.call_tries': 1, 'booth.confidence': 0.9 },
      { 'gen_ai.operation.name': 'chat', 'booth.sample.index': 1, 'booth.parse_ok': false, 'booth.call_tries': 1, 'booth.error': expect.any(String) as unknown },
    ]);
  });

  it('a sample\'s reports add up on its span; a call given up on that reports later counts on no sample span of the attempt running then', async () => {
    let late: CallInfo['reportUsage'];
    const result = await acheck(
      async (_p, info) => {
        if (info.attempt === 0) {
          if (info.sample === 0) late = info.reportUsage;
          return new Promise<string>(() => {}); // times out
        }
        if (info.sample === 0) {
          late?.({ inputTokens: 1_000, outputTokens: 0 });
          info.reportUsage?.({ inputTokens: 1, outputTokens: 1 });
          info.reportUsage?.({ inputTokens: 2, outputTokens: 1 });
        } else {
          info.reportUsage?.({ inputTokens: 5, outputTokens: 1 });
        }
        return PARIS;
      },
      'q',
      { telemetry: true, samples: 2, timeoutMs: 30 },
    );
    expect(result.attempts).toHaveLength(2);
    const retry = checkSpan().children[1];
    expect(retry?.children.map((sample) => [sample.attributes['gen_ai.usage.input_tokens'], sample.attributes['gen_ai.usage.output_tokens']])).toEqual([
      [3, 2],
      [5, 1],
    ]);
    expect(retry?.attributes['gen_ai.usage.input_tokens']).toBe(8);
  });

  it('usage: the GenAI token counts on each attempt and their sum on the check', () => {
    let call = 0;
    check(
      (_p, info) => {
        info.reportUsage?.({ inputTokens: 100, outputTokens: 7, costUsd: 0.001 });
        return call++ === 0 ? 'not json' : PARIS;
      },
      'q',
      { telemetry: true },
    );
    const root = checkSpan();
    expect(root.children.map((child) => child.attributes['gen_ai.usage.output_tokens'])).toEqual([7, 7]);
    expect(root.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 200,
      'gen_ai.usage.output_tokens': 14,
      'booth.usage.total_tokens': 214,
      'booth.usage.cost_usd': 0.002,
    });
  });
});

describe('telemetry: one machine, two engines', () => {
  /** A span tree without its clock readings. */
  const shape = (nodes: readonly Node[]): unknown[] =>
    nodes.map(({ name, attributes, states, status, children }) => {
      const { 'booth.attempt.duration_ms': _ms, ...rest } = attributes;
      return { name, attributes: rest, states, status, children: shape(children) };
    });
  const run = async (engine: 'stepper' | 'actor') => {
    exporter.reset();
    forceEngine(engine);
    try {
      let call = 0;
      await acheck(
        async (_p, info) => {
          info.reportUsage?.({ inputTokens: 5, outputTokens: 1 });
          call += 1;
          if (call === 1) throw Object.assign(new Error('overloaded'), { status: 503 });
          return call <= 3 ? 'not json' : info.sample === 1 ? envelope('Lyon', 0.9) : PARIS;
        },
        'q',
        { telemetry: true, samples: 2, maxRetries: 2, threshold: 0.4, callRetries: { retries: 1, minDelayMs: 1 } },
      );
      return shape(tree());
    } finally {
      forceEngine(null);
    }
  };

  it('the compiled stepper and XState\'s actor leave the same spans', async () => {
    const stepper = await run('stepper');
    expect(JSON.stringify(stepper)).toContain('booth.sample');
    expect(await run('actor')).toEqual(stepper);
  });
});

describe('telemetry: the model call runs inside its span', () => {
  /** A stand-in for a provider SDK's own instrumentation: it starts a span in the active context. */
  const instrumented = (reply: string) => (_prompt: string, info: CallInfo) =>
    trace.getTracer('provider-sdk').startActiveSpan(`provider.call ${info.sample ?? '-'}`, (span) => {
      span.end();
      return reply;
    });

  it('check(): the provider span is a child of the attempt span', () => {
    check(instrumented(PARIS), 'q', { telemetry: true });
    const [attempt] = checkSpan().children;
    expect(attempt?.children.map((child) => child.name)).toEqual(['provider.call -']);
  });

  it('acheck(): across awaits too, and under each sample\'s span when sampling', async () => {
    const provide = instrumented(PARIS);
    await acheck(
      async (prompt, info) => {
        await new Promise((resolve) => setTimeout(resolve, 2));
        return provide(prompt, info);
      },
      'q',
      { telemetry: true, samples: 2 },
    );
    const [attempt] = checkSpan().children;
    expect(attempt?.children.map((sample) => sample.children.map((child) => child.name))).toEqual([['provider.call 0'], ['provider.call 1']]);
  });

  it('the check nests under the caller\'s active span', () => {
    const tracer = trace.getTracer('app');
    tracer.startActiveSpan('http.request', (span) => {
      check(() => PARIS, 'q', { telemetry: true });
      span.end();
    });
    const [request] = tree();
    expect(request?.name).toBe('http.request');
    expect(request?.children.map((child) => child.name)).toEqual(['booth.check']);
  });
});

describe('telemetry: errors end every span in error', () => {
  /** An acheck whose caller aborts 5 ms into its calls, which honour the signal. */
  const abortedWhileCalling = (options: { samples?: number; telemetry?: object }) => {
    const controller = new AbortController();
    return acheck(
      (_p, { signal }) =>
        new Promise<string>((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason));
          setTimeout(() => controller.abort(new Error('user left')), 5);
        }),
      'q',
      { telemetry: true, ...options, signal: controller.signal },
    );
  };

  it('an aborted acheck: the check span is an error with the exception recorded, and no span stays open', async () => {
    await expect(abortedWhileCalling({})).rejects.toThrow('user left');
    const root = checkSpan();
    expect(root.status).toBe(SpanStatusCode.ERROR);
    const spans = exporter.getFinishedSpans();
    const checkEvents = spans.find((span) => span.name === 'booth.check')?.events.map((event) => event.name);
    expect(checkEvents).toContain('exception');
    expect(root.children.map((child) => child.status)).toEqual([SpanStatusCode.ERROR]);
    expect(open.size).toBe(0);
  });

  it('an error ends the attempt and sample spans still open in error, with the message that the check ended with an error', async () => {
    await expect(abortedWhileCalling({ samples: 2 })).rejects.toThrow('user left');
    const statuses = exporter
      .getFinishedSpans()
      .filter((span) => span.name !== 'booth.check')
      .map((span) => [span.name, span.status]);
    expect(statuses.sort()).toEqual([
      ['booth.attempt', { code: SpanStatusCode.ERROR, message: 'the check ended with an error' }],
      ['booth.sample', { code: SpanStatusCode.ERROR, message: 'the check ended with an error' }],
      ['booth.sample', { code: SpanStatusCode.ERROR, message: 'the check ended with an error' }],
    ]);
    // The abort's reason is the caller's: without recording prompts and replies the span names it, never quotes it.
    expect(exporter.getFinishedSpans().find((span) => span.name === 'booth.check')?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'Error (message not recorded: an error Booth did not write may quote a prompt or a reply; telemetry records it with recordPrompts and recordReplies on)',
    });
    expect(open.size).toBe(0);
  });

  it('recording prompts and replies, the check span carries the error\'s own message', async () => {
    await expect(abortedWhileCalling({ telemetry: { recordPrompts: true, recordReplies: true } })).rejects.toThrow('user left');
    expect(exporter.getFinishedSpans().find((span) => span.name === 'booth.check')?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'user left' });
  });

  it('onAttempt throwing: the attempt it reported keeps its span, and no span opens for an attempt never begun', () => {
    let call = 0;
    expect(() =>
      check(() => (call++ === 0 ? envelope('Lyon', 0.2) : PARIS), 'q', {
        telemetry: true,
        onAttempt: () => {
          throw new Error('hook bug');
        },
      }),
    ).toThrow('hook bug');
    const root = checkSpan();
    expect(root.status).toBe(SpanStatusCode.ERROR);
    expect(root.children.map((child) => [child.attributes['booth.attempt.index'], child.status])).toEqual([[0, SpanStatusCode.UNSET]]);
    expect(call).toBe(1);
    expect(open.size).toBe(0);
  });

  it('a tracer or span that throws never changes the check: its telemetry stops, and OpenTelemetry\'s diagnostic log says why', () => {
    const logged: unknown[] = [];
    diag.setLogger({ error: (...args: unknown[]) => void logged.push(args), warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR);
    try {
      const throwing = { startSpan: () => {
        throw new Error('tracer bug');
      } };
      expect(check(() => PARIS, 'q', { telemetry: { tracer: throwing } }).status).toBe('VERIFIED');
      const real = provider.getTracer('flaky');
      const flaky = {
        startSpan: (...args: Parameters<typeof real.startSpan>) => {
          const span = real.startSpan(...args);
          span.addEvent = () => {
            throw new Error('span bug');
          };
          return span;
        },
      };
      let calls = 0;
      const result = check(() => (calls++ === 0 ? envelope('Lyon', 0.2) : PARIS), 'q', { telemetry: { tracer: flaky } });
      expect([result.status, calls]).toEqual(['REPAIRED', 2]);
      // The spans it had opened were ended as they were: an exporter waits for none of them.
      expect(open.size).toBe(0);
      expect(logged).toHaveLength(2);
      // With a wrong option, the caller gets the RangeError, not the tracer's error.
      expect(() => check(() => PARIS, 'q', { telemetry: { tracer: throwing }, threshold: 5 })).toThrow(RangeError);
      expect(logged).toHaveLength(3);
      expect(String(logged[0])).toContain('this check records no more telemetry');
    } finally {
      diag.disable();
    }
  });

  it('once telemetry has stopped, the model call runs in the caller\'s context, not inside a Booth span left open', () => {
    const real = provider.getTracer('flaky');
    const flaky = {
      startSpan: (...args: Parameters<typeof real.startSpan>) => {
        const span = real.startSpan(...args);
        span.addEvent = () => {
          throw new Error('span bug');
        };
        return span;
      },
    };
    diag.setLogger({ error: () => {}, warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR);
    try {
      const provide = (_p: string, info: CallInfo) =>
        trace.getTracer('provider-sdk').startActiveSpan(`provider.call ${info.attempt}`, (span) => {
          span.end();
          return PARIS;
        });
      expect(check(provide, 'q', { telemetry: { tracer: flaky } }).status).toBe('VERIFIED');
    } finally {
      diag.disable();
    }
    const [call] = exporter.getFinishedSpans().filter((span) => span.name === 'provider.call 0');
    expect(call?.parentSpanContext).toBeUndefined();
  });

  it('a wrong argument: its booth.check span carries the entry, the functionId and the caller\'s attributes', () => {
    expect(() => check(() => PARIS, 'q', { telemetry: { functionId: 'triage', attributes: { team: 'ops' } }, threshold: 5 })).toThrow(RangeError);
    expect(checkSpan().attributes).toEqual({ team: 'ops', 'booth.function_id': 'triage', 'booth.entry': 'check' });
  });

  it('a wrong argument: a booth.check span in error, then the TypeError or RangeError as always', () => {
    expect(() => check(() => PARIS, 'q', { telemetry: true, threshold: 5 })).toThrow(RangeError);
    const root = checkSpan();
    expect(root.status).toBe(SpanStatusCode.ERROR);
    expect(root.children).toEqual([]);
    exporter.reset();
    // Found while running: check() was given a callFn that returned a Promise.
    expect(() => check((() => Promise.resolve(PARIS)) as never, 'q', { telemetry: true })).toThrow(TypeError);
    expect(checkSpan().status).toBe(SpanStatusCode.ERROR);
    expect(open.size).toBe(0);
  });
});

describe('telemetry: what is recorded, and when', () => {
  const QUESTION = 'What is the patient\'s diagnosis, given record 12345?';
  const REPLY = envelope('Confidential diagnosis', 0.9);
  const recorded = () => exporter.getFinishedSpans().flatMap((span) => [...Object.values(span.attributes), ...span.events.flatMap((e) => Object.values(e.attributes ?? {}))]);

  it('by default no prompt and no reply text reaches a span', () => {
    check(() => REPLY, QUESTION, { telemetry: true });
    const text = JSON.stringify(recorded());
    expect(text).not.toContain('12345');
    expect(text).not.toContain('Confidential');
  });

  it('a validator\'s message may quote the answer: it is recorded only with the replies', () => {
    const validator = () => [false, 'Confidential diagnosis is not allowed'] as const;
    check(() => REPLY, QUESTION, { telemetry: true, validator, maxRetries: 0 });
    expect(JSON.stringify(recorded())).not.toContain('Confidential');
    exporter.reset();
    check(() => REPLY, QUESTION, { telemetry: { recordReplies: true }, validator, maxRetries: 0 });
    expect(checkSpan().children[0]?.attributes['booth.attempt.validation_error']).toBe('Confidential diagnosis is not allowed');
  });

  it('recordPrompts and recordReplies put them on the spans', () => {
    check(() => REPLY, QUESTION, { telemetry: { recordPrompts: true, recordReplies: true } });
    const root = checkSpan();
    expect(root.attributes['booth.prompt']).toBe(QUESTION);
    expect(String(root.children[0]?.attributes['booth.attempt.prompt'])).toContain('12345');
    expect(root.children[0]?.attributes['booth.attempt.reply']).toBe(REPLY);
  });

  it('a sample\'s reply reaches its span only with recordReplies', async () => {
    await acheck(async () => REPLY, QUESTION, { telemetry: true, samples: 2 });
    expect(JSON.stringify(recorded())).not.toContain('Confidential');
    exporter.reset();
    await acheck(async () => REPLY, QUESTION, { telemetry: { recordReplies: true }, samples: 2 });
    expect(checkSpan().children[0]?.children.map((sample) => sample.attributes['booth.reply'])).toEqual([REPLY, REPLY]);
  });

  it('Booth gives spans OpenTelemetry attribute values only: what is not known is left out, never null', async () => {
    /** Every attribute Booth hands the tracer or a span, as given, before any SDK drops or keeps it. */
    const given: Array<[string, unknown]> = [];
    const real = provider.getTracer('raw');
    const note = (attributes: object | undefined) => {
      for (const entry of Object.entries(attributes ?? {})) given.push(entry);
    };
    const raw = {
      startSpan: (name: string, options?: Parameters<typeof real.startSpan>[1], parent?: Parameters<typeof real.startSpan>[2]) => {
        note(options?.attributes);
        const span = real.startSpan(name, options, parent);
        const { setAttribute, setAttributes } = span;
        span.setAttribute = (key, value) => (note({ [key]: value }), setAttribute.call(span, key, value));
        span.setAttributes = (attributes) => (note(attributes), setAttributes.call(span, attributes));
        return span;
      },
    };
    const telemetry = { tracer: raw, recordPrompts: true, recordReplies: true };
    let call = 0;
    check(
      (_p, info) => {
        info.reportUsage?.({ inputTokens: 1, outputTokens: 1 });
        return call++ === 0 ? 'not json' : PARIS;
      },
      'q',
      { telemetry },
    );
    await acheck(async (_p, info) => (info.sample === 1 ? 'not json' : PARIS), 'q', { telemetry, samples: 2, threshold: 0.5 });
    checkWithEvidence('Paris', ['Paris'], () => true, { telemetry });
    const keys = new Set(given.map(([key]) => key));
    for (const key of ['booth.attempt.confidence', 'booth.attempt.error', 'booth.confidence', 'booth.error', 'booth.usage.total_tokens', 'booth.evidence_agreement']) {
      expect(keys).toContain(key);
    }
    expect(given.filter(([, value]) => value === null)).toEqual([]);
  });

  it('functionId and attributes go on every Booth span; a given tracer is used instead of the global one', async () => {
    const own = new InMemorySpanExporter();
    const ownProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(own)] });
    await acheck(async () => PARIS, 'q', {
      samples: 2,
      telemetry: { tracer: ownProvider.getTracer('mine'), functionId: 'triage', attributes: { 'gen_ai.request.model': 'gpt-test' } },
    });
    expect(exporter.getFinishedSpans()).toEqual([]);
    const spans = own.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual(['booth.attempt', 'booth.check', 'booth.sample', 'booth.sample']);
    for (const span of spans) expect(span.attributes).toMatchObject({ 'booth.function_id': 'triage', 'gen_ai.request.model': 'gpt-test' });
  });

  it('off by default: a provider is registered, and a check without the option leaves no span', async () => {
    check(() => PARIS, 'q');
    await acheck(async () => PARIS, 'q', { telemetry: false });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('checkWithEvidence: one span, its method and verdict', () => {
    checkWithEvidence('Lyon', ['Paris'], () => false, { telemetry: true });
    expect(checkSpan()).toMatchObject({ attributes: { 'booth.entry': 'checkWithEvidence', 'booth.status': 'BLOCKED', 'booth.method': 'evidence', 'booth.evidence_agreement': 0 }, children: [] });
  });

  it('checkWithEvidence: its agreement is on its span; a check() span has none', () => {
    const result = checkWithEvidence('Paris', ['Paris', 'Lyon'], () => 0.8, { telemetry: true });
    expect(result.evidenceAgreement).toBe(0.8);
    expect(checkSpan().attributes['booth.evidence_agreement']).toBe(0.8);
    exporter.reset();
    check(() => PARIS, 'q', { telemetry: true });
    expect(checkSpan().attributes).not.toHaveProperty('booth.evidence_agreement');
  });

  it('a resumed run: the attempt under way gets its span at once, marked resumed', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const model = async (_p: string, info: CallInfo) => {
      if (info.attempt === 1 && !controller.signal.aborted) controller.abort(new Error('going down'));
      return info.attempt === 0 ? envelope('Lyon', 0.1) : PARIS;
    };
    const options = { checkpoint: store, key: 'k', telemetry: true };
    await expect(acheck(model, 'q', { ...options, signal: controller.signal })).rejects.toThrow('going down');
    exporter.reset();
    await acheck(model, 'q', options);
    const root = checkSpan();
    expect(root.attributes['booth.resumed_attempts']).toBe(1);
    expect(root.children.map((child) => [child.attributes['booth.attempt.index'], child.attributes['booth.attempt.resumed']])).toEqual([[1, true]]);
    expect(root.children[0]?.states).toEqual(['parsing', 'ambiguityGate', 'confidenceGate', 'repaired']);
  });

  it('a wrong telemetry option is a TypeError naming it, the value and what is expected', () => {
    expect(() => check(() => PARIS, 'q', { telemetry: 'yes' as never })).toThrow(
      'Expected `telemetry` to be true, false or { tracer?, recordPrompts?, recordReplies?, functionId?, attributes?, api? }, got "yes".',
    );
    expect(() => check(() => PARIS, 'q', { telemetry: { recordPrompt: true } as never })).toThrow(
      'Unknown key `recordPrompt` in `telemetry`; the keys are `tracer`, `recordPrompts`, `recordReplies`, `functionId`, `attributes`, `api`.',
    );
    expect(() => check(() => PARIS, 'q', { telemetry: new Map() as never })).toThrow('Expected `telemetry` to be true, false or {');
    expect(() => check(() => PARIS, 'q', { telemetry: { tracer: {} as never } })).toThrow('Expected `telemetry.tracer` to be an OpenTelemetry Tracer (with startSpan), got an object.');
    expect(() => check(() => PARIS, 'q', { telemetry: { attributes: { a: { b: 1 } } as never } })).toThrow(
      'Expected `telemetry.attributes.a` to be a string, number, boolean or an array of one of them',
    );
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('null turns telemetry off as false does; a null tracer, functionId or attributes counts as not given', () => {
    check(() => PARIS, 'q', { telemetry: null as never });
    expect(exporter.getFinishedSpans()).toEqual([]);
    check(() => PARIS, 'q', { telemetry: { tracer: null, functionId: null, attributes: null } });
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual(['booth.attempt', 'booth.check']);
    for (const span of spans) {
      expect(span.instrumentationScope.name).toBe('boothjs');
      expect(span.attributes).not.toHaveProperty('booth.function_id');
    }
  });

  it('a wrong flag, functionId or attributes is a TypeError naming it, the value and what is expected', () => {
    for (const [telemetry, message] of [
      [{ recordPrompts: 'yes' }, 'Expected `telemetry.recordPrompts` to be a boolean, got "yes".'],
      [{ recordReplies: 1 }, 'Expected `telemetry.recordReplies` to be a boolean, got 1.'],
      [{ recordPrompts: null }, 'Expected `telemetry.recordPrompts` to be a boolean, got null.'],
      [{ functionId: 7 }, 'Expected `telemetry.functionId` to be a string, got 7.'],
      [{ attributes: 'gen_ai.request.model=gpt' }, 'Expected `telemetry.attributes` to be an object of span attributes, got "gen_ai.request.model=gpt".'],
      [{ attributes: ['a'] }, 'Expected `telemetry.attributes` to be an object of span attributes, got an array.'],
      [{ attributes: { tags: ['a', 1] } }, 'Expected `telemetry.attributes.tags` to be a string, number, boolean or an array of one of them, got an array.'],
      [{ attributes: { tags: [{ a: 1 }] } }, 'Expected `telemetry.attributes.tags` to be a string, number, boolean or an array of one of them, got an array.'],
      [{ attributes: { tags: [null, 1n] } }, 'Expected `telemetry.attributes.tags` to be a string, number, boolean or an array of one of them, got an array.'],
      [{ attributes: { size: 1n } }, 'Expected `telemetry.attributes.size` to be a string, number, boolean or an array of one of them, got 1n.'],
    ] as const) {
      expect(() => check(() => PARIS, 'q', { telemetry: telemetry as never })).toThrow(new TypeError(message));
    }
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('attributes may be strings, numbers, booleans or arrays of one of them, with empty slots: every Booth span gets them as given', () => {
    const attributes = {
      model: 'gpt-test',
      temperature: 0.2,
      cached: false,
      region: undefined,
      tags: ['a', null, undefined, 'b'],
      sizes: [1, 2],
      flags: [true],
      none: [],
      holes: [null, undefined],
    };
    check(() => PARIS, 'q', { telemetry: { attributes } });
    const { region: _region, ...kept } = attributes;
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(2);
    for (const span of spans) expect(span.attributes).toMatchObject(kept);
  });

  it('the context the caller had is the context after the check', async () => {
    const before = context.active();
    await acheck(async () => PARIS, 'q', { telemetry: true });
    expect(context.active()).toBe(before);
  });
});

describe('telemetry without @opentelemetry/api', () => {
  /** Runs `work` with a fresh copy of the telemetry module (nothing loaded yet), while resolving `@opentelemetry/api` throws `problem`. */
  const without = async (problem: Error, work: (read: (value: unknown) => unknown) => void) => {
    const Module = createRequire(import.meta.url)('node:module') as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
    const resolve = Module._resolveFilename;
    Module._resolveFilename = (request, ...rest) => {
      if (request === '@opentelemetry/api') throw problem;
      return resolve(request, ...rest);
    };
    try {
      vi.resetModules();
      const { readTelemetry } = await import('../../src/telemetry/settings.js');
      work(readTelemetry);
    } finally {
      Module._resolveFilename = resolve;
    }
  };

  it('asking for telemetry says which package to install, whichever way Node says it is missing; not asking loads nothing', async () => {
    for (const code of ['MODULE_NOT_FOUND', 'ERR_MODULE_NOT_FOUND']) {
      await without(Object.assign(new Error("Cannot find module '@opentelemetry/api'"), { code }), (read) => {
        expect(read(false)).toBeNull();
        expect(() => read(true)).toThrow(
          new Error('`telemetry` needs the package @opentelemetry/api (1.9 or later), an optional peer dependency of boothjs: npm install @opentelemetry/api'),
        );
      });
    }
  });

  it('the module passed as telemetry.api is used as it is, with nothing loaded; anything else there is a TypeError', async () => {
    const api: TelemetryApi = openTelemetry;
    await without(new Error("Cannot find module '@opentelemetry/api'"), (read) => {
      expect(read({ api })).toMatchObject({ api: openTelemetry });
      // The default export has trace, context and diag, but not SpanStatusCode: failed checks would lose their error status.
      for (const wrong of [{}, { trace: openTelemetry.trace }, 'api', openTelemetry.default]) {
        expect(() => read({ api: wrong })).toThrow(TypeError);
        expect(() => read({ api: wrong })).toThrow(
          /^Expected `telemetry.api` to be the @opentelemetry\/api module as a namespace \(import \* as api from '@opentelemetry\/api', not its default export\), got /,
        );
      }
    });
  });

  it('a runtime that does not hand out its built-in modules (a browser, a Worker) is told to pass telemetry.api', async () => {
    const process = globalThis.process as { getBuiltinModule?: unknown };
    const getBuiltinModule = process.getBuiltinModule;
    process.getBuiltinModule = undefined;
    try {
      vi.resetModules();
      const { readTelemetry } = await import('../../src/telemetry/settings.js');
      expect(readTelemetry(false)).toBeNull();
      expect(() => readTelemetry(true)).toThrow(
        new Error(
          "`telemetry` cannot load @opentelemetry/api in this runtime (a browser, an edge runtime, a Worker, Node before 20.16): pass the module as `telemetry.api` (import * as api from '@opentelemetry/api').",
        ),
      );
      expect(readTelemetry({ api: openTelemetry })).toMatchObject({ api: openTelemetry });
    } finally {
      process.getBuiltinModule = getBuiltinModule;
    }
  });

  it('any other failure to load it is thrown as it is', async () => {
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    await without(denied, (read) => expect(() => read(true)).toThrow(denied));
  });
});

describe('telemetry of a run that waits for its clarification', () => {
  /** Each finished booth.check span's booth.clarification events, and everything on every span as text. */
  function seen() {
    const spans = exporter.getFinishedSpans();
    const checks = spans.filter((span) => span.name === 'booth.check');
    const events = checks.flatMap((span) => span.events.filter((event) => event.name === 'booth.clarification').map((event) => event.attributes));
    const text = JSON.stringify(spans.map((span) => ({ attributes: span.attributes, events: span.events.map((event) => event.attributes ?? {}), status: span.status })));
    return { checks, events, text };
  }
  const READING_0 = 'READING-MARK-0 the planet';
  const READING_1 = 'READING-MARK-1 the element';
  const REPHRASED = 'REPHRASED-MARK how dense is the element?';
  const ambiguous = envelope('4,879 km', 0.8, { ambiguous: true, interpretations: [READING_0, READING_1] });
  const replies = [ambiguous, envelope('13.5 g/cm³', 0.2), envelope('13.5 g/cm³', 0.9)];

  for (const engine of ['stepper', 'actor'] as const) {
    it(`${engine}: started, asked again, continued after a crash in round 2: booth.clarification once, in the call that took it, counts only`, async () => {
      forceEngine(engine);
      try {
        const store = memoryStore();
        const controller = new AbortController();
        const model = async (_p: string, { attempt }: CallInfo) => {
          if (attempt === 2 && !controller.signal.aborted) controller.abort(new Error('going down'));
          return replies[attempt] ?? '';
        };
        const options = { checkpoint: store, key: 'k', telemetry: true };

        await acheck(model, 'How big is mercury?', { ...options, awaitClarification: true });
        expect(checkSpan().attributes['booth.status']).toBe('AMBIGUOUS');
        expect(seen().events).toEqual([]);

        // Asked again while it waits: a resumed check with nothing to do, no attempt span, no clarification.
        exporter.reset();
        await acheck(model, 'How big is mercury?', { ...options, awaitClarification: true });
        const again = checkSpan();
        expect(again.attributes).toMatchObject({ 'booth.status': 'AMBIGUOUS', 'booth.resumed_attempts': 1 });
        expect(again.children).toEqual([]);
        expect(seen().events).toEqual([]);

        // The clarification is taken; round 2 dies in its second call.
        exporter.reset();
        await expect(acheck(model, 'How big is mercury?', { ...options, clarification: 1, signal: controller.signal })).rejects.toThrow('going down');
        const taken = seen();
        expect(taken.events).toEqual([{ 'booth.clarification.readings': 2, 'booth.clarification.kind': 'chose', 'booth.clarification.attempt': 1 }]);
        expect(taken.text).not.toContain('READING-MARK');

        // Run again with the same clarification: the run goes on; the clarification is not shown again.
        exporter.reset();
        const result = await acheck(model, 'How big is mercury?', { ...options, clarification: READING_1 });
        expect(result.status).toBe('REPAIRED');
        const root = checkSpan();
        expect(root.attributes).toMatchObject({ 'booth.status': 'REPAIRED', 'booth.resumed_attempts': 2, 'booth.attempts': 3 });
        expect(root.children.map((child) => [child.attributes['booth.attempt.index'], child.attributes['booth.attempt.resumed']])).toEqual([[2, true]]);
        expect(seen().events).toEqual([]);
        expect(seen().text).not.toContain('READING-MARK');
      } finally {
        forceEngine(null);
      }
    });
  }

  it('continued at once: one event on the check span, before the new round\'s attempt spans; the text only with recordPrompts', async () => {
    for (const [clarification, kind, text] of [
      [0, 'chose', READING_0],
      [{ rephrased: REPHRASED }, 'rephrased', REPHRASED],
    ] as const) {
      for (const recordPrompts of [false, true]) {
        const store = memoryStore();
        const model = async (_p: string, { attempt }: CallInfo) => replies[attempt] ?? '';
        await acheck(model, 'How big is mercury?', { checkpoint: store, key: 'k', awaitClarification: true });
        exporter.reset();
        await acheck(model, 'How big is mercury?', { checkpoint: store, key: 'k', clarification, telemetry: { recordPrompts } });
        const { events, text: all } = seen();
        expect(events).toEqual([
          {
            'booth.clarification.readings': 2,
            'booth.clarification.kind': kind,
            'booth.clarification.attempt': 1,
            ...(recordPrompts ? { 'booth.clarification.text': text } : {}),
          },
        ]);
        const root = checkSpan();
        expect(root.children.map((child) => child.attributes['booth.attempt.index'])).toEqual([1, 2]);
        // Off, neither the readings nor the person's words are on any span; on, the prompts carry them too.
        for (const marker of ['READING-MARK', 'REPHRASED-MARK']) expect(all.includes(marker), `${marker} ${recordPrompts}`).toBe(recordPrompts && text.startsWith(marker.split(' ')[0]!));
      }
    }
  });

  it("clarify(): its own entry, the same event once", async () => {
    const model = async (_p: string, { attempt }: CallInfo) => replies[attempt] ?? '';
    const ended = await acheck(model, 'How big is mercury?');
    exporter.reset();
    await clarify(ended, READING_1, model, { telemetry: true });
    expect(checkSpan().attributes).toMatchObject({ 'booth.entry': 'clarify', 'booth.status': 'REPAIRED', 'booth.resumed_attempts': 1 });
    expect(seen().events).toEqual([{ 'booth.clarification.readings': 2, 'booth.clarification.kind': 'chose', 'booth.clarification.attempt': 1 }]);
    expect(seen().text).not.toContain('READING-MARK');
  });
});

describe('telemetry of a run that spends only what it needs: cascades, adaptive samples, budgets', () => {
  const QUESTION = 'QUESTION-MARK capital of France?';
  /** A model that reports what it used and replies `answer` at `confidence`. */
  const reporting = (answer: string, confidence: number, tokens: number) => (_p: string, info: CallInfo) => {
    info.reportUsage?.({ inputTokens: tokens, outputTokens: 1, costUsd: tokens / 1000 });
    return envelope(answer, confidence);
  };
  const attemptsOf = (node: Node | undefined) => node?.children.map((child) => child.attributes['booth.attempt.index']);

  for (const engine of ['stepper', 'actor'] as const) {
    it(`${engine}: a cascade has one booth.model span per model tried, its attempts' spans under it, each with its name, place, attempts and usage`, () => {
      forceEngine(engine);
      try {
        const result = check(reporting('Lyon', 0.3, 10), QUESTION, {
          telemetry: true,
          maxRetries: 1,
          modelName: 'cheap',
          escalate: [{ call: reporting('Paris', 0.95, 100), name: 'strong' }],
        });
        expect(result.escalations).toEqual([{ attempt: 2, model: 'strong' }]);
        const root = checkSpan();
        expect(root.attributes).toMatchObject({ 'booth.models': ['cheap', 'strong'], 'booth.model.name': 'strong', 'booth.status': 'VERIFIED', 'booth.attempts': 3 });
        expect(root.children.map((child) => [child.name, child.attributes['booth.model.name'], child.attributes['booth.model.index']])).toEqual([
          ['booth.model', 'cheap', 0],
          ['booth.model', 'strong', 1],
        ]);
        const [cheap, strong] = root.children;
        expect(attemptsOf(cheap)).toEqual([0, 1]);
        expect(attemptsOf(strong)).toEqual([2]);
        expect(cheap?.attributes).toMatchObject({ 'booth.model.attempts': 2, 'gen_ai.usage.input_tokens': 20, 'booth.usage.total_tokens': 22, 'booth.usage.cost_usd': 0.02 });
        expect(strong?.attributes).toMatchObject({ 'booth.model.attempts': 1, 'gen_ai.usage.input_tokens': 100, 'booth.usage.cost_usd': 0.1 });
        expect(strong?.children[0]?.attributes['booth.attempt.retry_kind']).toBe('escalation');
        // The first model's last attempt ended in `escalating`: the move is an event on the attempt that caused it.
        expect(cheap?.children[1]?.states.at(-1)).toBe('escalating');
        expect(open.size).toBe(0);
        // The question is on no span without recordPrompts; the names, which are the caller's settings, are.
        expect(JSON.stringify(exporter.getFinishedSpans().map((span) => [span.attributes, span.events]))).not.toContain('QUESTION-MARK');
      } finally {
        forceEngine(null);
      }
    });
  }

  it('a run of one model, named or not, has no booth.model span: its attempts stay children of the check', () => {
    check(() => PARIS, 'q', { telemetry: true, modelName: 'solo' });
    const root = checkSpan();
    expect(root.children.map((child) => child.name)).toEqual(['booth.attempt']);
    expect(root.attributes['booth.model.name']).toBe('solo');
    expect(root.attributes).not.toHaveProperty('booth.models');
  });

  it('an outage at the first provider: its failed attempt is under its model span, the answer under the next', async () => {
    await acheck(
      async () => {
        throw Object.assign(new Error('HTTP 401'), { status: 401 });
      },
      'q',
      { telemetry: true, escalate: [async () => PARIS] },
    );
    const root = checkSpan();
    expect(root.children.map((child) => [child.attributes['booth.model.name'], attemptsOf(child)])).toEqual([
      ['model 1', [0]],
      ['model 2', [1]],
    ]);
    expect(root.attributes['booth.model.name']).toBe('model 2');
  });

  it('the provider call nests under its attempt, under its model', () => {
    const provider = (reply: string) => () =>
      trace.getTracer('provider-sdk').startActiveSpan('provider.call', (span) => {
        span.end();
        return reply;
      });
    check(provider(envelope('Lyon', 0.2)), 'q', { telemetry: true, maxRetries: 0, escalate: [provider(PARIS)] });
    const models = checkSpan().children;
    expect(models.map((model) => model.children.map((attempt) => attempt.children.map((child) => child.name)))).toEqual([[['provider.call']], [['provider.call']]]);
  });

  it('a clarified question asks the first model again: a new booth.model span for it', async () => {
    const ambiguous = envelope('?', 0.8, { ambiguous: true, interpretations: ['the planet', 'the element'] });
    const cheap = async (_p: string, { attempt }: CallInfo) => (attempt === 0 ? ambiguous : envelope('far', 0.2));
    const strong = async () => envelope('0.39 AU', 0.95);
    const options = { maxRetries: 0, modelName: 'cheap', escalate: [{ call: strong, name: 'strong' }] };
    const ended = await acheck(cheap, 'How far is Mercury?', options);
    expect(ended.status).toBe('AMBIGUOUS');
    exporter.reset();
    const result = await clarify(ended, 'the planet', cheap, { ...options, telemetry: true });
    expect(result.attempts.map((a) => a.model)).toEqual(['cheap', 'cheap', 'strong']);
    const root = checkSpan();
    expect(root.children.map((child) => [child.name, child.attributes['booth.model.name'], attemptsOf(child)])).toEqual([
      ['booth.model', 'cheap', [1]],
      ['booth.model', 'strong', [2]],
    ]);
    expect(open.size).toBe(0);
  });

  it('a run resumed mid-cascade: the model under way gets its span at once, its resumed attempt under it', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const cheap = async () => envelope('Lyon', 0.2);
    const strong = async (_p: string, info: CallInfo) => {
      if (!controller.signal.aborted) controller.abort(new Error('going down'));
      return PARIS;
    };
    const options = { checkpoint: store, key: 'k', telemetry: true, maxRetries: 0, modelName: 'cheap', escalate: [{ call: strong, name: 'strong' }] };
    await expect(acheck(cheap, 'q', { ...options, signal: controller.signal })).rejects.toThrow('going down');
    exporter.reset();
    const result = await acheck(cheap, 'q', options);
    expect(result.model).toBe('strong');
    const root = checkSpan();
    expect(root.attributes['booth.resumed_attempts']).toBe(1);
    expect(root.children.map((child) => [child.attributes['booth.model.name'], child.attributes['booth.model.index'], attemptsOf(child)])).toEqual([['strong', 1, [1]]]);
    expect(root.children[0]?.children[0]?.attributes['booth.attempt.resumed']).toBe(true);
    expect(open.size).toBe(0);
  });

  it('adaptive samples: only the samples asked have spans; one aborted once the vote was settled is marked skipped, with no reply attributes', async () => {
    await acheck(
      (_p, info) => {
        if (info.sample !== 2) return Promise.resolve(PARIS);
        return new Promise<string>((_, reject) => info.signal!.addEventListener('abort', () => reject(info.signal!.reason)));
      },
      'q',
      { telemetry: true, samples: { max: 4, min: 3, stop: { confidence: 0.8 } } },
    );
    const [attempt] = checkSpan().children;
    expect(attempt?.children.map((sample) => sample.attributes)).toEqual([
      { 'gen_ai.operation.name': 'chat', 'booth.sample.index': 0, 'booth.parse_ok': true, 'booth.call_tries': 1, 'booth.confidence': 0.9 },
      { 'gen_ai.operation.name': 'chat', 'booth.sample.index': 1, 'booth.parse_ok': true, 'booth.call_tries': 1, 'booth.confidence': 0.9 },
      { 'gen_ai.operation.name': 'chat', 'booth.sample.index': 2, 'booth.sample.skipped': true },
    ]);
    const skipped = exporter.getFinishedSpans().find((span) => span.attributes['booth.sample.skipped'] === true);
    expect(skipped?.events.map((event) => event.name)).toEqual(['booth.sample.skipped']);
    expect(open.size).toBe(0);
  });

  it('adaptive samples in a synchronous check: the samples never asked get no span', () => {
    check(() => PARIS, 'q', { telemetry: true, samples: { max: 5 } });
    const [attempt] = checkSpan().children;
    expect(attempt?.children.map((sample) => sample.attributes['booth.sample.index'])).toEqual([0, 1, 2]);
  });

  it('a budget stop is an event on the check span, in Booth\'s words; the limits are on it from the start', () => {
    check(() => envelope('x', 0.2), 'q', { telemetry: true, maxRetries: 5, budget: { maxCalls: 2, maxTokens: 5_000 } });
    const root = checkSpan();
    expect(root.attributes).toMatchObject({ 'booth.method': 'budget', 'booth.status': 'UNCERTAIN', 'booth.budget.max_calls': 2, 'booth.budget.max_tokens': 5_000 });
    expect(root.attributes).not.toHaveProperty('booth.budget.max_cost_usd');
    const stops = exporter.getFinishedSpans().flatMap((span) => span.events.filter((event) => event.name === 'booth.budget.stop').map((event) => [span.name, event.attributes]));
    expect(stops).toEqual([['booth.check', { 'booth.budget.detail': 'usage is unknown: a call replied without reporting what it used (info.reportUsage), or its stream was ended early, before the provider reported it, so the budget of 5000 tokens cannot be kept' }]]);
    expect(root.children.at(-1)?.states.at(-1)).toBe('overBudget');
    expect(open.size).toBe(0);
  });

  it('a budget that cuts a cascade short: the stop on the check, no span for the model never asked', () => {
    check(reporting('x', 0.2, 10), 'q', { telemetry: true, maxRetries: 1, escalate: [{ call: reporting('y', 0.9, 10), name: 'strong' }], budget: { maxCalls: 2 } });
    const root = checkSpan();
    expect(root.children.map((child) => child.attributes['booth.model.name'])).toEqual(['model 1']);
    expect(root.attributes['booth.model.name']).toBe('model 1');
    expect(exporter.getFinishedSpans().flatMap((span) => span.events.filter((event) => event.name === 'booth.budget.stop').map((event) => event.attributes))).toEqual([
      { 'booth.budget.detail': 'the budget of 2 calls is spent' },
    ]);
  });
});

describe('telemetry of streamed replies', () => {
  const streamed = (text: string) => async function* () {
    for (let at = 0; at < text.length; at += 6) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      yield text.slice(at, at + 6);
    }
  };

  it('the attempt records its chunks and when the first came; the check, when the verdict came', async () => {
    await acheck(streamed(PARIS), 'q', { telemetry: true });
    const root = checkSpan();
    const [attempt] = root.children;
    expect(attempt!.attributes['booth.stream.chunks']).toBe(Math.ceil(PARIS.length / 6));
    expect(attempt!.attributes['booth.stream.first_chunk_ms']).toBeGreaterThanOrEqual(0);
    expect(root.attributes['booth.stream.verdict_ms']).toBeGreaterThanOrEqual(attempt!.attributes['booth.stream.first_chunk_ms'] as number);
    expect(open.size).toBe(0);
  });

  it('a stream ended early by an AMBIGUOUS verdict is an event on its attempt, and no reply text reaches a span', async () => {
    const secret = 'Secret reading 7f3a';
    await acheck(streamed(envelope('never sent', 0.5, { ambiguous: true, interpretations: [secret, 'b'] })), 'q', { telemetry: true });
    const root = checkSpan();
    const [attempt] = root.children;
    expect(root.attributes['booth.status']).toBe('AMBIGUOUS');
    expect(exporter.getFinishedSpans().flatMap((span) => span.events.map((event) => event.name))).toContain('booth.stream.ended_early');
    expect(attempt!.attributes['booth.stream.chunks']).toBeGreaterThan(0);
    expect(JSON.stringify(exporter.getFinishedSpans().map((span) => [span.attributes, span.events]))).not.toContain(secret);
  });

  it('a check without a stream records none of it', async () => {
    await acheck(async () => PARIS, 'q', { telemetry: true });
    const root = checkSpan();
    expect(root.attributes['booth.stream.verdict_ms']).toBeUndefined();
    expect(root.children[0]!.attributes['booth.stream.chunks']).toBeUndefined();
  });
});
