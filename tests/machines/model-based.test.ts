import { getShortestPaths } from 'xstate/graph';
import { describe, expect, it } from 'vitest';
import { type CheckpointEvent } from '../../machines/checkpoint/types.js';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { acheck, type AnswerSchema, check, type ClarificationChoice, clarify, memoryStore, type Validator } from '../../src/index.js';
import { forceEngine } from '../../src/engine/engines.js';
import { AMBIGUOUS } from '../../src/decide/constants.js';
import { decided, envelope, type Step } from '../fixtures/helpers.js';

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
const SCHEMA_EVENTS: CheckpointEvent[] = [
  { type: 'schema.returned', result: { value: 'PARIS' } },
  { type: 'schema.returned', result: { issues: [{ message: 'too short', path: [0] }] } },
  { type: 'schema.threw', error: new Error('schema bug') },
];

/** The scripted schema's own description, for the machine's input: only its prompt depends on it. */
const SCRIPTED: AnswerSchema = { '~standard': { version: 1, vendor: 'script', validate: () => ({ value: null }) } };

function finalPaths(maxRetries: number, hasValidator: boolean, hasSchema: boolean) {
  const paths = getShortestPaths(checkpointMachine, {
    input: { prompt: 'Capital of France?', threshold: 0.7, maxRetries, effects: 'events', validator: hasValidator, schema: hasSchema ? SCRIPTED : null },
    events: (snapshot) => {
      if (snapshot.status !== 'active') return [];
      if (snapshot.value === 'calling') return MODEL_EVENTS;
      if (snapshot.value === 'schemaGate') return SCHEMA_EVENTS;
      if (snapshot.value === 'validationGate') return VALIDATOR_EVENTS;
      return [];
    },
  });
  return paths.filter((path) => path.state.status === 'done');
}

/** Turns a path's events into a scripted model, a scripted schema and a scripted validator. */
function scriptOf(events: readonly { type: string }[]) {
  const replies: Step[] = [];
  const verdicts: Array<() => unknown> = [];
  const results: Array<() => unknown> = [];
  for (const event of events as CheckpointEvent[]) {
    if (event.type === 'schema.returned') results.push(() => event.result);
    if (event.type === 'schema.threw') {
      results.push(() => {
        throw event.error;
      });
    }
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
  const validate = () => {
    const next = results.shift();
    if (!next) throw new Error('schema script exhausted');
    return next();
  };
  const schema = { '~standard': { version: 1, vendor: 'script', validate } } as AnswerSchema;
  return { reply, validator: validator as Validator<unknown>, verdicts, schema, results };
}

/** Final paths per maxRetries: 2 ending outcomes per attempt, `retrying` outcomes that continue. */
function expectedFinalPaths(maxRetries: number, retrying: number): number {
  let total = retrying ** (maxRetries + 1);
  for (let k = 0; k <= maxRetries; k += 1) total += 2 * retrying ** k;
  return total;
}

describe('model-based: every path of the checkpoint machine, through both interpreters', () => {
  const checks = [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const;
  for (const [hasValidator, hasSchema] of checks) {
    // Both gates together multiply the paths: two attempts show every combination.
    for (const maxRetries of hasValidator && hasSchema ? [0, 1] : [0, 1, 2]) {
      const name = `${hasValidator ? 'with' : 'without'} a validator${hasSchema ? ', with a schema' : ''}`;
      it(`maxRetries ${maxRetries}, ${name}`, async () => {
        const paths = finalPaths(maxRetries, hasValidator, hasSchema);
        // Without a validator an attempt ends the run 2 ways (accepted, ambiguous) and continues 4;
        // a validator (or a schema) turns the confident and low replies into 3 outcomes each: 2
        // ways end, 8 continue; with both, the confident reply's schema pass meets the validator's
        // 3 outcomes, so 2 ways end and 12 continue.
        const retrying = hasValidator && hasSchema ? 12 : hasValidator || hasSchema ? 8 : 4;
        expect(paths).toHaveLength(expectedFinalPaths(maxRetries, retrying));
        const statuses = new Set<string>();
        for (const path of paths) {
          const events = path.steps.map((step) => step.event);
          const expected = path.state.output;
          if (!expected) throw new Error('final path without output');
          statuses.add(expected.status);

          const options = (script: ReturnType<typeof scriptOf>) => ({
            maxRetries,
            ...(hasValidator ? { validator: script.validator } : {}),
            ...(hasSchema ? { schema: script.schema } : {}),
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
          expect(syncScript.results).toHaveLength(0);
        }
        expect([...statuses].sort()).toEqual(
          maxRetries === 0 ? ['AMBIGUOUS', 'UNCERTAIN', 'VERIFIED'] : ['AMBIGUOUS', 'REPAIRED', 'UNCERTAIN', 'VERIFIED'],
        );
      });
    }
  }
});

/** What may come back for one sample: the outcomes the vote and the gates tell apart. */
const sampleOutcomes = (sample: number, call: number): CheckpointEvent[] => [
  { type: 'sample.replied', sample, call, reply: envelope('Paris', 0.9) },
  { type: 'sample.replied', sample, call, reply: envelope('Lyon', 0.9) },
  { type: 'sample.replied', sample, call, reply: envelope('Paris', 0.2) },
  { type: 'sample.replied', sample, call, reply: 'no json here' },
  { type: 'sample.failed', sample, call, error: new Error('timeout') },
];

describe('model-based: every path of a sampling run, through both interpreters', () => {
  // The paths multiply by five per sample: three samples are walked for one attempt, two for two.
  for (const [samples, maxRetries] of [
    [1, 1],
    [2, 0],
    [2, 1],
    [3, 0],
  ] as const) {
    it(`${samples} sample${samples > 1 ? 's' : ''}, maxRetries ${maxRetries}`, async () => {
      const input = { prompt: 'Capital of France?', maxRetries, effects: 'events', samples, sampleConcurrency: 1 } as const;
      const paths = getShortestPaths(checkpointMachine, {
        input,
        events: (snapshot) => {
          if (snapshot.status !== 'active') return [];
          if (snapshot.value === 'calling') return MODEL_EVENTS;
          if (snapshot.value !== 'sampling') return [];
          const sample = snapshot.context.slots.findIndex((slot) => slot.state === 'calling');
          return sampleOutcomes(sample, snapshot.context.slots[sample]!.call);
        },
      }).filter((path) => path.state.status === 'done');
      const perAttempt = samples === 1 ? 6 : 5 ** samples;
      expect(paths.length).toBeGreaterThanOrEqual(perAttempt);
      const statuses = new Set<string>();
      for (const path of paths) {
        const expected = path.state.output!;
        statuses.add(expected.status);
        // One call at a time, so the calls come in the order of the path's events.
        // The first step is the initial state's, reached by xstate.init.
        const outcomes = path.steps.slice(1).map((step) => step.event as CheckpointEvent);
        const callFn = () => {
          const event = outcomes.shift();
          if (!event) throw new Error('script exhausted');
          if (event.type === 'model.failed' || event.type === 'sample.failed') throw event.error;
          if (event.type === 'model.replied' || event.type === 'sample.replied') return event.reply as string;
          throw new Error(`not a call's outcome: ${event.type}`);
        };
        const all = [...outcomes];
        const sync = check(callFn, 'Capital of France?', { maxRetries, samples });
        outcomes.splice(0, outcomes.length, ...all);
        const async = await acheck(async () => callFn(), 'Capital of France?', { maxRetries, samples, sampleConcurrency: 1 });
        for (const result of [sync, async]) {
          expect(result.status).toBe(expected.status);
          expect(result.trace).toEqual(expected.trace);
          expect(decided(result.attempts)).toEqual(decided(expected.attempts));
          expect(result.prompts).toEqual(expected.prompts);
          expect(result.agreement).toBe(expected.agreement);
        }
      }
      expect(statuses.has('VERIFIED') && statuses.has('UNCERTAIN')).toBe(true);
      if (maxRetries > 0) expect(statuses.has('REPAIRED')).toBe(true);
      if (samples > 1 && maxRetries > 0) {
        expect(paths.some((path) => path.state.output!.prompts.some((p) => p.kind === 'disagreement'))).toBe(true);
      }
    });
  }
});

/** A second ambiguous reply, with readings of its own: choosing 'a' after it is refused, 'c' taken. */
const AMBIGUOUS_AGAIN = modelDone(envelope('', 0.6, { ambiguous: true, interpretations: ['c', 'd'] }));
/**
 * The person's answers in round `round`. A rephrasing says which round it answers: the same
 * words given again to a run kept in a store are the retried call of an answer already given.
 */
const personEvents = (round: number): CheckpointEvent[] => [
  { type: 'clarify.chose', reading: 'a' },
  { type: 'clarify.chose', reading: 'c' },
  { type: 'clarify.rephrased', question: `Capital of the country France? (${round})` },
];

/** A clarify event as the person's choice acheck() and clarify() take: the reading's text, or { rephrased }. */
function choiceOf(event: CheckpointEvent): ClarificationChoice {
  if (event.type === 'clarify.chose') return event.reading;
  if (event.type === 'clarify.rephrased') return { rephrased: event.question };
  throw new Error(`not a choice: ${event.type}`);
}

describe('model-based: every path of a run that waits for its clarification, through a store and through clarify(), on both engines', () => {
  // Paths multiply with every round: three rounds are walked without retries, two with one.
  for (const [maxRetries, maxClarifications] of [
    [0, 1],
    [0, 2],
    [1, 1],
  ] as const) {
    it(`maxRetries ${maxRetries}, maxClarifications ${maxClarifications}`, { timeout: 120_000 }, async () => {
      const input = { prompt: 'Capital of France?', threshold: 0.7, maxRetries, effects: 'events', awaitClarification: true, maxClarifications } as const;
      const paths = getShortestPaths(checkpointMachine, {
        input,
        events: (snapshot) => {
          if (snapshot.status !== 'active') return [];
          if (snapshot.value === 'calling') return [...MODEL_EVENTS, AMBIGUOUS_AGAIN];
          if (snapshot.value === 'awaitingClarification') return personEvents(snapshot.context.clarifications.length + 1);
          return [];
        },
      }).filter((path) => path.state.status === 'done' || path.state.value === 'awaitingClarification');
      const ends = new Set<string>();
      try {
        for (const path of paths) {
          const events = path.steps.slice(1).map((step) => step.event as CheckpointEvent);
          const replies = events.filter((event) => event.type === 'model.replied' || event.type === 'model.failed');
          const choices = events.filter((event) => event.type.startsWith('clarify.')).map(choiceOf);
          const call = async (_prompt: string, { attempt }: { attempt: number }) => {
            const event = replies[attempt];
            if (event === undefined) throw new Error(`script exhausted at attempt ${attempt}`);
            if (event.type === 'model.failed') throw event.error;
            return (event as { reply: string }).reply;
          };
          const waiting = path.state.status === 'active';
          const { context } = path.state;
          // What the machine says the run is: its output once done, or its context while it waits.
          const expected = path.state.output ?? { ...context, status: AMBIGUOUS };
          ends.add(`${String(path.state.value)} after ${context.clarifications.length}`);
          for (const engine of ['stepper', 'actor'] as const) {
            forceEngine(engine);
            const options = { maxRetries, maxClarifications };
            const store = memoryStore();
            const kept = { ...options, checkpoint: store, key: 'k' };
            let durable = await acheck(call, 'Capital of France?', { ...kept, awaitClarification: true });
            for (const clarification of choices) durable = await acheck(call, 'Capital of France?', { ...kept, clarification });
            const results = [durable];
            // Without a store the ambiguous result ends, and clarify() continues it: the same run once it is done.
            if (!waiting) {
              let held = await acheck(call, 'Capital of France?', options);
              for (const choice of choices) held = await clarify(held, choice, call, options);
              results.push(held);
            }
            for (const result of results) {
              expect(result.status).toBe(expected.status);
              expect(result.trace).toEqual(expected.trace);
              expect(decided(result.attempts)).toEqual(decided(expected.attempts));
              expect(result.prompts).toEqual(expected.prompts);
              expect(result.clarifications).toEqual(expected.clarifications);
            }
            // Kept while it waits, deleted once done.
            expect(store.size).toBe(waiting ? 1 : 0);
          }
        }
      } finally {
        forceEngine(null);
      }
      // An ambiguous reply waits while clarifications remain, and ends the run once they are spent.
      for (let n = 0; n < maxClarifications; n += 1) expect(ends).toContain(`awaitingClarification after ${n}`);
      expect(ends).toContain(`ambiguous after ${maxClarifications}`);
      expect([...ends].filter((end) => end.startsWith('ambiguous after') && end !== `ambiguous after ${maxClarifications}`)).toEqual([]);
      expect(ends).toContain(`verified after ${maxClarifications}`);
      expect(ends).toContain(`uncertain after ${maxClarifications}`);
    });
  }
});
