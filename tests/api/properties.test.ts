import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { acheck, type BoothResult, check, type Validator } from '../../src/index.js';
import { decided, scripted, type Step } from '../fixtures/helpers.js';

/** Anything a model might send back, or do instead. */
const jsonish = fc.oneof(
  fc.string(),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string(), { maxKeys: 2 }),
);

const envelopeReply = fc
  .record(
    {
      ambiguous: fc.oneof(fc.boolean(), fc.constantFrom('true', 'FALSE', 'maybe'), jsonish),
      interpretations: fc.oneof(fc.array(jsonish, { maxLength: 3 }), jsonish),
      chosen_interpretation: jsonish,
      answer: fc.oneof(fc.string(), fc.constantFrom('', ' ', 'Paris'), jsonish),
      confidence: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.double(), fc.constantFrom('0.9', '1e-3', ' .5 ', ''), jsonish),
    },
    { requiredKeys: [] },
  )
  .chain((object) =>
    fc.constantFrom(
      JSON.stringify(object),
      `Sure:\n\`\`\`json\n${JSON.stringify(object, null, 2)}\n\`\`\``,
      `{"result": ${JSON.stringify(object)}}`,
      `${JSON.stringify(object)} trailing {`,
    ),
  );

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: envelopeReply },
  { weight: 2, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom('{', '}', '"', ':', ',', '[', ']', '\\', 'a', '1', ' ') }) },
  { weight: 1, arbitrary: fc.oneof(fc.string(), fc.constant(null), fc.integer()).map((e) => ({ throws: e })) },
  { weight: 1, arbitrary: fc.constant({ throws: new TypeError('network down') }) },
  { weight: 1, arbitrary: jsonish.filter((v) => typeof v !== 'string').map((returns) => ({ returns })) },
);

const scenario = fc.record({
  steps: fc.array(step, { minLength: 1, maxLength: 5 }),
  maxRetries: fc.integer({ min: 0, max: 4 }),
  threshold: fc.double({ min: 0, max: 1, noNaN: true }),
  validate: fc.constantFrom('none', 'even length', 'throws', 'invalid'),
});

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

const VALIDATORS: Record<string, Validator | undefined> = {
  none: undefined,
  'even length': (answer) => answer.length % 2 === 0 || [false, 'odd length'],
  throws: () => {
    throw new Error('validator bug');
  },
  invalid: () => 'yes' as unknown as boolean,
};

function options(s: Scenario) {
  return { maxRetries: s.maxRetries, threshold: s.threshold, validator: VALIDATORS[s.validate] };
}

/** A script long enough for every attempt: the steps, repeated. */
function script(steps: Step[], maxRetries: number) {
  return scripted(Array.from({ length: maxRetries + 1 }, (_, i) => steps[i % steps.length] as Step));
}

function expectInvariants(result: BoothResult, maxRetries: number, threshold: number) {
  expect(result.ok).toBe(result.status === 'VERIFIED' || result.status === 'REPAIRED');
  expect(result.nAttempts).toBeGreaterThanOrEqual(1);
  expect(result.nAttempts).toBeLessThanOrEqual(maxRetries + 1);
  expect(result.status).not.toBe('BLOCKED');
  if (result.ok) {
    expect(result.confidence).toBeGreaterThanOrEqual(threshold);
    expect(result.attempts.at(-1)?.passedValidation).toBe(true);
    expect(result.status === 'VERIFIED').toBe(result.nAttempts === 1);
  }
  if (result.status === 'AMBIGUOUS') expect(result.attempts.at(-1)?.ambiguous).toBe(true);
  if (result.status === 'UNCERTAIN') expect(result.nAttempts).toBe(maxRetries + 1);
  // method is consistent with the attempts
  const last = result.attempts.at(-1);
  const expectedMethod =
    result.status === 'AMBIGUOUS'
      ? 'ambiguity'
      : result.attempts.every((a) => a.callFailed)
        ? 'call_failure'
        : result.attempts.every((a) => !a.parseOk)
          ? 'parse_failure'
          : last?.passedValidation === false
            ? 'validation'
            : 'confidence';
  expect(result.method).toBe(expectedMethod);
  // the trace starts by calling attempt 0 and ends in the final state named by the status
  expect(result.trace[0]).toEqual({ state: 'calling', attempt: 0 });
  expect(result.trace.at(-1)?.state).toBe(result.status.toLowerCase());
  expect(result.trace.filter((s) => s.state === 'calling')).toHaveLength(result.nAttempts);
}

describe('properties over arbitrary model behaviour', () => {
  it('check() never throws, and the result invariants hold', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const result = check(script(s.steps, s.maxRetries).sync, 'q', options(s));
        expectInvariants(result, s.maxRetries, s.threshold);
      }),
      { numRuns: 400 },
    );
  });

  it('check() and acheck() agree exactly', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const sync = check(script(s.steps, s.maxRetries).sync, 'q', options(s));
        const async = await acheck(script(s.steps, s.maxRetries).async, 'q', options(s));
        expect(decided(async)).toEqual(decided(sync));
      }),
      { numRuns: 300 },
    );
  });

  it('the parser never throws on arbitrary text, and an accepted answer meets the rules', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), envelopeReply, fc.string({ unit: 'binary' })), (text) => {
        const result = check(() => text, 'q', { maxRetries: 0, threshold: 0 });
        const [attempt] = result.attempts;
        if (attempt?.parseOk) {
          expect(attempt.confidence).toBeGreaterThanOrEqual(0);
          expect(attempt.confidence).toBeLessThanOrEqual(1);
          expect(attempt.ambiguous || (attempt.answer ?? '').trim() !== '').toBe(true);
        } else {
          expect(attempt?.error).toEqual(expect.any(String));
        }
      }),
      { numRuns: 1000 },
    );
  });
});
