import { type Actor, type AnyActorRef, assign, createActor, forwardTo, fromPromise, type InputFrom, type OutputFrom, sendTo, setup, toPromise, waitFor } from 'xstate';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { CLARIFICATION_MARKER } from '../../src/decide/constants.js';
import { MAX_REPHRASED_CHARS } from '../../src/decide/clarification.js';
import {
  type CheckpointContext,
  type CheckpointInput,
  type CheckpointOutput,
  checkpointMachine,
  clarifyingMachine,
  modelActor,
  type ValidationRequest,
  validatorActor,
  withFunctions,
} from '../../machines/index.js';
import { envelope } from '../fixtures/helpers.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A parent workflow that publishes verified answers and escalates the rest. */
const publisher = setup({
  types: {
    input: {} as { question: string; model: (prompt: string) => Promise<string> },
    context: {} as { question: string; model: (prompt: string) => Promise<string>; result?: CheckpointOutput },
  },
  actors: { booth: checkpointMachine },
}).createMachine({
  context: ({ input }) => input,
  initial: 'checking',
  states: {
    checking: {
      invoke: {
        src: 'booth',
        input: ({ context }) => ({ prompt: context.question, maxRetries: 1, model: context.model }),
        onDone: [
          {
            guard: ({ event }) => event.output.status === 'VERIFIED' || event.output.status === 'REPAIRED',
            target: 'published',
            actions: assign({ result: ({ event }) => event.output }),
          },
          { target: 'escalated', actions: assign({ result: ({ event }) => event.output }) },
        ],
      },
    },
    published: { type: 'final' },
    escalated: { type: 'final' },
  },
  output: ({ context }) => context.result,
});

async function run<T>(actor: { start(): void; getSnapshot(): { value: unknown } } & Parameters<typeof toPromise>[0]) {
  actor.start();
  const output = (await toPromise(actor)) as T;
  return { output, state: actor.getSnapshot().value };
}

describe('embedding the checkpoint machine in a workflow', () => {
  it('a parent invokes it with a plain model function in the input and gets the result in onDone', async () => {
    const replies = [envelope('Lyon', 0.2), envelope('Paris', 0.9)];
    const model = vi.fn(async () => replies.shift() ?? '');
    const { output, state } = await run<CheckpointOutput>(createActor(publisher, { input: { question: 'Capital of France?', model } }));
    expect(state).toBe('published');
    expect(output.status).toBe('REPAIRED');
    expect(output.answer).toBe('Paris');
    expect(output.trace.map((s) => s.state)).toContain('reconsidering');
    expect(model).toHaveBeenCalledTimes(2);
  });

  it('the model and validator can be provided once as actors, the XState way', async () => {
    const booth = checkpointMachine.provide({
      actors: {
        callModel: modelActor(async (_prompt, { attempt }) => envelope(attempt === 0 ? '1989-11' : '1989', 0.95)),
        validate: validatorActor(async (answer) => /^\d{4}$/.test(answer) || [false, 'four digits']),
      },
    });
    const output = await toPromise(createActor(booth, { input: { prompt: 'Year the Berlin Wall fell?', validator: true } }).start());
    expect(output.status).toBe('REPAIRED');
    expect(output.attempts.map((a) => a.validationError)).toEqual(['four digits', null]);
  });

  it('a plain validator function in the input may be async in a workflow', async () => {
    const replies = [envelope('MCMLXXXIX', 0.9), envelope('1989', 0.9)];
    const output = await toPromise(
      createActor(checkpointMachine, {
        input: {
          prompt: 'Year the Berlin Wall fell?',
          model: async () => replies.shift() ?? '',
          validator: async (answer: string) => /^\d{4}$/.test(answer),
        },
      }).start(),
    );
    expect(output.status).toBe('REPAIRED');
    expect(output.attempts[0]?.validationError).toBe('the validator returned false');
  });

  it('a throwing validator actor fails the answer, recorded with what it threw, and the model reconsiders', async () => {
    const booth = checkpointMachine.provide({
      actors: {
        callModel: modelActor(async (_prompt, { attempt }) => envelope(attempt === 0 ? 'Lyon' : 'Paris', 0.9)),
        validate: validatorActor(async (answer) => {
          if (answer === 'Lyon') throw new Error('no such capital');
          return true;
        }),
      },
    });
    const output = await toPromise(createActor(booth, { input: { prompt: 'Capital of France?', validator: true } }).start());
    expect(output.status).toBe('REPAIRED');
    expect(output.attempts.map((a) => a.validationError)).toEqual(['Validator threw Error: no such capital', null]);
    expect(output.prompts.map((p) => p.kind)).toEqual(['first', 'validation']);
  });

  it('the model actor is told which attempt it answers', async () => {
    const attempts: number[] = [];
    const booth = checkpointMachine.provide({
      actors: {
        callModel: modelActor(async (_prompt, { attempt }) => {
          attempts.push(attempt);
          return envelope('Paris', attempt === 0 ? 0.2 : 0.9);
        }),
      },
    });
    const output = await toPromise(createActor(booth, { input: { prompt: 'Capital of France?' } }).start());
    expect(output.status).toBe('REPAIRED');
    expect(attempts).toEqual([0, 1]);
  });

  it('leaving validationGate stops a validator actor still at work', async () => {
    let aborted = false;
    const booth = checkpointMachine.provide({
      actors: {
        callModel: modelActor(async () => envelope('Paris', 0.9)),
        validate: fromPromise<unknown, ValidationRequest>(
          ({ signal }) => new Promise(() => signal.addEventListener('abort', () => void (aborted = true))),
        ),
      },
    });
    const actor = createActor(booth, { input: { prompt: 'Capital of France?', validator: true } }).start();
    await vi.waitFor(() => expect(actor.getSnapshot().value).toBe('validationGate'));
    actor.send({ type: 'validator.returned', value: true });
    expect(actor.getSnapshot().output?.status).toBe('VERIFIED');
    expect(aborted).toBe(true);
  });

  it('fromPromise works as the model actor too', async () => {
    const booth = checkpointMachine.provide({
      actors: { callModel: fromPromise(async ({ input }) => envelope(`echo: ${input.prompt.split('\n')[0]}`, 0.9)) },
    });
    const output = await toPromise(createActor(booth, { input: { prompt: 'hello' } }).start());
    expect(output.answer).toBe('echo: hello');
  });

  it('a failing model actor is a failed call, recorded like any other', async () => {
    const booth = checkpointMachine.provide({
      actors: {
        callModel: modelActor(async () => {
          throw Object.assign(new Error('503 from upstream'), { status: 503 });
        }),
      },
    });
    const output = await toPromise(createActor(booth, { input: { prompt: 'q', maxRetries: 0 } }).start());
    expect(output.status).toBe('UNCERTAIN');
    expect(output.attempts[0]).toMatchObject({ callFailed: true, error: '503 from upstream' });
  });

  it('a timeout stops the model actor and aborts its signal', async () => {
    vi.useFakeTimers();
    const signals: AbortSignal[] = [];
    const booth = checkpointMachine.provide({
      actors: {
        callModel: modelActor((_prompt, { attempt, signal }) => {
          signals.push(signal);
          return attempt === 0 ? new Promise(() => {}) : envelope('Paris', 0.9);
        }),
      },
    });
    const done = toPromise(createActor(booth, { input: { prompt: 'q', timeoutMs: 1_000 } }).start());
    await vi.advanceTimersByTimeAsync(1_000);
    const output = await done;
    expect(output.status).toBe('REPAIRED');
    expect(output.attempts[0]?.error).toBe('the model call timed out after 1000 ms');
    expect(signals[0]?.aborted).toBe(true);
  });
});

describe('a workflow whose checkpoint waits for the person who asked', () => {
  const READINGS = ['Mercury the planet', 'mercury the element'];
  const ambiguous = envelope('4,879 km', 0.8, { ambiguous: true, interpretations: READINGS, chosen_interpretation: READINGS[0] });

  /** A parent that invokes the checkpoint with awaitClarification and forwards the person's answer to it. */
  const asker = setup({
    types: {
      input: {} as { question: string; model: (prompt: string) => Promise<string> },
      context: {} as { question: string; model: (prompt: string) => Promise<string>; result?: CheckpointOutput },
      events: {} as { type: 'person.chose'; reading: string } | { type: 'person.rephrased'; question: string } | { type: 'person.left' },
    },
    actors: { booth: checkpointMachine },
  }).createMachine({
    context: ({ input }) => input,
    initial: 'checking',
    states: {
      checking: {
        invoke: {
          id: 'booth',
          src: 'booth',
          input: ({ context }) => ({ prompt: context.question, model: context.model, awaitClarification: true }),
          onDone: { target: 'answered', actions: assign({ result: ({ event }) => event.output }) },
        },
        on: {
          'person.chose': { actions: sendTo('booth', ({ event }) => ({ type: 'clarify.chose' as const, reading: event.reading })) },
          'person.rephrased': { actions: sendTo('booth', ({ event }) => ({ type: 'clarify.rephrased' as const, question: event.question })) },
          'person.left': { actions: sendTo('booth', { type: 'clarify.cancelled' as const }) },
        },
      },
      answered: { type: 'final' },
    },
    output: ({ context }) => context.result,
  });

  async function waiting(replies: string[]) {
    const model = vi.fn(async (_prompt: string) => replies.shift() ?? 'no more replies');
    const actor = createActor(asker, { input: { question: 'How big is mercury?', model } }).start();
    const booth = actor.getSnapshot().children['booth'] as AnyActorRef;
    await waitFor(booth, (snapshot) => snapshot.value === 'awaitingClarification');
    return { actor, booth, model };
  }

  it('the checkpoint rests in awaitingClarification, AMBIGUOUS, until the parent forwards a reading; then it asks again with it', async () => {
    const { actor, booth, model } = await waiting([ambiguous, envelope('13.5 g/cm³', 0.9)]);
    expect(actor.getSnapshot().value).toBe('checking');
    expect(booth.getSnapshot().context.status).toBe('AMBIGUOUS');
    expect(model).toHaveBeenCalledTimes(1);
    // A reading that was not offered leaves it waiting.
    actor.send({ type: 'person.chose', reading: 'Mercury the god' });
    expect(booth.getSnapshot().value).toBe('awaitingClarification');
    actor.send({ type: 'person.chose', reading: READINGS[1]! });
    const output = (await toPromise(actor)) as CheckpointOutput;
    expect(output.status).toBe('VERIFIED');
    expect(output.clarifications).toEqual([{ question: 'How big is mercury?', readings: READINGS, chosen: READINGS[1], rephrased: null, attempt: 1 }]);
    expect(output.prompts.map((p) => p.kind)).toEqual(['first', 'clarification']);
    expect(model).toHaveBeenCalledTimes(2);
    expect(model.mock.calls[1]![0]).toContain('The person who asked has clarified the question');
  });

  it('the person leaves: clarify.cancelled ends it AMBIGUOUS, no call made', async () => {
    const { actor, model } = await waiting([ambiguous]);
    actor.send({ type: 'person.left' });
    const output = (await toPromise(actor)) as CheckpointOutput;
    expect(output.status).toBe('AMBIGUOUS');
    expect(output.trace.slice(-2).map((step) => step.state)).toEqual(['awaitingClarification', 'ambiguous']);
    expect(output.clarifications).toEqual([]);
    expect(model).toHaveBeenCalledTimes(1);
  });

  it("the waiting checkpoint's persisted snapshot, through JSON, restored with its model, goes on with a rephrasing", async () => {
    const { actor, booth, model } = await waiting([ambiguous]);
    const saved = JSON.parse(JSON.stringify(booth.getPersistedSnapshot()));
    actor.stop();
    const later = vi.fn(async () => envelope('about 13.5 g/cm³', 0.9));
    const restored = createActor(checkpointMachine, { input: { prompt: 'How big is mercury?' }, snapshot: withFunctions(saved, { model: later }) }).start();
    expect(restored.getSnapshot().value).toBe('awaitingClarification');
    restored.send({ type: 'clarify.rephrased', question: 'How dense is the element mercury?' });
    const output = await toPromise(restored);
    expect(output.status).toBe('VERIFIED');
    expect(output.clarifications[0]).toMatchObject({ chosen: null, rephrased: 'How dense is the element mercury?', attempt: 1 });
    expect(output.attempts).toHaveLength(2);
    expect(model).toHaveBeenCalledTimes(1);
    expect(later).toHaveBeenCalledTimes(1);
  });
});

describe('clarifyingMachine: a person in the loop of a workflow', () => {
  const ambiguous = envelope('4,879 km', 0.8, {
    ambiguous: true,
    interpretations: ['Mercury the planet', 'mercury the element'],
    chosen_interpretation: 'Mercury the planet',
  });

  /** The workflow of docs/clarification.md: a desk that invokes the clarifying machine and forwards the person's answer. */
  function desk(model: (prompt: string) => Promise<string>) {
    const booth = clarifyingMachine.provide({ actors: { callModel: modelActor(model) } });
    return setup({ types: { context: {} as { result: CheckpointOutput | null } }, actors: { booth } }).createMachine({
      context: { result: null },
      initial: 'asking',
      states: {
        asking: {
          invoke: { id: 'booth', src: 'booth', input: { prompt: 'How big is mercury?' }, onDone: { target: 'answered', actions: assign({ result: ({ event }) => event.output }) } },
          on: { 'clarify.*': { actions: forwardTo('booth') } },
        },
        answered: { type: 'final' },
      },
      output: ({ context }) => context.result!,
    });
  }

  type Desk = ReturnType<typeof desk>;
  const child = (actor: Actor<Desk>) => (actor.getSnapshot().children as Record<string, AnyActorRef | undefined>)['booth']!;
  async function waiting(actor: Actor<Desk>) {
    await vi.waitFor(() => expect(child(actor).getSnapshot().value).toBe('awaitingClarification'));
  }

  it('AMBIGUOUS: the child waits in awaitingClarification; the chosen reading, forwarded, asks again with it spelled out', async () => {
    const prompts: string[] = [];
    const replies = [ambiguous, envelope('4,879 km', 0.9)];
    const actor = createActor(desk(async (prompt) => (prompts.push(prompt), replies.shift() ?? '')));
    actor.start();
    await waiting(actor);
    expect(prompts).toHaveLength(1);
    actor.send({ type: 'clarify.chose', reading: 'Mercury the planet' });
    const output = (await toPromise(actor)) as CheckpointOutput;
    expect(output.status).toBe('VERIFIED');
    expect(output.clarifications).toEqual([
      { question: 'How big is mercury?', readings: ['Mercury the planet', 'mercury the element'], chosen: 'Mercury the planet', rephrased: null, attempt: 1 },
    ]);
    expect(prompts[1]).toContain(`${CLARIFICATION_MARKER}: they mean "Mercury the planet"`);
    expect(output.trace.map((s) => s.state)).toEqual(['calling', 'parsing', 'ambiguityGate', 'awaitingClarification', 'calling', 'parsing', 'ambiguityGate', 'confidenceGate', 'verified']);
  });

  it("as docs/clarification.md shows: XState's waitFor on the child, the readings off its last attempt, the person's reading sent to the parent", async () => {
    const replies = [ambiguous, envelope('4,879 km', 0.9)];
    const actor = createActor(desk(async () => replies.shift() ?? '')).start();
    const booth = child(actor);
    const waitingNow = await waitFor(booth as Parameters<typeof waitFor>[0], (snapshot) => (snapshot as { value: unknown }).value === 'awaitingClarification');
    const readings = (waitingNow as unknown as { context: CheckpointContext }).context.attempts.at(-1)!.interpretations;
    expect(readings).toEqual(['Mercury the planet', 'mercury the element']);
    actor.send({ type: 'clarify.chose', reading: readings[0]! });
    expect(((await toPromise(actor)) as CheckpointOutput).status).toBe('VERIFIED');
  });

  it('a reading that was not offered, or a blank rephrasing, leaves it waiting; a rephrasing then goes on', async () => {
    const prompts: string[] = [];
    const replies = [ambiguous, envelope('4,879 km', 0.9)];
    const actor = createActor(desk(async (prompt) => (prompts.push(prompt), replies.shift() ?? '')));
    actor.start();
    await waiting(actor);
    actor.send({ type: 'clarify.chose', reading: 'Mercury the god' });
    actor.send({ type: 'clarify.rephrased', question: '   ' });
    expect(child(actor).getSnapshot().value).toBe('awaitingClarification');
    actor.send({ type: 'clarify.rephrased', question: 'What is the diameter of the planet Mercury?' });
    const output = (await toPromise(actor)) as CheckpointOutput;
    expect(output.clarifications.map((c) => c.rephrased)).toEqual(['What is the diameter of the planet Mercury?']);
    expect(prompts).toHaveLength(2);
  });

  it('the guards of the answer: a reading or question that is not text, or a rephrasing over 20 000 characters, leaves it waiting; one of 20 000 goes on', async () => {
    const prompts: string[] = [];
    const replies = [ambiguous, envelope('4,879 km', 0.9)];
    const actor = createActor(desk(async (prompt) => (prompts.push(prompt), replies.shift() ?? ''))).start();
    await waiting(actor);
    for (const event of [
      { type: 'clarify.chose', reading: 0 },
      { type: 'clarify.chose', reading: ['Mercury the planet'] },
      { type: 'clarify.rephrased', question: 42 },
      { type: 'clarify.rephrased', question: 'x'.repeat(MAX_REPHRASED_CHARS + 1) },
    ]) {
      expect(() => child(actor).send(event as never)).not.toThrow();
      expect(child(actor).getSnapshot().value, JSON.stringify(event).slice(0, 60)).toBe('awaitingClarification');
    }
    expect(child(actor).getSnapshot().status).toBe('active');
    actor.send({ type: 'clarify.rephrased', question: 'y'.repeat(MAX_REPHRASED_CHARS) });
    expect(((await toPromise(actor)) as CheckpointOutput).status).toBe('VERIFIED');
    expect(prompts).toHaveLength(2);
  });

  it('clarify.cancelled ends the run AMBIGUOUS with the readings, calling nothing more', async () => {
    const model = vi.fn(async () => ambiguous);
    const actor = createActor(desk(model));
    actor.start();
    await waiting(actor);
    actor.send({ type: 'clarify.cancelled' });
    const output = (await toPromise(actor)) as CheckpointOutput;
    expect(output.status).toBe('AMBIGUOUS');
    expect(output.interpretations).toEqual(['Mercury the planet', 'mercury the element']);
    expect(output.trace.map((s) => s.state).slice(-2)).toEqual(['awaitingClarification', 'ambiguous']);
    expect(model).toHaveBeenCalledTimes(1);
  });

  it('its persisted snapshot, saved while waiting, resumes in a new actor: the answer continues it without repeating the first call', async () => {
    const model = vi.fn(async (prompt: string) => (prompt.includes(CLARIFICATION_MARKER) ? envelope('4,879 km', 0.9) : ambiguous));
    const first = createActor(desk(model));
    first.start();
    await waiting(first);
    // As a database keeps it: JSON text. The process "crashes" here.
    const saved = JSON.stringify(first.getPersistedSnapshot());
    first.stop();
    const restored = createActor(desk(model), { snapshot: JSON.parse(saved) });
    restored.start();
    await waiting(restored);
    restored.send({ type: 'clarify.chose', reading: 'mercury the element' });
    const output = (await toPromise(restored)) as CheckpointOutput;
    expect(output.status).toBe('VERIFIED');
    expect(output.attempts).toHaveLength(2);
    expect(output.clarifications[0]?.chosen).toBe('mercury the element');
    expect(model).toHaveBeenCalledTimes(2);
  });

  it("a call's usage reported while the run waits is the run's, not lost when the next round begins", async () => {
    const replies = [ambiguous, envelope('4,879 km', 0.9)];
    const actor = createActor(desk(async () => replies.shift() ?? ''));
    actor.start();
    await waiting(actor);
    child(actor).send({ type: 'model.usage', attempt: 0, usage: { inputTokens: 1500, outputTokens: 500, totalTokens: 2000, costUsd: null } });
    actor.send({ type: 'clarify.chose', reading: 'Mercury the planet' });
    const output = (await toPromise(actor)) as CheckpointOutput;
    expect(output.usage?.totalTokens).toBe(2000);
  });

  it('clarifies at most maxClarifications times: ambiguous again after that, it ends AMBIGUOUS', async () => {
    const model = vi.fn(async () => ambiguous);
    const booth = clarifyingMachine.provide({ actors: { callModel: modelActor(model) } });
    const actor = createActor(booth, { input: { prompt: 'How big is mercury?', maxClarifications: 1 } });
    actor.start();
    await vi.waitFor(() => expect(actor.getSnapshot().value).toBe('awaitingClarification'));
    actor.send({ type: 'clarify.chose', reading: 'Mercury the planet' });
    const output = await toPromise(actor);
    expect(output.status).toBe('AMBIGUOUS');
    expect(output.clarifications).toHaveLength(1);
    expect(model).toHaveBeenCalledTimes(2);
  });

  it('awaitClarification: false in its input makes it the plain checkpoint: AMBIGUOUS at once', async () => {
    const booth = clarifyingMachine.provide({ actors: { callModel: modelActor(async () => ambiguous) } });
    const output = await toPromise(createActor(booth, { input: { prompt: 'How big is mercury?', awaitClarification: false } }).start());
    expect(output.status).toBe('AMBIGUOUS');
    expect(output.trace.at(-1)?.state).toBe('ambiguous');
  });
});

describe('types for users who embed the machine', () => {
  it('input and output are inferred', () => {
    expectTypeOf<InputFrom<typeof checkpointMachine>>().toEqualTypeOf<CheckpointInput>();
    expectTypeOf<OutputFrom<typeof checkpointMachine>>().toEqualTypeOf<CheckpointOutput>();
    expectTypeOf<CheckpointOutput['status']>().toEqualTypeOf<'VERIFIED' | 'REPAIRED' | 'AMBIGUOUS' | 'UNCERTAIN'>();
  });

  it('tsc catches a bad input in a parent invoke', () => {
    // XState reports a bad invoke input on the whole `invoke` object.
    setup({ actors: { booth: checkpointMachine } }).createMachine({
      // @ts-expect-error `prompt` is required
      invoke: { src: 'booth', input: () => ({ maxRetries: 1 }) },
    });
    setup({ actors: { booth: checkpointMachine } }).createMachine({
      // @ts-expect-error `threshold` is a number
      invoke: { src: 'booth', input: () => ({ prompt: 'q', threshold: 'high' }) },
    });
    setup({ actors: { booth: checkpointMachine } }).createMachine({
      invoke: { src: 'booth', input: () => ({ prompt: 'q', threshold: 0.8 }) },
    });
    createActor(checkpointMachine, { input: { prompt: 'q', effects: 'events' } });
    // @ts-expect-error `effects` is 'actors' or 'events'
    createActor(checkpointMachine, { input: { prompt: 'q', effects: 'magic' } });
    expect(true).toBe(true);
  });
});
