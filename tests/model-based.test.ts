import { getShortestPaths } from 'xstate/graph';
import { describe, expect, it } from 'vitest';
import { type CheckpointEvent, checkpointMachine } from '../machines/checkpoint.js';
import { acheck, check, type Validator } from '../src/index.js';
import { decided, envelope, type Step } from './helpers.js';

/**
 * Model-based tests: enumerate the machine's paths with XState's graph utilities, one
 * sample event per guard outcome, then replay every path that ends in a final state
 * through check() and acheck(). The interpreters must reach the same final state, with
 * the same trace and attempts, as the pure transitions did.
 */

const modelDone = (reply: unknown): CheckpointEvent => ({ type: 'model.replied', reply });
const modelError = (error: unknown): CheckpointEvent => ({ type: 'model.failed', error });
const validatorDone = (value: unknown): CheckpointEvent => ({ type: 'validator.returned', value });
const validatorError = (error: unknown): CheckpointEvent => ({ type: 'validator.threw', error });

const MODEL_EVENTS: CheckpointEvent[] = [
  modelDone(envelope('Paris', 0.9)), // confident
  modelDone(envelope('Paris', 0.2)), // low confidence
  modelDone(envelope('', 0.6, { ambiguous: true, interpretations: ['a', 'b'] })), // ambiguous
  modelDone('no json here'), // parse failure
  modelDone(null), // non-string return
  modelError(new Error('timeout')), // failed call
];
const VALIDATOR_EVENTS: CheckpointEvent[] = [validatorDone(true), validatorDone([false, 'rejected']), validatorError(new Error('bug'))];

function finalPaths(maxRetries: number, hasValidator: boolean) {
  const paths = getShortestPaths(checkpointMachine, {
    input: { prompt: 'Capital of France?', threshold: 0.7, maxRetries, effects: 'events', validator: hasValidator },
    events: (snapshot) => {
      if (snapshot.status !== 'active') return [];
      if (snapshot.value === 'calling') return MODEL_EVENTS;
      if (snapshot.value === 'validationGate') return VALIDATOR_EVENTS;
      return [];
    },
  });
  return paths.filter((path) => path.state.status === 'done');
}

/** Turns a path's events into a scripted model and a scripted validator. */
function scriptOf(events: readonly { type: string }[]) {
  const replies: Step[] = [];
  const verdicts: Array<() => unknown> = [];
  for (const event of events as CheckpointEvent[]) {
    if (event.type === 'model.replied') replies.push({ returns: event.reply });
    if (event.type === 'model.failed') replies.push({ throws: event.error });
    if (event.type === 'validator.returned') verdicts.push(() => event.value);
    if (event.type === 'validator.threw') {
      verdicts.push(() => {
        throw event.error;
      });
    }
  }
  const reply = (index: number) => {
    const step = replies[index];
    if (!step || typeof step === 'string' || 'then' in step) throw new Error('script exhausted');
    if ('throws' in step) throw step.throws;
    return step.returns as string;
  };
  const validator = () => {
    const next = verdicts.shift();
    if (!next) throw new Error('validator script exhausted');
    return next();
  };
  return { reply, validator: validator as Validator, verdicts };
}

/** Final paths per maxRetries: 2 ending outcomes per attempt, `retrying` outcomes that continue. */
function expectedFinalPaths(maxRetries: number, retrying: number): number {
  let total = retrying ** (maxRetries + 1);
  for (let k = 0; k <= maxRetries; k += 1) total += 2 * retrying ** k;
  return total;
}

describe('model-based: every path of the checkpoint machine, through both interpreters', () => {
  for (const hasValidator of [false, true]) {
    for (const maxRetries of [0, 1, 2]) {
      it(`maxRetries ${maxRetries}, ${hasValidator ? 'with' : 'without'} a validator`, async () => {
        const paths = finalPaths(maxRetries, hasValidator);
        // Without a validator an attempt ends the run 2 ways (accepted, ambiguous) and continues 4;
        // a validator turns the confident and low replies into 3 outcomes each: 2 ways end, 8 continue.
        expect(paths).toHaveLength(expectedFinalPaths(maxRetries, hasValidator ? 8 : 4));
        const statuses = new Set<string>();
        for (const path of paths) {
          const events = path.steps.map((step) => step.event);
          const expected = path.state.output;
          if (!expected) throw new Error('final path without output');
          statuses.add(expected.status);

          const options = (script: ReturnType<typeof scriptOf>) => ({
            maxRetries,
            ...(hasValidator ? { validator: script.validator } : {}),
          });
          const syncScript = scriptOf(events);
          const sync = check((_, { attempt }) => syncScript.reply(attempt), 'Capital of France?', options(syncScript));
          const asyncScript = scriptOf(events);
          const async = await acheck(
            async (_, { attempt }) => asyncScript.reply(attempt),
            'Capital of France?',
            options(asyncScript),
          );

          for (const result of [sync, async]) {
            expect(result.status).toBe(expected.status);
            expect(result.trace).toEqual(expected.trace);
            expect(decided(result.attempts)).toEqual(decided(expected.attempts));
            expect(result.prompts).toEqual(expected.prompts);
            expect(result.answer).toBe(expected.answer);
          }
          expect(syncScript.verdicts).toHaveLength(0);
        }
        expect([...statuses].sort()).toEqual(
          maxRetries === 0 ? ['AMBIGUOUS', 'UNCERTAIN', 'VERIFIED'] : ['AMBIGUOUS', 'REPAIRED', 'UNCERTAIN', 'VERIFIED'],
        );
      });
    }
  }
});
