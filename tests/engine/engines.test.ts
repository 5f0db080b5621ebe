import fc from 'fast-check';
import { createMachine, setup } from 'xstate';
import { getShortestPaths } from 'xstate/graph';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type CheckpointEvent, type CheckpointInput } from '../../machines/checkpoint/types.js';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { update } from '../../machines/effects.js';
import { createEngine, type Engine, forceEngine } from '../../src/engine/engines.js';
import { acheck, check, type CheckpointStore, memoryStore } from '../../src/index.js';
import { readMachineInput } from '../../src/options/machine-input.js';
import { compile, UnsupportedMachineError } from '../../src/engine/stepper.js';
import { z } from 'zod';
import { decided, envelope } from '../fixtures/helpers.js';

/**
 * One machine, two engines: the compiled stepper must be XState's actor, event for event.
 * Both run side by side on the same fake clock; after every event (and every tick of the
 * clock) their state, status, whole context, output and persisted snapshot must be equal.
 */

const replied = (reply: unknown): CheckpointEvent => ({ type: 'model.replied', reply });
const failed = (error: unknown): CheckpointEvent => ({ type: 'model.failed', error });
const badRequest = Object.assign(new Error('bad request'), { status: 400 });

const EVENTS: readonly CheckpointEvent[] = [
  replied(envelope('Paris', 0.9)),
  replied(envelope('Paris', 0.2)),
  replied(envelope('', 0.6, { ambiguous: true, interpretations: ['a', 'b'] })),
  replied('no json here'),
  replied(null),
  failed(new Error('connection reset')),
  failed(badRequest),
  { type: 'validator.returned', value: true },
  { type: 'validator.returned', value: [false, 'rejected'] },
  { type: 'validator.threw', error: new Error('bug') },
  { type: 'model.timedOut' },
  { type: 'run.deadline' },
  { type: 'backoff.elapsed' },
  { type: 'booth.resumed' },
  { type: 'schema.returned', result: { value: 'PARIS' } },
  { type: 'schema.returned', result: { issues: [{ message: 'too short', path: ['name'] }] } },
  { type: 'schema.threw', error: new Error('schema bug') },
];
const SCHEMA_EVENTS = EVENTS.slice(14, 17);
/** Usage reports, taken at any time: only the random sequences send them, since each makes a new context for the shortest paths. */
const USAGE_EVENTS: readonly CheckpointEvent[] = [
  { type: 'model.usage', usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15, costUsd: null }, attempt: 0 },
  { type: 'model.usage', usage: { inputTokens: 7, outputTokens: 1, totalTokens: 9, costUsd: 0.002 }, attempt: 1 },
  // A late report: a call of the first attempt, abandoned, reporting after that attempt was committed.
  { type: 'model.usage', usage: { inputTokens: 100, outputTokens: 0, totalTokens: 100, costUsd: null }, attempt: 0 },
];

/** What may happen to one sample's call: the replies and failures the vote must weigh. */
const sampleEvents = (sample: number, call: number): CheckpointEvent[] => [
  { type: 'sample.replied', sample, call, reply: envelope('Paris', 0.9) },
  { type: 'sample.replied', sample, call, reply: envelope('Lyon', 0.6) },
  { type: 'sample.replied', sample, call, reply: 'no json here' },
  { type: 'sample.failed', sample, call, error: new Error('connection reset') },
];

/** A sample's call failing with a status no retry can fix, which ends the run: only the random sequences send it, as the paths would multiply. */
const failedForGood = (sample: number, call: number): CheckpointEvent => ({ type: 'sample.failed', sample, call, error: badRequest });

/** The sample events a sampling run can take now: one set per call in flight; a backoff's end. */
function samplingEvents(context: { slots: ReadonlyArray<{ state: string; call: number }> }): CheckpointEvent[] {
  return context.slots.flatMap((slot, sample) =>
    slot.state === 'calling'
      ? sampleEvents(sample, slot.call)
      : slot.state === 'backingOff'
        ? [{ type: 'sample.backoffElapsed', sample, call: slot.call } as const]
        : [],
  );
}

const VARIANTS = {
  plain: {},
  timers: { timeoutMs: 1_000, deadlineMs: 5_000 },
  'call retries': { callRetries: { retries: 1, minDelayMs: 100 } },
  schema: { schema: z.string().min(2) },
} satisfies Record<string, Partial<CheckpointInput>>;

const inputs: Array<[string, CheckpointInput]> = [];
for (const maxRetries of [0, 1, 2]) {
  for (const validator of [false, true]) {
    for (const [variant, extra] of Object.entries(VARIANTS)) {
      inputs.push([
        `maxRetries ${maxRetries}, ${validator ? 'a' : 'no'} validator, ${variant}`,
        { prompt: 'Capital of France?', maxRetries, validator, effects: 'events', ...extra },
      ]);
    }
  }
}

/**
 * Sampling runs, two samples an attempt. Every path of every sample event outgrows memory
 * past one retry, so the timers and call retries are left to the random sequences below.
 */
const samplingInputs: Array<[string, CheckpointInput]> = [];
for (const maxRetries of [0, 1]) {
  for (const validator of [false, true]) {
    samplingInputs.push([
      `maxRetries ${maxRetries}, ${validator ? 'a' : 'no'} validator, 2 samples`,
      { prompt: 'Capital of France?', maxRetries, validator, effects: 'events', samples: 2 },
    ]);
  }
}
const randomInputs: Array<[string, CheckpointInput]> = [
  ...inputs,
  ...samplingInputs,
  [
    '2 samples one at a time, timers, call retries',
    {
      prompt: 'Capital of France?',
      maxRetries: 1,
      validator: true,
      effects: 'events',
      samples: 2,
      sampleConcurrency: 1,
      timeoutMs: 1_000,
      deadlineMs: 5_000,
      callRetries: { retries: 1, minDelayMs: 100 },
    },
  ],
  ['3 samples, a schema', { prompt: 'Capital of France?', maxRetries: 1, effects: 'events', samples: 3, schema: z.string().min(2) }],
];

/**
 * An engine's run as one string: state, status, error, and the persisted snapshot, which
 * holds the whole context and, once done, the output.
 */
function seen(engine: Engine): string {
  const { status, value, error } = engine.view();
  return JSON.stringify({ status, value, error: String(error), persisted: engine.persisted() });
}

class Pair {
  actor: Engine;
  stepper: Engine;
  constructor(input: CheckpointInput) {
    this.actor = createEngine('actor', readMachineInput(input));
    this.stepper = createEngine('stepper', readMachineInput(input));
  }
  get active() {
    return this.actor.view().status === 'active';
  }
  expectEqual(where: string) {
    expect(seen(this.stepper), where).toBe(seen(this.actor));
  }
  send(event: CheckpointEvent) {
    this.actor.send(event);
    this.stepper.send(event);
  }
  /** Each engine resumes the other's checkpoint, after a trip through JSON as a store makes it. */
  swapCheckpoints(input: CheckpointInput) {
    const fromActor = JSON.parse(JSON.stringify(this.actor.persisted()));
    const fromStepper = JSON.parse(JSON.stringify(this.stepper.persisted()));
    this.stop();
    this.actor = createEngine('actor', readMachineInput(input), fromStepper);
    this.stepper = createEngine('stepper', readMachineInput(input), fromActor);
    this.send({ type: 'booth.resumed' });
  }
  stop() {
    this.actor.stop();
    this.stepper.stop();
  }
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_800_000_000_000 });
  // The backoff's jitter: the same draw for both engines.
  vi.spyOn(Math, 'random').mockReturnValue(0.25);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
  forceEngine(null);
});

/**
 * With call retries every try's error is kept, so each extra event multiplies the states:
 * there the paths use one reply of each outcome and leave out the events that only repeat
 * another's (a timeout is a failed call; null is another non-text reply).
 */
const CALL_RETRY_EVENTS = EVENTS.filter((event, i) => ![2, 4, 10].includes(i));
/** While sampling, only the sample events, the deadline and a resume can change anything. */
const WHILE_SAMPLING = EVENTS.filter((event) => event.type === 'run.deadline' || event.type === 'booth.resumed' || event.type === 'model.timedOut');

function shortestPaths(input: CheckpointInput) {
  const events = input.callRetries ? CALL_RETRY_EVENTS : EVENTS;
  return getShortestPaths(checkpointMachine, {
    input,
    events: (snapshot) =>
      snapshot.status !== 'active' ? [] : snapshot.value === 'sampling' ? [...WHILE_SAMPLING, ...samplingEvents(snapshot.context)] : [...events],
  });
}

describe('the stepper and the XState actor, side by side', () => {
  for (const [name, input] of [...inputs, ...samplingInputs]) {
    it(`every shortest path, every event: ${name}`, { timeout: 120_000 }, () => {
      const paths = shortestPaths(input);
      expect(paths.length).toBeGreaterThan(5);
      for (const path of paths) {
        const pair = new Pair(input);
        pair.expectEqual('at start');
        path.steps.forEach((step, i) => {
          if (i === 0) return; // the initial state
          pair.send(step.event as CheckpointEvent);
          pair.expectEqual(`after step ${i}: ${step.event.type}`);
          // The timers each engine armed fire alike too.
          vi.advanceTimersByTime(600);
          pair.expectEqual(`600 ms after step ${i}`);
        });
        pair.stop();
      }
    });
  }

  it('random event sequences, clock ticks and crossed resumes, ignored events included', () => {
    const command = fc.oneof(
      fc.record({ send: fc.constantFrom(...EVENTS, ...USAGE_EVENTS, ...[0, 1, 2, 3].flatMap((call) => [...sampleEvents(0, call), ...sampleEvents(1, call), failedForGood(0, call), failedForGood(1, call)])) }),
      fc.record({ advance: fc.integer({ min: 0, max: 3_000 }) }),
      fc.constant({ swap: true as const }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...randomInputs), fc.array(command, { maxLength: 25 }), ([, input], commands) => {
        vi.setSystemTime(1_800_000_000_000);
        const pair = new Pair(input);
        try {
          pair.expectEqual('at start');
          for (const [i, c] of commands.entries()) {
            if (!pair.active) break;
            if ('send' in c) pair.send(c.send);
            else if ('advance' in c) vi.advanceTimersByTime(c.advance);
            else pair.swapCheckpoints(input);
            pair.expectEqual(`after command ${i}: ${JSON.stringify(c)}`);
          }
        } finally {
          pair.stop();
          vi.clearAllTimers();
        }
      }),
      { numRuns: 1_000, seed: 20261201 },
    );
  });
});

/**
 * Runs that wait for a clarification: an ambiguous reply rests in awaitingClarification,
 * where only the person's events move the run (a reading offered or not, a rephrasing blank
 * or not, a cancel); a second round may be ambiguous again, with the same readings or others.
 */
const AMBIGUOUS_AGAIN = replied(envelope('', 0.6, { ambiguous: true, interpretations: ['c', 'd'] }));
const CLARIFY_EVENTS: readonly CheckpointEvent[] = [
  { type: 'clarify.chose', reading: 'a' },
  // Offered only by AMBIGUOUS_AGAIN: refused after the first ambiguous reply.
  { type: 'clarify.chose', reading: 'c' },
  { type: 'clarify.chose', reading: 'A' },
  { type: 'clarify.rephrased', question: 'The capital of the country, France?' },
  { type: 'clarify.rephrased', question: ' \n' },
  { type: 'clarify.cancelled' },
];
/** Events a waiting run must ignore: a late reply, a timer, a resume, a verdict nobody asked for. */
const IGNORED_WHILE_WAITING: readonly CheckpointEvent[] = [
  replied(envelope('Paris', 0.9)),
  { type: 'run.deadline' },
  { type: 'model.timedOut' },
  { type: 'booth.resumed' },
  { type: 'validator.returned', value: true },
];
const CLARIFY_REPLIES: readonly CheckpointEvent[] = [...EVENTS.slice(0, 4), AMBIGUOUS_AGAIN];
const ambiguousSample = (sample: number, call: number): CheckpointEvent => ({ type: 'sample.replied', sample, call, reply: envelope('', 0.6, { ambiguous: true, interpretations: ['a', 'b'] }) });

const randomClarifyInputs: Array<[string, CheckpointInput]> = [];
for (const maxRetries of [0, 1]) {
  for (const maxClarifications of [1, 2]) {
    for (const [variant, extra] of Object.entries({ plain: {}, timers: VARIANTS.timers, 'a validator': { validator: true }, 'call retries': VARIANTS['call retries'] })) {
      randomClarifyInputs.push([
        `maxRetries ${maxRetries}, maxClarifications ${maxClarifications}, ${variant}`,
        { prompt: 'Capital of France?', maxRetries, effects: 'events', awaitClarification: true, maxClarifications, ...extra },
      ]);
    }
  }
}
randomClarifyInputs.push(['2 samples, maxClarifications 2', { prompt: 'Capital of France?', maxRetries: 1, effects: 'events', awaitClarification: true, samples: 2 }]);
// Three rounds with a retry each outgrow the paths' time past the plain run, and call retries multiply every round's: the random sequences take those.
const clarifyInputs = randomClarifyInputs.filter(([name]) => !name.includes('call retries') && !name.includes('samples') && (!name.startsWith('maxRetries 1, maxClarifications 2') || name.endsWith('plain')));

function clarifyPaths(input: CheckpointInput) {
  return getShortestPaths(checkpointMachine, {
    input,
    events: (snapshot) => {
      if (snapshot.status !== 'active') return [];
      if (snapshot.value === 'awaitingClarification') return [...CLARIFY_EVENTS, ...IGNORED_WHILE_WAITING];
      if (snapshot.value === 'validationGate') return EVENTS.slice(7, 10);
      return CLARIFY_REPLIES;
    },
  });
}

describe('the stepper and the XState actor, side by side, on runs that wait for a clarification', () => {
  for (const [name, input] of clarifyInputs) {
    it(`every shortest path, every event: ${name}`, { timeout: 120_000 }, () => {
      const paths = clarifyPaths(input);
      const waited = paths.filter((path) => path.steps.some((step) => step.state.value === 'awaitingClarification'));
      expect(waited.length).toBeGreaterThan(5);
      // Both of the person's events are taken, in as many rounds as maxClarifications allows, and the run ends every way.
      const ends = new Set(paths.filter((path) => path.state.status === 'done').map((path) => `${String(path.state.value)} after ${path.state.context.clarifications.length}`));
      for (let n = 0; n <= input.maxClarifications!; n += 1) expect(ends, [...ends].join()).toContain(`ambiguous after ${n}`);
      expect(ends).toContain(`verified after ${input.maxClarifications}`);
      const kinds = new Set(paths.flatMap((path) => path.state.context.clarifications.map((c) => (c.rephrased === null ? 'chose' : 'rephrased'))));
      expect([...kinds].sort()).toEqual(['chose', 'rephrased']);
      for (const path of paths) {
        const pair = new Pair(input);
        path.steps.forEach((step, i) => {
          if (i === 0) return;
          pair.send(step.event as CheckpointEvent);
          pair.expectEqual(`after step ${i}: ${JSON.stringify(step.event).slice(0, 80)}`);
          // A person may take days: a waiting run arms no timer, so a long wait changes nothing on either engine.
          vi.advanceTimersByTime(step.state.value === 'awaitingClarification' ? 86_400_000 : 600);
          pair.expectEqual(`after the wait after step ${i}`);
        });
        pair.stop();
      }
    });
  }

  it('a refused event leaves the run waiting on both engines, unchanged; an offered one starts round 2 with the clarified prompt', () => {
    const input: CheckpointInput = { prompt: 'Capital of France?', effects: 'events', awaitClarification: true, deadlineMs: 5_000 };
    const pair = new Pair(input);
    pair.send(EVENTS[2]!);
    expect(pair.actor.view().value).toBe('awaitingClarification');
    const waiting = seen(pair.stepper);
    for (const refused of [CLARIFY_EVENTS[1]!, CLARIFY_EVENTS[2]!, CLARIFY_EVENTS[4]!, ...IGNORED_WHILE_WAITING, { type: 'clarify.chose', reading: 7 } as never]) {
      pair.send(refused);
      pair.expectEqual(JSON.stringify(refused));
      expect(seen(pair.stepper)).toBe(waiting);
    }
    vi.advanceTimersByTime(10_000);
    expect(seen(pair.stepper)).toBe(waiting);
    pair.send(CLARIFY_EVENTS[0]!);
    pair.expectEqual('chose a');
    const { value, context } = pair.stepper.view();
    expect(value).toBe('calling');
    expect(context.prompts.map((p) => p.kind)).toEqual(['first', 'clarification']);
    expect(context.settings.deadlineAt).toBe(Date.now() + 5_000);
    // The deadline is the new round's: it fires 5 s after the choice, on both engines alike.
    vi.advanceTimersByTime(4_999);
    expect(pair.actor.view().value).toBe('calling');
    vi.advanceTimersByTime(1);
    pair.expectEqual('deadline of round 2');
    expect(pair.actor.view().value).toBe('uncertain');
    pair.stop();
  });

  it('random event sequences, clock ticks and crossed resumes, while waiting and after', () => {
    const reached = { waited: new Set<string>(), clarified: new Set<string>() };
    // Weighted toward the replies and the person's events, so that sequences reach the later rounds.
    const commandFor = (input: CheckpointInput) =>
      fc.oneof(
        input.samples === 2
          ? { weight: 6, arbitrary: fc.record({ send: fc.constantFrom(...[0, 1, 2, 3].flatMap((call) => [ambiguousSample(0, call), ambiguousSample(1, call), sampleEvents(0, call)[0]!, sampleEvents(1, call)[1]!])) }) }
          : { weight: 6, arbitrary: fc.record({ send: fc.constantFrom(...CLARIFY_REPLIES, ...EVENTS.slice(7, 10)) }) },
        { weight: 4, arbitrary: fc.record({ send: fc.constantFrom(...CLARIFY_EVENTS) }) },
        { weight: 1, arbitrary: fc.record({ send: fc.constantFrom(...EVENTS.slice(4), ...USAGE_EVENTS) }) },
        { weight: 1, arbitrary: fc.record({ advance: fc.integer({ min: 0, max: 3_000 }) }) },
        { weight: 1, arbitrary: fc.constant({ swap: true as const }) },
      );
    const runs = fc.constantFrom(...randomClarifyInputs).chain((named) => fc.tuple(fc.constant(named), fc.array(commandFor(named[1]), { maxLength: 30 })));
    fc.assert(
      fc.property(runs, ([[, input], commands]) => {
        vi.setSystemTime(1_800_000_000_000);
        const pair = new Pair(input);
        try {
          for (const [i, c] of commands.entries()) {
            if (!pair.active) break;
            if ('send' in c) pair.send(c.send);
            else if ('advance' in c) vi.advanceTimersByTime(c.advance);
            else pair.swapCheckpoints(input);
            pair.expectEqual(`after command ${i}: ${JSON.stringify(c)}`);
            const { value, context } = pair.actor.view();
            if (value === 'awaitingClarification') reached.waited.add(input.samples === 2 ? 'sampled' : `after ${context.clarifications.length}`);
            if (context.clarifications.length > 0) reached.clarified.add(`${context.clarifications.length} in ${String(value)}`);
          }
        } finally {
          pair.stop();
          vi.clearAllTimers();
        }
      }),
      { numRuns: 500, seed: 20261204 },
    );
    // The sequences reach the waiting state in each round, sampled too, and go on from it.
    expect([...reached.waited].sort()).toEqual(['after 0', 'after 1', 'sampled']);
    expect(reached.clarified.size).toBeGreaterThan(5);
  });
});

/**
 * Cascades, adaptive samples and budgets: the next model's round, the waves and the calls a
 * budget refuses are decided by the same machine on both engines.
 */
const CASCADE = { modelName: 'cheap', escalate: [{ name: 'strong' }] } satisfies Partial<CheckpointInput>;
const spendInputs: Array<[string, CheckpointInput]> = [
  ['a cascade, maxRetries 0', { prompt: 'Capital of France?', maxRetries: 0, effects: 'events', ...CASCADE }],
  ['a cascade, maxRetries 1, a validator', { prompt: 'Capital of France?', maxRetries: 1, validator: true, effects: 'events', ...CASCADE }],
  ['3 models unnamed, a schema', { prompt: 'Capital of France?', maxRetries: 0, effects: 'events', escalate: [{}, {}], schema: z.string().min(2) }],
  ['a budget of 2 calls, call retries', { prompt: 'Capital of France?', maxRetries: 2, effects: 'events', budget: { maxCalls: 2 }, callRetries: { retries: 2, minDelayMs: 100 } }],
  ['a cascade under a budget of 2 calls', { prompt: 'Capital of France?', maxRetries: 1, effects: 'events', budget: { maxCalls: 2 }, ...CASCADE }],
];
const adaptiveInputs: Array<[string, CheckpointInput]> = [
  ['adaptive, at most 3 samples', { prompt: 'Capital of France?', maxRetries: 0, effects: 'events', samples: { max: 3 } }],
  ['adaptive by confidence, 4 samples, a first wave of 3', { prompt: 'Capital of France?', maxRetries: 0, effects: 'events', samples: { max: 4, min: 3, stop: { confidence: 0.8 } } }],
  ['fixed 2 samples under a budget of 3 calls', { prompt: 'Capital of France?', maxRetries: 1, effects: 'events', samples: 2, budget: { maxCalls: 3 } }],
];
const randomSpendInputs: Array<[string, CheckpointInput]> = [
  ...spendInputs,
  ...adaptiveInputs,
  ['a token budget, a cascade to adaptive samples', { prompt: 'Capital of France?', maxRetries: 1, effects: 'events', budget: { maxTokens: 40 }, modelName: 'cheap', escalate: [{ name: 'strong', samples: { max: 3 } }] }],
  [
    'a cost budget, adaptive samples one at a time, timers, call retries, a cascade',
    {
      prompt: 'Capital of France?',
      maxRetries: 1,
      effects: 'events',
      samples: { max: 5 },
      sampleConcurrency: 1,
      timeoutMs: 1_000,
      deadlineMs: 5_000,
      callRetries: { retries: 1, minDelayMs: 100 },
      budget: { maxCostUsd: 0.01 },
      escalate: [{ samples: 2 }],
    },
  ],
];

describe('the stepper and the XState actor, side by side, on cascades, adaptive samples and budgets', () => {
  for (const [name, input] of [...spendInputs, ...adaptiveInputs]) {
    it(`every shortest path, every event: ${name}`, { timeout: 120_000 }, () => {
      const paths = shortestPaths(input);
      const ends = new Set(paths.filter((path) => path.state.status === 'done').map((path) => String(path.state.value)));
      if (input.escalate) expect(paths.some((path) => path.state.context.escalations.length > 0)).toBe(true);
      if (input.budget) expect(ends).toContain('overBudget');
      if (typeof input.samples === 'object') expect(paths.some((path) => path.state.context.slots.some((slot) => slot.state === 'skipped' || slot.state === 'held'))).toBe(true);
      for (const path of paths) {
        const pair = new Pair(input);
        path.steps.forEach((step, i) => {
          if (i === 0) return;
          pair.send(step.event as CheckpointEvent);
          pair.expectEqual(`after step ${i}: ${step.event.type}`);
          vi.advanceTimersByTime(600);
          pair.expectEqual(`600 ms after step ${i}`);
        });
        pair.stop();
      }
    });
  }

  it('random event sequences with usage reports, clock ticks and crossed resumes', () => {
    const reached = new Set<string>();
    const spendUsage: CheckpointEvent[] = [0, 1, 2, 3].map((attempt) => ({ type: 'model.usage', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15, costUsd: 0.004 }, attempt }));
    // Most commands pick one of the events the run can take now (a reply to a call in flight), so that sequences go deep.
    const command = fc.oneof(
      { weight: 6, arbitrary: fc.record({ pick: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ send: fc.constantFrom(...spendUsage, ...EVENTS.slice(10), failedForGood(0, 0), failedForGood(1, 2)) }) },
      { weight: 1, arbitrary: fc.record({ advance: fc.integer({ min: 0, max: 3_000 }) }) },
      { weight: 1, arbitrary: fc.constant({ swap: true as const }) },
    );
    fc.assert(
      fc.property(fc.constantFrom(...randomSpendInputs), fc.array(command, { maxLength: 40 }), ([, input], commands) => {
        vi.setSystemTime(1_800_000_000_000);
        const pair = new Pair(input);
        try {
          for (const [i, c] of commands.entries()) {
            if (!pair.active) break;
            if ('pick' in c) {
              const { value, context } = pair.actor.view();
              const now = value === 'sampling' ? samplingEvents(context) : EVENTS.slice(0, 10);
              if (now.length > 0) pair.send(now[c.pick % now.length]!);
            } else if ('send' in c) pair.send(c.send);
            else if ('advance' in c) vi.advanceTimersByTime(c.advance);
            else pair.swapCheckpoints(input);
            pair.expectEqual(`after command ${i}: ${JSON.stringify(c)}`);
            const { value, context } = pair.actor.view();
            if (context.escalations.length > 0) reached.add('escalated');
            if (value === 'overBudget') reached.add('over budget');
            if (context.slots.some((slot) => slot.state === 'skipped')) reached.add('skipped');
          }
        } finally {
          pair.stop();
          vi.clearAllTimers();
        }
      }),
      { numRuns: 600, seed: 20261205 },
    );
    expect([...reached].sort()).toEqual(['escalated', 'over budget', 'skipped']);
  });
});

/**
 * Streamed replies: the news a stream sends while its call is in flight (ambiguity known,
 * readings complete, a member the schema refuses), for the call the run waits for and for
 * a call it no longer does, in either order, with and without the reply's ambiguity known.
 */
const heard = (ambiguous: boolean | null, interpretations: string[] | null) => ({ ambiguous, interpretations, text: '{"ambiguous": ' });
const CITY_REFUSED = [{ path: 'answer.city', message: 'Invalid input: expected string, received number' }];
const streamNews = (call: number, sample?: number): CheckpointEvent[] => {
  const about = sample === undefined ? { call } : { call, sample };
  return [
    { type: 'reply.ambiguityKnown', ...about, heard: heard(false, null) },
    { type: 'reply.ambiguityKnown', ...about, heard: heard(true, ['a', 'b']) },
    { type: 'reply.readingsComplete', ...about, heard: heard(true, ['a', 'b']) },
    { type: 'reply.readingsComplete', ...about, heard: heard(null, ['a', 'b']) },
    { type: 'reply.memberFailed', ...about, heard: heard(false, []), issues: CITY_REFUSED },
    { type: 'reply.memberFailed', ...about, heard: heard(null, null), issues: CITY_REFUSED },
  ];
};
/** The news of the call in flight now, and of the one before it (a stream the run gave up on). */
function streamEvents(context: { calls: number; slots: ReadonlyArray<{ state: string; call: number }> }, value: unknown): CheckpointEvent[] {
  if (value === 'calling') return [...streamNews(context.calls - 1), ...streamNews(context.calls - 2).slice(1, 3)];
  if (value === 'sampling') return context.slots.flatMap((slot, sample) => (slot.state === 'calling' ? streamNews(slot.call, sample).slice(1, 4) : []));
  return [];
}
const CITY = z.object({ city: z.string() });
const streamInputs: Array<[string, CheckpointInput]> = [
  ['streamed, maxRetries 1', { prompt: 'Where is Paris?', maxRetries: 1, effects: 'events' }],
  ['streamed, a schema, maxRetries 1, a cascade', { prompt: 'Where is Paris?', maxRetries: 1, effects: 'events', schema: CITY, ...CASCADE }],
  ['streamed, 2 samples', { prompt: 'Where is Paris?', maxRetries: 0, effects: 'events', samples: 2 }],
  ['streamed, waiting for a clarification', { prompt: 'Where is Paris?', maxRetries: 0, effects: 'events', awaitClarification: true }],
];

describe('the stepper and the XState actor, side by side, on streamed replies', () => {
  for (const [name, input] of streamInputs) {
    it(`every shortest path, every event: ${name}`, { timeout: 120_000 }, () => {
      const paths = getShortestPaths(checkpointMachine, {
        input,
        events: (snapshot) =>
          snapshot.status !== 'active'
            ? []
            : snapshot.value === 'sampling'
              ? [...WHILE_SAMPLING, ...samplingEvents(snapshot.context), ...streamEvents(snapshot.context, 'sampling')]
              : snapshot.value === 'awaitingClarification'
                ? [CLARIFY_EVENTS[0]!, CLARIFY_EVENTS[5]!]
                : [...EVENTS.slice(0, 3), ...EVENTS.slice(14, 16), ...streamEvents(snapshot.context, snapshot.value)],
      });
      const early = paths.filter((path) => path.steps.some((step) => step.event.type.startsWith('reply.')));
      // A sample's news changes nothing: samples are read whole.
      if (input.samples === 2) expect(early).toHaveLength(0);
      else expect(early.length).toBeGreaterThan(0);
      if (input.schema) expect(paths.some((path) => path.state.context.trace.some((step) => step.state === 'answerRefused'))).toBe(true);
      for (const path of paths) {
        const pair = new Pair(input);
        path.steps.forEach((step, i) => {
          if (i === 0) return;
          pair.send(step.event as CheckpointEvent);
          pair.expectEqual(`after step ${i}: ${step.event.type}`);
          vi.advanceTimersByTime(600);
          pair.expectEqual(`600 ms after step ${i}`);
        });
        pair.stop();
      }
    });
  }

  it('random event sequences of streamed news, replies, clock ticks and crossed resumes', () => {
    const command = fc.oneof(
      { weight: 6, arbitrary: fc.record({ pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ advance: fc.integer({ min: 0, max: 3_000 }) }) },
      { weight: 1, arbitrary: fc.constant({ swap: true as const }) },
    );
    const inputs = [...streamInputs, ['streamed, timers, call retries, a schema', { prompt: 'q', maxRetries: 1, effects: 'events', schema: CITY, timeoutMs: 1_000, deadlineMs: 5_000, callRetries: { retries: 1, minDelayMs: 100 } }] as [string, CheckpointInput]];
    fc.assert(
      fc.property(fc.constantFrom(...inputs), fc.array(command, { maxLength: 30 }), ([, input], commands) => {
        vi.setSystemTime(1_800_000_000_000);
        const pair = new Pair(input);
        try {
          for (const [i, c] of commands.entries()) {
            if (!pair.active) break;
            if ('pick' in c) {
              const { value, context } = pair.actor.view();
              const now = [...(value === 'sampling' ? samplingEvents(context) : EVENTS.slice(0, 10)), ...streamEvents(context, value), ...CLARIFY_EVENTS];
              pair.send(now[c.pick % now.length]!);
            } else if ('advance' in c) vi.advanceTimersByTime(c.advance);
            else pair.swapCheckpoints(input);
            pair.expectEqual(`after command ${i}: ${JSON.stringify(c)}`);
          }
        } finally {
          pair.stop();
          vi.clearAllTimers();
        }
      }),
      { numRuns: 400, seed: 20261204 },
    );
  });
});

describe("the stepper's context, updated in place", () => {
  const input = readMachineInput({ prompt: 'Capital of France?', maxRetries: 2, effects: 'events' });

  it('never changes a snapshot it saved, nor one it resumed from', () => {
    const first = createEngine('stepper', input);
    first.send(replied('prose'));
    const saved = first.persisted();
    const asSaved = JSON.stringify(saved);
    first.send(replied('more prose'));
    expect(JSON.stringify(saved)).toBe(asSaved);

    const resumed = createEngine('stepper', input, saved);
    resumed.send({ type: 'booth.resumed' });
    resumed.send(replied(envelope('Paris', 0.9)));
    expect(resumed.view().status).toBe('done');
    expect(JSON.stringify(saved)).toBe(asSaved);
  });
});

describe('check() and acheck() on either engine', () => {
  /** The replies and verdicts of every path that ends, as a script both engines replay. */
  function endingScripts(maxRetries: number, validator: boolean, schema: boolean) {
    const input: CheckpointInput = { prompt: 'Capital of France?', maxRetries, validator, effects: 'events', ...(schema ? { schema: z.string() } : {}) };
    const eventsIn = (state: unknown) =>
      state === 'validationGate' ? EVENTS.slice(7, 10) : state === 'schemaGate' ? SCHEMA_EVENTS : EVENTS.slice(0, 6);
    return getShortestPaths(checkpointMachine, {
      input,
      events: (snapshot) => (snapshot.status !== 'active' ? [] : eventsIn(snapshot.value)),
    })
      .filter((path) => path.state.status === 'done')
      .map((path) => path.steps.slice(1).map((step) => step.event as CheckpointEvent));
  }

  function scripted(events: readonly CheckpointEvent[]) {
    const queue = [...events];
    const next = (type: 'model' | 'validator' | 'schema') => {
      const event = queue.shift();
      if (!event || !event.type.startsWith(type)) throw new Error(`script out of step at ${event?.type}`);
      if (event.type === 'model.failed' || event.type === 'validator.threw' || event.type === 'schema.threw') throw event.error;
      if (event.type === 'schema.returned') return event.result;
      return event.type === 'model.replied' ? event.reply : event.type === 'validator.returned' ? event.value : undefined;
    };
    const schema = { '~standard': { version: 1 as const, vendor: 'script', validate: () => next('schema') as { value: string } } };
    return { model: () => next('model') as string, validator: () => next('validator') as boolean, schema };
  }

  for (const maxRetries of [0, 1, 2]) {
    for (const [validator, schema] of [[false, false], [true, false], [false, true], [true, true]] as const) {
      const checks = `${validator ? 'a' : 'no'} validator${schema ? ', a schema' : ''}`;
      it(`maxRetries ${maxRetries}, ${checks}: equal results and onAttempt calls`, async () => {
        vi.useRealTimers();
        const scripts = endingScripts(maxRetries, validator, schema);
        expect(scripts.length).toBeGreaterThan(3);
        for (const script of scripts) {
          const runs = [];
          for (const engine of ['actor', 'stepper'] as const) {
            forceEngine(engine);
            const reported: unknown[] = [];
            const sync = scripted(script);
            const syncResult = check(sync.model, 'Capital of France?', {
              maxRetries,
              ...(validator ? { validator: sync.validator } : {}),
              ...(schema ? { schema: sync.schema } : {}),
              onAttempt: (i, attempt) => void reported.push([i, decided([attempt])]),
            });
            const async = scripted(script);
            const asyncResult = await acheck(async.model, 'Capital of France?', {
              maxRetries,
              ...(validator ? { validator: async.validator } : {}),
              ...(schema ? { schema: async.schema } : {}),
              onAttempt: (i, attempt) => void reported.push([i, decided([attempt])]),
            });
            runs.push({ sync: decided(syncResult.toJSON()), async: decided(asyncResult.toJSON()), reported });
          }
          expect(runs[1]).toEqual(runs[0]);
        }
      });
    }
  }

  it('an inspected check runs on the actor, so the inspector sees XState events', () => {
    vi.useRealTimers();
    const types = new Set<string>();
    check(() => envelope('Paris', 0.9), 'Capital of France?', { inspect: (event) => void types.add(event.type) });
    expect(types).toContain('@xstate.snapshot');
  });
});

describe('a checkpoint saved once the run had ended', () => {
  // acheck saves the last attempt, then deletes the checkpoint: a crash between the two leaves an ended run.
  for (const [saved, resumed] of [['stepper', 'actor'], ['actor', 'stepper'], ['stepper', 'stepper'], ['actor', 'actor']] as const) {
    it(`saved by the ${saved}, resumes on the ${resumed} to the same result, calling nothing and reporting nothing again`, async () => {
      const kept = memoryStore();
      const undeleted: CheckpointStore = { load: kept.load, save: kept.save, delete: () => undefined };
      const replies = [envelope('Lyon', 0.2), envelope('Paris', 0.9)];
      forceEngine(saved);
      const first = await acheck(async (_prompt, { attempt }) => replies[attempt] ?? '', 'Capital of France?', { checkpoint: undeleted, key: 'k' });
      expect(kept.size).toBe(1);
      forceEngine(resumed);
      const calls: number[] = [];
      const reported: number[] = [];
      const again = await acheck(
        async (_prompt, { attempt }) => {
          calls.push(attempt);
          return '';
        },
        'Capital of France?',
        { checkpoint: kept, key: 'k', onAttempt: (index) => void reported.push(index) },
      );
      expect(calls).toEqual([]);
      expect(reported).toEqual([]);
      expect(decided(again.toJSON())).toEqual(decided(first.toJSON()));
      expect(again.status).toBe('REPAIRED');
      expect(kept.size).toBe(0); // deleted now
    });
  }

  it('a run a 401 ended early, with attempts left, resumes to the same result: the call ended it, not a forger', async () => {
    const kept = memoryStore();
    const undeleted: CheckpointStore = { load: kept.load, save: kept.save, delete: () => undefined };
    const unauthorized = async (): Promise<string> => {
      throw Object.assign(new Error('bad key'), { status: 401 });
    };
    const first = await acheck(unauthorized, 'Capital of France?', { checkpoint: undeleted, key: 'k', maxRetries: 2 });
    expect(first.nAttempts).toBe(1);
    const saved = JSON.stringify(await kept.load('k'));
    const again = await acheck(unauthorized, 'Capital of France?', { checkpoint: kept, key: 'k', maxRetries: 2 });
    expect(decided(again.toJSON())).toEqual(decided(first.toJSON()));
    expect(again.method).toBe('call_failure');

    // The same run with its try no longer saying it failed for good is one that should have retried.
    expect(saved).toContain('"permanent":true');
    const forged = memoryStore();
    await forged.save('k', JSON.parse(saved.replaceAll(',"permanent":true', '')));
    await expect(acheck(unauthorized, 'Capital of France?', { checkpoint: forged, key: 'k', maxRetries: 2 })).rejects.toThrow(
      /says the run ended UNCERTAIN, but its attempts and settings lead to a retry/,
    );
    const mistyped = memoryStore();
    await mistyped.save('k', JSON.parse(saved.replaceAll('"permanent":true', '"permanent":"yes"')));
    await expect(acheck(unauthorized, 'Capital of France?', { checkpoint: mistyped, key: 'k', maxRetries: 2 })).rejects.toThrow(/permanent/);
  });
});

describe('the compiler refuses what the stepper does not run', () => {
  const effects = { note: update((_: object, __: undefined) => ({})) };
  const refused = (machine: Parameters<typeof compile>[0]) => () => compile(machine, effects);

  it('nested states', () => {
    const machine = createMachine({ id: 'm', initial: 'a', states: { a: { initial: 'x', states: { x: {} } } } });
    expect(refused(machine)).toThrow(new UnsupportedMachineError('The stepper cannot run machine "m": state "a" is a compound state; only flat machines are compiled.'));
  });
  it('parallel states', () => {
    const machine = createMachine({ id: 'm', initial: 'a', states: { a: { type: 'parallel', states: { x: {}, y: {} } } } });
    expect(refused(machine)).toThrow('state "a" is a parallel state');
  });
  it('history states', () => {
    const machine = createMachine({ id: 'm', initial: 'a', states: { a: {}, h: { type: 'history' } } });
    expect(refused(machine)).toThrow('state "h" is a history state');
  });
  it('inline guards and actions', () => {
    const guarded = createMachine({ id: 'm', initial: 'a', states: { a: { on: { go: { guard: () => true, target: 'b' } } }, b: {} } });
    expect(refused(guarded)).toThrow('state "a" on "go" has an inline guard');
    const acting = createMachine({ id: 'm', initial: 'a', states: { a: { entry: () => {} } } });
    expect(refused(acting)).toThrow('state "a" entry has an inline action');
  });
  it('actions with no effect, guards with no implementation', () => {
    const unknownAction = setup({ actions: { other: () => {} } }).createMachine({ id: 'm', initial: 'a', states: { a: { entry: 'other' } } });
    expect(refused(unknownAction)).toThrow('state "a" entry uses action "other", which has no effect in the stepper\'s table');
    const unknownGuard = createMachine({ id: 'm', initial: 'a', states: { a: { always: { guard: 'nope', target: 'a' } } } });
    expect(refused(unknownGuard)).toThrow('uses guard "nope", which setup({ guards }) does not implement');
  });
  it('delayed transitions and wildcard events', () => {
    const delayed = createMachine({ id: 'm', initial: 'a', states: { a: { after: { 100: 'b' } }, b: {} } });
    expect(refused(delayed)).toThrow('state "a"');
    const wildcard = createMachine({ id: 'm', initial: 'a', states: { a: { on: { '*': 'b' } }, b: {} } });
    expect(refused(wildcard)).toThrow('listens for the wildcard event "*"');
  });
  it('compiles the checkpoint machine itself', () => {
    expect(() => compile(checkpointMachine, effects)).toThrow(/has no effect in the stepper's table/);
  });
});

describe('the XState the engines ran on', () => {
  it('is the copy this run asked for: the installed one, or the peer floor (5.33.0)', async () => {
    const floor = (await import('xstate')).createActor === ((await import('xstate-floor')).createActor as unknown);
    expect(floor ? 'floor' : 'installed').toBe(process.env['BOOTH_XSTATE'] ?? 'installed');
  });
});
