// A core test for every runtime: vitest, xstate and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import { assign, createActor, setup, toPromise } from 'xstate';
import { check, resultFrom } from 'boothjs';
import { type CheckpointOutput, checkpointMachine, modelActor, validatorActor, withFunctions } from 'boothjs/machine';
import { envelope } from 'boothjs/testing';

type Model = (prompt: string, info: { attempt: number }) => Promise<string>;

/** A parent workflow that publishes accepted answers and escalates the rest. */
const publisher = setup({
  types: {
    input: {} as { question: string; model: Model },
    context: {} as { question: string; model: Model; result?: CheckpointOutput; error?: unknown },
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
        onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
      },
    },
    published: { type: 'final' },
    escalated: { type: 'final' },
    failed: { type: 'final' },
  },
});

/** Runs the publisher to its end: the state it ended in and its context. */
async function publish(question: string, model: Model) {
  const actor = createActor(publisher, { input: { question, model } });
  const done = toPromise(actor);
  actor.start();
  await done;
  const snapshot = actor.getSnapshot();
  return { state: snapshot.value, context: snapshot.context };
}

describe('the checkpoint machine in a parent workflow', () => {
  it('a parent invokes it with a model function and gets the result in onDone', async () => {
    const calls: number[] = [];
    const { state, context } = await publish('Capital of France?', async (_prompt, { attempt }) => {
      calls.push(attempt);
      return envelope(attempt === 0 ? 'Lyon' : 'Paris', attempt === 0 ? 0.2 : 0.9);
    });
    expect(state).toBe('published');
    expect(context.result?.status).toBe('REPAIRED');
    expect(context.result?.answer).toBe('Paris');
    expect(context.result?.trace.map((step) => step.state)).toContain('reconsidering');
    expect(calls).toEqual([0, 1]);
  });

  it('a run the checkpoint rejects takes the parent\'s other branch', async () => {
    const { state, context } = await publish('Capital of France?', async () => envelope('Lyon', 0.1));
    expect(state).toBe('escalated');
    expect(context.result?.status).toBe('UNCERTAIN');
  });

  it('a bad input reaches the parent\'s onError before any model call', async () => {
    let calls = 0;
    const { state, context } = await publish(42 as never, async () => {
      calls += 1;
      return envelope('Paris', 0.9);
    });
    expect(state).toBe('failed');
    expect(context.error).toBeInstanceOf(TypeError);
    expect(calls).toBe(0);
  });

  it('resultFrom(event.output) is the result check() gives for the same replies', async () => {
    const replies = [envelope('Lyon', 0.2), envelope('Paris', 0.9)];
    const { context } = await publish('Capital of France?', async (_prompt, { attempt }) => replies[attempt] ?? '');
    const result = resultFrom(context.result!);
    const direct = check((_prompt, { attempt }) => replies[attempt] ?? '', 'Capital of France?');
    expect(result.ok).toBe(true);
    expect(result.method).toBe('confidence');
    expect(result.unwrap()).toBe('Paris');
    expect(result.status).toBe(direct.status);
    expect(result.trace).toEqual(direct.trace);
    expect(result.prompts).toEqual(direct.prompts);
    expect(result.attempts.map((attempt) => attempt.rawText)).toEqual(direct.attempts.map((attempt) => attempt.rawText));
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
    expect(output.answer).toBe('1989');
    expect(output.attempts.map((attempt) => attempt.validationError)).toEqual(['four digits', null]);
  });

  it('with effects: "events" the workflow\'s own code sends the replies', () => {
    const actor = createActor(checkpointMachine, { input: { prompt: 'Capital of France?', effects: 'events' } }).start();
    expect(actor.getSnapshot().value).toBe('calling');
    actor.send({ type: 'model.replied', reply: 'junk' });
    expect(actor.getSnapshot().value).toBe('calling');
    actor.send({ type: 'model.replied', reply: envelope('Paris', 0.9) });
    const snapshot = actor.getSnapshot();
    expect(snapshot.status).toBe('done');
    expect(snapshot.output?.status).toBe('REPAIRED');
    expect(snapshot.output?.attempts[0]?.parseOk).toBe(false);
  });

  it('a run persisted as JSON mid-call resumes once its functions are given back', async () => {
    const parseFn = (text: string) => {
      const [answer, confidence] = text.split('|');
      return { answer: answer!, confidence: Number(confidence) };
    };
    const input = { prompt: 'Capital of France?', effects: 'events' as const, parseFn };
    const first = createActor(checkpointMachine, { input }).start();
    const saved = JSON.stringify(first.getPersistedSnapshot());
    first.stop();

    const snapshot = JSON.parse(saved) as ReturnType<typeof first.getPersistedSnapshot>;
    const restored = createActor(checkpointMachine, { input, snapshot: withFunctions(snapshot, { parseFn }) });
    const done = toPromise(restored);
    restored.start();
    restored.send({ type: 'model.replied', reply: 'Paris|0.9' });
    const result = resultFrom(await done);
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toBe('Paris');
    expect(JSON.stringify(snapshot)).toBe(saved);
  });
});
