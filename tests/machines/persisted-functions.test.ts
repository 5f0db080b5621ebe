import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { checkpointMachine, withFunctions } from '../../machines/index.js';
import { resultFrom } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';

/**
 * A workflow's snapshot persisted as JSON (a database, a queue) holds no function. A run
 * that was given its own `parseFn` or `agree` must not go on reading or voting by Booth's
 * defaults once restored from it: it stops saying so, and `withFunctions` gives them back.
 */

const native = (text: string) => {
  const [answer, confidence] = text.split('|');
  return { answer: answer!, confidence: Number(confidence) };
};

/** A run of `input` stopped while its first call is out, and its snapshot through JSON. */
function persistedWhileCalling(given: object) {
  const input = { prompt: 'Capital of France?', effects: 'events' as const, ...given };
  const actor = createActor(checkpointMachine, { input }).start();
  const snapshot = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
  actor.stop();
  return snapshot;
}

/** XState's types ask for the input beside a snapshot; a restored actor does not read it. */
const input = { prompt: 'Capital of France?' };

describe('a run restored from a JSON snapshot that lost its functions', () => {
  it('a lost parseFn stops the run with a TypeError saying how to give it back, not a parse failure', async () => {
    const snapshot = persistedWhileCalling({ parseFn: native });
    const restored = createActor(checkpointMachine, { input, snapshot });
    const done = toPromise(restored);
    restored.start();
    restored.send({ type: 'model.replied', reply: 'Paris|0.9' });
    await expect(done).rejects.toThrow(
      new TypeError(
        'This run was started with a `parseFn` of its own, which its persisted snapshot cannot hold (functions do not survive JSON): restore it with withFunctions(snapshot, { parseFn }), or resume it with acheck() and a checkpoint store, which gives it back itself.',
      ),
    );
  });

  it('withFunctions gives it back: the run reads the reply with it, and the saved snapshot is unchanged', async () => {
    const snapshot = persistedWhileCalling({ parseFn: native });
    const before = JSON.stringify(snapshot);
    const restored = createActor(checkpointMachine, { input, snapshot: withFunctions(snapshot, { parseFn: native }) });
    const done = toPromise(restored);
    restored.start();
    restored.send({ type: 'model.replied', reply: 'Paris|0.9' });
    const result = resultFrom(await done);
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toBe('Paris');
    expect(JSON.stringify(snapshot)).toBe(before);
  });

  it('a lost agree stops a sampled run as its first reply is read; given back, the vote uses it', async () => {
    const agree = (a: string, b: string) => a.slice(0, 1) === b.slice(0, 1);
    const snapshot = persistedWhileCalling({ samples: 2, agree, maxRetries: 0 });
    const lost = createActor(checkpointMachine, { input, snapshot });
    const failed = toPromise(lost);
    lost.start();
    lost.send({ type: 'sample.replied', sample: 0, call: 0, reply: envelope('Paris', 0.9) });
    await expect(failed).rejects.toThrow('This run was started with an `agree` of its own');

    const kept = createActor(checkpointMachine, { input, snapshot: withFunctions(snapshot, { agree }) });
    const done = toPromise(kept);
    kept.start();
    kept.send({ type: 'sample.replied', sample: 0, call: 0, reply: envelope('Paris', 0.9) });
    kept.send({ type: 'sample.replied', sample: 1, call: 1, reply: envelope('Pa.', 0.9) });
    const result = resultFrom(await done);
    // By the default (normalized text) they differ; by the caller's agree they are one cluster.
    expect(result.attempts[0]!.clusters).toHaveLength(1);
  });

  it('a run without functions of its own restores from JSON as before', async () => {
    const snapshot = persistedWhileCalling({});
    const restored = createActor(checkpointMachine, { input, snapshot });
    const done = toPromise(restored);
    restored.start();
    restored.send({ type: 'model.replied', reply: envelope('Paris', 0.9) });
    expect(resultFrom(await done).status).toBe('VERIFIED');
  });

  it('withFunctions refuses what is not a snapshot, an unknown name and a non-function, naming each', () => {
    const snapshot = persistedWhileCalling({});
    expect(() => withFunctions({} as never, {})).toThrow(new TypeError("Expected `snapshot` to be a checkpoint machine's persisted snapshot, with context.settings, got an object."));
    expect(() => withFunctions(snapshot, { parse: native } as never)).toThrow(
      new TypeError('Unknown function `parse` for withFunctions(); the functions are `model`, `validator`, `agree`, `parseFn`.'),
    );
    expect(() => withFunctions(snapshot, { parseFn: 'json' as never })).toThrow(new TypeError('Expected `parseFn` to be a function, got "json".'));
  });
});
