// A core test for every runtime: vitest and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import { createActor, forwardTo, setup, toPromise } from 'xstate';
import { acheck, CLARIFICATION_MARKER, clarify, memoryStore } from 'boothjs';
import { type CheckpointOutput, clarifyingMachine, modelActor } from 'boothjs/machine';
import { envelope, scriptedModel } from 'boothjs/testing';

const QUESTION = 'How big is Mercury?';
const READINGS = ['Mercury the planet', 'mercury the element'];
const ambiguous = envelope('4,879 km', 0.8, { ambiguous: true, interpretations: READINGS, chosen_interpretation: READINGS[0]! });

describe('clarifying an AMBIGUOUS question', () => {
  it('clarify() asks again with the reading chosen, and the result holds both rounds', async () => {
    const model = scriptedModel([ambiguous, envelope('4,879 km', 0.9)]);
    const first = await acheck(model.async, QUESTION);
    const result = await clarify(first, 0, model.async);
    expect(result.status).toBe('VERIFIED');
    expect(result.prompts.map((p) => p.kind)).toEqual(['first', 'clarification']);
    expect(model.prompts[1]).toContain(`${CLARIFICATION_MARKER}: they mean "Mercury the planet"`);
    expect(result.clarification).toEqual({ question: QUESTION, readings: READINGS, chosen: READINGS[0], rephrased: null, attempt: 1 });
    await expect(clarify(first, 'Mercury the god', model.async)).rejects.toThrow(TypeError);
  });

  it('a run waits in a store for its clarification, and a later acheck() with it goes on', async () => {
    const store = memoryStore();
    const model = scriptedModel([ambiguous, envelope('4,879 km', 0.9)]);
    const waiting = await acheck(model.async, QUESTION, { checkpoint: store, key: 'k', awaitClarification: true });
    expect(waiting.status).toBe('AMBIGUOUS');
    expect(waiting.trace.at(-1)?.state).toBe('awaitingClarification');
    const answered = await acheck(model.async, QUESTION, { checkpoint: store, key: 'k', clarification: { rephrased: 'The diameter of the planet?' } });
    expect(answered.status).toBe('VERIFIED');
    expect(model.prompts).toHaveLength(2);
    expect(await store.load('k')).toBeUndefined();
  });

  it('clarifyingMachine waits in a parent workflow; its persisted snapshot resumes and the forwarded answer continues it', async () => {
    let calls = 0;
    const booth = clarifyingMachine.provide({ actors: { callModel: modelActor(async (prompt) => ((calls += 1), prompt.includes(CLARIFICATION_MARKER) ? envelope('4,879 km', 0.9) : ambiguous)) } });
    const desk = setup({ actors: { booth } }).createMachine({
      initial: 'asking',
      states: { asking: { invoke: { id: 'booth', src: 'booth', input: { prompt: QUESTION }, onDone: 'answered' }, on: { 'clarify.*': { actions: forwardTo('booth') } } }, answered: { type: 'final' } },
    });
    const child = (actor: { getSnapshot(): { children: object } }) => (actor.getSnapshot().children as Record<string, { getSnapshot(): { value: unknown; output?: unknown } }>)['booth']!;
    const first = createActor(desk).start();
    await new Promise<void>((resolve) => {
      const poll = () => (child(first).getSnapshot().value === 'awaitingClarification' ? resolve() : setTimeout(poll, 1));
      poll();
    });
    const saved = JSON.stringify(first.getPersistedSnapshot());
    first.stop();
    const restored = createActor(desk, { snapshot: JSON.parse(saved) }).start();
    const booth2 = child(restored);
    restored.send({ type: 'clarify.chose', reading: 'mercury the element' });
    await toPromise(restored);
    const output = booth2.getSnapshot().output as CheckpointOutput;
    expect(output.status).toBe('VERIFIED');
    expect(output.clarifications.map((c) => c.chosen)).toEqual(['mercury the element']);
    expect(calls).toBe(2);
  });
});
