import { assign, createActor, setup, toPromise } from 'xstate';
import { describe, expect, it, vi } from 'vitest';
import { checkpointMachine, modelActor } from '../../machines/index.js';
import { acheck } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';

/** The machine users embed refuses a bad input as check() refuses bad options: same checks, same words. */

/** Starts the machine alone and returns the error it stopped with, if any. */
function startError(input: unknown): unknown {
  const actor = createActor(checkpointMachine, { input: input as never });
  let reported: unknown;
  actor.subscribe({ error: (error) => (reported = error) });
  actor.start();
  expect(actor.getSnapshot().status).toBe(reported === undefined ? 'active' : 'error');
  actor.stop();
  return reported;
}

const model = async () => envelope('Paris', 0.9);

describe('the checkpoint machine checks its input when it starts', () => {
  it('a root actor observed before it starts rejects its promise with the error, as docs/embedding.md says', async () => {
    const actor = createActor(checkpointMachine, { input: { prompt: 'q', maxRetry: 2 } as never });
    const done = toPromise(actor);
    actor.start();
    await expect(done).rejects.toThrow("Unknown option `maxRetry` for the checkpoint machine's `input`; did you mean `maxRetries`?");
  });

  const bad: Array<[string, Record<string, unknown>, typeof TypeError | typeof RangeError, RegExp]> = [
    ['a negative maxRetries', { maxRetries: -1 }, RangeError, /`maxRetries` to be 0 or more, got -1/],
    ['a fractional maxRetries', { maxRetries: 1.5 }, TypeError, /`maxRetries` to be a whole number .* got 1\.5/],
    ['a maxRetries above 100', { maxRetries: 1e9 }, RangeError, /`maxRetries` to be at most 100, got 1000000000/],
    ['a threshold above 1', { threshold: 5 }, RangeError, /`threshold` to be from 0 to 1, got 5/],
    ['a threshold that is a string', { threshold: 'abc' }, TypeError, /`threshold` to be a number from 0 to 1, got "abc"/],
    ['a misspelt option', { thresh: 0.5 }, TypeError, /Unknown option `thresh` .*did you mean `threshold`\?/],
    ['a zero timeout', { timeoutMs: 0 }, RangeError, /`timeoutMs` to be more than 0/],
    ['a callRetries.minDelayMs above its maxDelayMs', { callRetries: { retries: 1, minDelayMs: 5_000, maxDelayMs: 100 } }, RangeError, /`callRetries.minDelayMs` \(5000\) to be at most `callRetries.maxDelayMs` \(100\)/],
  ];
  for (const [what, options, type, message] of bad) {
    it(`${what} stops the actor with the same ${type.name} acheck() rejects with`, async () => {
      const error = startError({ prompt: 'q', model, ...options });
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
      const fromCheck = await acheck(async () => envelope('x', 0.9), 'q', options).catch((rejection: Error) => rejection);
      expect((error as Error).message).toBe((fromCheck as Error).message.replace('for acheck()', "for the checkpoint machine's `input`"));
    });
  }

  it('a cascade with two models named alike stops the actor with the TypeError check() throws', () => {
    const error = startError({ prompt: 'q', model, modelName: 'gpt', escalate: [{ name: 'gpt' }] });
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe(
      'Expected each model of `escalate` to have a name of its own, got `escalate[0].name` named as `modelName`: attempts and `result.models` tell models apart by name, so name them apart.',
    );
  });

  it('an input without a prompt names `prompt` instead of crashing on it', () => {
    const error = startError({ model });
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('Expected `prompt` to be a string, got undefined.');
  });

  it('no input at all says what the input must be', () => {
    expect((startError(undefined) as Error).message).toMatch(/checkpoint machine's `input` to be a plain object .* got undefined/);
    expect((startError(null) as Error).message).toMatch(/checkpoint machine's `input` to be a plain object .* got null/);
  });

  it('a model or validator that is not a function is a TypeError naming it', () => {
    expect((startError({ prompt: 'q', model: 'gpt' }) as Error).message).toBe(
      'Expected `model` to be a function, null or undefined, got "gpt".',
    );
    expect((startError({ prompt: 'q', model, validator: 'strict' }) as Error).message).toBe(
      'Expected `validator` to be a function, null or undefined, got "strict".',
    );
  });

  it('an acheck()-only option is unknown to the machine, without pointing to acheck()', () => {
    expect((startError({ prompt: 'q', model, key: 'run-1' }) as Error).message).toBe(
      "Unknown option `key` for the checkpoint machine's `input`; the options are `prompt`, `threshold`, `maxRetries`, `effects`, `model`, `schema`, `validator`, `timeoutMs`, `deadlineMs`, `callRetries`, `samples`, `sampleConcurrency`, `agree`, `confidenceFrom`, `system`, `messages`, `instructions`, `parseFn`, `awaitClarification`, `maxClarifications`, `modelName`, `escalate`, `budget`.",
    );
  });

  it('an unknown effects mode names the two there are', () => {
    expect((startError({ prompt: 'q', model, effects: 'sync' }) as Error).message).toMatch(/'actors' .* or 'events' .* got "sync"/);
  });

  it('a workflow without a model is an error at start, not a run of failed attempts', () => {
    const error = startError({ prompt: 'q' });
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^No model: .*pass `model: .*provide a `callModel` actor/);
  });

  it('validator: true without a validate actor is an error at start', () => {
    expect((startError({ prompt: 'q', model, validator: true }) as Error).message).toMatch(/^No validator: .*validatorActor/);
  });

  it('a provided callModel actor, or effects: events, needs no model in the input', () => {
    const provided = checkpointMachine.provide({ actors: { callModel: modelActor(model) } });
    const actor = createActor(provided, { input: { prompt: 'q' } });
    actor.subscribe({ error: () => {} });
    actor.start();
    expect(actor.getSnapshot().status).toBe('active');
    actor.stop();
    expect(startError({ prompt: 'q', effects: 'events' })).toBeUndefined();
  });

  it('a valid input starts as before', () => {
    expect(startError({ prompt: 'q', model, threshold: 0.5, maxRetries: 100, validator: () => true, timeoutMs: 10 })).toBeUndefined();
  });
});

describe('a parent workflow receives a bad input in onError', () => {
  const parent = setup({
    types: { input: {} as { childInput: unknown }, context: {} as { childInput: unknown; error?: unknown } },
    actors: { booth: checkpointMachine },
  }).createMachine({
    context: ({ input }) => ({ childInput: input.childInput }),
    initial: 'checking',
    states: {
      checking: {
        invoke: {
          src: 'booth',
          input: ({ context }) => context.childInput as never,
          onDone: 'done',
          onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
        },
      },
      done: { type: 'final' },
      failed: { type: 'final' },
    },
  });

  for (const [what, childInput, message] of [
    ['maxRetries: -1', { prompt: 'q', model, maxRetries: -1 }, /`maxRetries` to be 0 or more/],
    ['no prompt', { model }, /`prompt` to be a string/],
    ['no model', { prompt: 'q' }, /^No model/],
  ] as const) {
    it(`${what}: onError fires with the error and no model is called`, () => {
      const called = vi.fn(model);
      const input = 'model' in childInput ? { ...childInput, model: called } : childInput;
      const actor = createActor(parent, { input: { childInput: input } });
      actor.subscribe({ error: () => {} });
      actor.start();
      const snapshot = actor.getSnapshot();
      expect(snapshot.value).toBe('failed');
      expect((snapshot.context.error as Error).message).toMatch(message);
      expect(called).not.toHaveBeenCalled();
    });
  }
});
