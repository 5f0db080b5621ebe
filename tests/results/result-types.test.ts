import { assign, createActor, setup } from 'xstate';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { checkpointMachine, type CheckpointOutput } from '../../machines/index.js';
import {
  type AcceptedResult,
  acheck,
  type AmbiguousResult,
  type BlockedResult,
  type BoothResult,
  check,
  type CheckResult,
  checkWithEvidence,
  type EvidenceResult,
  resultFrom,
  type UncertainResult,
} from '../../src/index.js';
import { toHtml, toMermaid, toSequence } from '../../src/visualize/index.js';
import { decided, envelope } from '../fixtures/helpers.js';

/** Results narrow by status and by ok, and a workflow's output becomes a result with the same comforts. */

describe('result types narrow', () => {
  it('an ok result has a string answer and a number confidence', () => {
    const result = check(() => envelope('Paris', 0.9), 'q');
    if (result.ok) {
      expectTypeOf(result).toEqualTypeOf<AcceptedResult>();
      expectTypeOf(result.answer).toEqualTypeOf<string>();
      expectTypeOf(result.confidence).toEqualTypeOf<number>();
      expectTypeOf(result.status).toEqualTypeOf<'VERIFIED' | 'REPAIRED'>();
      expectTypeOf(result.unwrap()).toEqualTypeOf<string>();
      const answer: string = result.answer;
      expect(answer).toBe('Paris');
    } else {
      expectTypeOf(result).toEqualTypeOf<AmbiguousResult | UncertainResult>();
      throw new Error('expected an ok result');
    }
  });

  it('status narrows each member', () => {
    const result = check(() => envelope('Mercury', 0.8, { ambiguous: true, interpretations: ['planet', 'element'] }), 'q');
    if (result.status === 'AMBIGUOUS') {
      expectTypeOf(result).toEqualTypeOf<AmbiguousResult>();
      expectTypeOf(result.answer).toEqualTypeOf<string | null>();
      expectTypeOf(result.ambiguous).toEqualTypeOf<true>();
      expectTypeOf(result.unwrap).returns.toBeNever();
      expect(result.interpretations).toEqual(['planet', 'element']);
    } else {
      throw new Error('expected AMBIGUOUS');
    }
    const uncertain = check(() => 'no json', 'q', { maxRetries: 0 });
    if (uncertain.status === 'UNCERTAIN') {
      expectTypeOf(uncertain.answer).toEqualTypeOf<string | null>();
      expectTypeOf(uncertain.confidence).toEqualTypeOf<number | null>();
      expect(uncertain.answer).toBeNull();
    }
  });

  it('check() and acheck() never claim BLOCKED; checkWithEvidence() never REPAIRED or AMBIGUOUS', () => {
    // Each has a second overload for typed answers (tests/api/typed-answers.test.ts); without a schema, this one.
    expectTypeOf(check(() => envelope('Paris', 0.9), 'q')).toEqualTypeOf<CheckResult>();
    expectTypeOf(acheck(() => envelope('Paris', 0.9), 'q')).resolves.toEqualTypeOf<CheckResult>();
    expectTypeOf<CheckResult['status']>().toEqualTypeOf<'VERIFIED' | 'REPAIRED' | 'AMBIGUOUS' | 'UNCERTAIN'>();
    expectTypeOf(checkWithEvidence).returns.toEqualTypeOf<EvidenceResult>();
    expectTypeOf<EvidenceResult['status']>().toEqualTypeOf<'VERIFIED' | 'UNCERTAIN' | 'BLOCKED'>();
    const blocked = checkWithEvidence('Lyon', ['Paris'], () => false);
    if (blocked.status === 'BLOCKED') {
      expectTypeOf(blocked).toEqualTypeOf<BlockedResult>();
      expectTypeOf(blocked.reason).toEqualTypeOf<'EVIDENCE_DISAGREES'>();
      expect(blocked.reason).toBe('EVIDENCE_DISAGREES');
    } else {
      throw new Error('expected BLOCKED');
    }
    expectTypeOf<BoothResult>().toEqualTypeOf<AcceptedResult | AmbiguousResult | UncertainResult | BlockedResult>();
  });
});

describe('resultFrom(output)', () => {
  const replies = [envelope('Lyon', 0.2), envelope('Paris', 0.9)];
  const workflow = setup({
    types: { context: {} as { output?: CheckpointOutput } },
    actors: { booth: checkpointMachine },
  }).createMachine({
    initial: 'checking',
    states: {
      checking: {
        invoke: {
          id: 'booth',
          src: 'booth',
          input: { prompt: 'Capital of France?', effects: 'events' },
          onDone: { target: 'done', actions: assign({ output: ({ event }) => event.output }) },
        },
      },
      done: { type: 'final' },
    },
  });

  /** The same question through check() and through a parent workflow that sends the replies. */
  function outputOfWorkflow(): CheckpointOutput {
    const actor = createActor(workflow);
    actor.start();
    // effects: 'events' — the workflow's own code calls the model and sends the replies.
    for (const reply of replies) actor.getSnapshot().children.booth?.send({ type: 'model.replied', reply });
    const output = actor.getSnapshot().context.output;
    if (!output) throw new Error('the workflow did not finish');
    return output;
  }

  it("gives a parent workflow's output ok, method and unwrap(), equal to check()'s result", () => {
    const output = outputOfWorkflow();
    const result = resultFrom(output);
    expectTypeOf(result).toEqualTypeOf<CheckResult>();
    expect(result.ok).toBe(true);
    expect(result.method).toBe('confidence');
    expect(result.unwrap()).toBe('Paris');
    const direct = check((_p, { attempt }) => replies[attempt] ?? '', 'Capital of France?');
    expect(decided(result)).toEqual(decided(direct));
  });

  it('an output saved before usage and time were kept reads as unknown usage, its time the attempts\' summed, and draws', async () => {
    const saved = JSON.parse(JSON.stringify(outputOfWorkflow())) as Record<string, unknown> & { attempts: Array<Record<string, unknown>> };
    delete saved['usage'];
    delete saved['durationMs'];
    for (const attempt of saved.attempts) delete attempt['usage'];
    const result = resultFrom(saved as unknown as CheckpointOutput);
    expect(result.usage).toBeNull();
    expect(result.durationMs).toBe(result.attempts.reduce((sum, attempt) => sum + attempt.durationMs, 0));
    const html = await toHtml(saved as unknown as CheckpointOutput);
    expect(html).toContain('REPAIRED');
    expect(html).not.toMatch(/>tokens</);
  });

  it('every boothjs/visualize function takes the output as it takes a result', async () => {
    const output = outputOfWorkflow();
    const result = resultFrom(output);
    expect(toMermaid(output)).toBe(toMermaid(result));
    expect(toSequence(output)).toBe(toSequence(result));
    expect(await toHtml(output)).toBe(await toHtml(result));
  });

  it('refuses anything that is not a checkpoint output, naming it', () => {
    expect(() => resultFrom({ status: 'DONE' } as never)).toThrow(
      /Expected `output` to be the checkpoint machine's output \(event\.output in an invoke's onDone\), got an object/,
    );
    expect(() => resultFrom(undefined as never)).toThrow(TypeError);
  });
});
