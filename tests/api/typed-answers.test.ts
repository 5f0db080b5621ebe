import { type } from 'arktype';
import * as v from 'valibot';
import { createActor, fromPromise, toPromise } from 'xstate';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { z } from 'zod';
import { type CheckpointOutput, checkpointMachine, type SchemaRequest } from '../../machines/index.js';
import {
  type Attempt,
  acheck,
  type AnswerSchema,
  check,
  type JsonValue,
  memoryStore,
  resultFrom,
  type TypedCheckOptions,
  type TypedCheckResult,
} from '../../src/index.js';
import { INSTRUCTIONS } from '../../src/decide/prompts.js';
import { envelope, scripted } from '../fixtures/helpers.js';

/**
 * Typed answers: with a Standard Schema, the model may answer with any JSON value, the
 * schema's output is the answer, and the schema's issues make a validation retry.
 */

const City = z.object({ city: z.string(), population: z.number() });
const tokyo = { city: 'Tokyo', population: 37_400_000 };

describe('a schema types the answer', () => {
  it('with zod: the answer is the parsed object, typed', () => {
    const result = check(() => envelope(tokyo, 0.9), 'Largest city in Japan?', { schema: City });
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toEqual(tokyo);
    if (result.ok) {
      expectTypeOf(result.answer).toEqualTypeOf<{ city: string; population: number }>();
      expectTypeOf(result.unwrap()).toEqualTypeOf<{ city: string; population: number }>();
    }
    expect(result.attempts[0]).toMatchObject({ answer: tokyo, passedValidation: true, validationError: null, schemaIssues: null });
    expect(result.settings?.schema).toBe(true);
  });

  it('with valibot and arktype too', async () => {
    const valibot = await acheck(async () => envelope(tokyo, 0.9), 'q', {
      schema: v.object({ city: v.string(), population: v.number() }),
    });
    expect(valibot.answer).toEqual(tokyo);
    if (valibot.ok) expectTypeOf(valibot.answer).toEqualTypeOf<{ city: string; population: number }>();
    const ark = check(() => envelope(tokyo, 0.9), 'q', { schema: type({ city: 'string', population: 'number' }) });
    expect(ark.answer).toEqual(tokyo);
    if (ark.ok) expectTypeOf(ark.answer).toEqualTypeOf<{ city: string; population: number }>();
  });

  it("the schema's output is the answer; the model's value stays in parsed", () => {
    const Shouted = z.string().transform((s) => s.toUpperCase());
    const result = check(() => envelope('paris', 0.9), 'q', { schema: Shouted });
    expect(result.answer).toBe('PARIS');
    expect(result.parsed?.['answer']).toBe('paris');
    const Count = z.array(z.string()).transform((list) => list.length);
    const counted = check(() => envelope(['a', 'b', 'c'], 0.9), 'q', { schema: Count });
    expect(counted.answer).toBe(3);
    if (counted.ok) expectTypeOf(counted.answer).toEqualTypeOf<number>();
  });

  it('any JSON value may answer, even an empty string, but not null', () => {
    expect(check(() => envelope(42, 0.9), 'q', { schema: z.number() }).answer).toBe(42);
    expect(check(() => envelope('', 0.9), 'q', { schema: z.string() }).status).toBe('VERIFIED');
    const absent = check(() => envelope(null, 0.9), 'q', { schema: z.null(), maxRetries: 0 });
    expect(absent.attempts[0]?.error).toBe('"answer" is missing or null; the object needs both "answer" and "confidence"');
  });

  it('without a schema an object answer is still refused, as before', () => {
    const result = check(() => envelope(tokyo, 0.9), 'q', { maxRetries: 0 });
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts[0]?.error).toBe('"answer" must be a string, number or boolean, not an object');
  });
});

describe('a wrong shape is a validation failure, repaired through a retry naming the issues', () => {
  it('the retry prompt lists each issue as path: message', () => {
    const model = scripted([envelope({ city: 'Tokyo', population: 'many' }, 0.9), envelope(tokyo, 0.9)]);
    const result = check(model.sync, 'Largest city in Japan?', { schema: City });
    expect(result.status).toBe('REPAIRED');
    expect(result.answer).toEqual(tokyo);
    const [first] = result.attempts;
    expect(first).toMatchObject({ parseOk: true, answer: null, passedValidation: false });
    expect(first?.parsed?.['answer']).toEqual({ city: 'Tokyo', population: 'many' });
    expect(first?.schemaIssues).toEqual([{ path: 'answer.population', message: 'Invalid input: expected number, received string' }]);
    expect(first?.validationError).toBe('answer.population: Invalid input: expected number, received string');
    expect(result.prompts.map((p) => p.kind)).toEqual(['first', 'validation']);
    expect(model.prompts[1]).toContain(
      'Your previous answer was {"city":"Tokyo","population":"many"}. It failed validation: answer.population: Invalid input: expected number, received string. Give a corrected answer.',
    );
  });

  it('nested paths and array indices, at most ten issues, no message longer than 200 characters', () => {
    const Team = z.object({ members: z.array(z.object({ name: z.string().min(3, 'x'.repeat(500)) })) });
    const members = Array.from({ length: 12 }, () => ({ name: 'Al' }));
    const result = check(() => envelope({ members }, 0.9), 'q', { schema: Team, maxRetries: 0 });
    const issues = result.attempts[0]?.schemaIssues ?? [];
    expect(issues).toHaveLength(12);
    expect(issues[11]?.path).toBe('answer.members[11].name');
    expect(issues.every((issue) => issue.message.length === 200 && issue.message.endsWith('…'))).toBe(true);
    const listed = result.attempts[0]?.validationError ?? '';
    expect(listed.split('; answer.')).toHaveLength(10);
    expect(listed.endsWith('; and 2 more')).toBe(true);
  });

  it('keys that are not identifiers are quoted in the path', () => {
    const Odd = z.object({ 'first name': z.string() });
    const result = check(() => envelope({ 'first name': 1 }, 0.9), 'q', { schema: Odd, maxRetries: 0 });
    expect(result.attempts[0]?.schemaIssues?.[0]?.path).toBe('answer["first name"]');
  });

  it('an answer the schema rejects leaves an UNCERTAIN run without an answer', () => {
    const result = check(() => envelope('Tokyo', 0.95), 'q', { schema: City, maxRetries: 0 });
    expect(result).toMatchObject({ status: 'UNCERTAIN', answer: null, confidence: null, parsed: null, method: 'validation' });
    expect(result.attempts[0]?.parsed?.['answer']).toBe('Tokyo');
  });

  it('a schema that throws is recorded like a throwing validator, never escaping', () => {
    const throwing: AnswerSchema<string> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: () => {
          throw new Error('boom');
        },
      },
    };
    const result = check(scripted([envelope('a', 0.9), envelope('b', 0.9)]).sync, 'q', { schema: throwing });
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts.map((a) => a.validationError)).toEqual(['answer: the schema threw Error: boom', 'answer: the schema threw Error: boom']);
  });

  it('a schema that returns something other than a result fails the answer, with a reason', () => {
    const broken = { '~standard': { version: 1, vendor: 'test', validate: () => 42 } } as unknown as AnswerSchema<string>;
    const result = check(() => envelope('a', 0.9), 'q', { schema: broken, maxRetries: 0 });
    expect(result.attempts[0]?.validationError).toBe('answer: the schema returned 42, not a Standard Schema result');
  });
});

describe('the schema and the validator', () => {
  it('the schema judges first; the validator receives its output', () => {
    const seen: Array<{ city: string; population: number }> = [];
    const model = scripted([envelope({ city: 'Osaka' }, 0.9), envelope({ city: 'Osaka', population: 2.7e6 }, 0.9), envelope(tokyo, 0.9)]);
    const result = check(model.sync, 'Largest city in Japan?', {
      schema: City,
      maxRetries: 2,
      validator: (answer) => {
        expectTypeOf(answer).toEqualTypeOf<{ city: string; population: number }>();
        seen.push(answer);
        return answer.population > 10e6 || [false, 'that is not the largest'];
      },
    });
    expect(result.status).toBe('REPAIRED');
    expect(seen).toEqual([{ city: 'Osaka', population: 2.7e6 }, tokyo]);
    expect(result.attempts.map((a) => a.validationError)).toEqual([
      'answer.population: Invalid input: expected number, received undefined',
      'that is not the largest',
      null,
    ]);
    expect(result.trace.filter((s) => s.state === 'schemaGate')).toHaveLength(3);
  });

  it('onAttempt sees typed attempts', () => {
    const attempts: Array<Attempt<{ city: string; population: number }>> = [];
    check(() => envelope(tokyo, 0.9), 'q', { schema: City, onAttempt: (_, attempt) => attempts.push(attempt) });
    expect(attempts[0]?.answer?.population).toBe(37_400_000);
  });
});

describe('an ambiguous question never reaches the schema', () => {
  it('returned at once with the answer as the model wrote it', () => {
    const validate = vi.fn(() => ({ value: 'x' }));
    const schema = { '~standard': { version: 1 as const, vendor: 'test', validate } };
    const result = check(() => envelope({ guess: 'Paris, France' }, 0.6, { ambiguous: true, interpretations: ['France', 'Texas'] }), 'Where is Paris?', {
      schema,
    });
    expect(result.status).toBe('AMBIGUOUS');
    expect(result.answer).toEqual({ guess: 'Paris, France' });
    if (result.status === 'AMBIGUOUS') expectTypeOf(result.answer).toEqualTypeOf<JsonValue>();
    expect(validate).not.toHaveBeenCalled();
  });
});

describe('asynchronous schemas', () => {
  const Known = z.string().refine(async (name) => name === 'Tokyo', 'not a known city');

  it('check() refuses one, pointing to acheck()', () => {
    expect(() => check(() => envelope('Tokyo', 0.9), 'q', { schema: Known })).toThrow(
      new TypeError(
        '`schema` validated asynchronously (its validate returned a Promise), but check() is synchronous; use acheck() for schemas with async checks.',
      ),
    );
  });

  it('acheck() awaits it', async () => {
    const result = await acheck(scripted([envelope('Kyoto', 0.9), envelope('Tokyo', 0.9)]).async, 'q', { schema: Known });
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]?.validationError).toBe('answer: not a known city');
  });
});

describe('the schema in the prompt', () => {
  it("a schema that describes itself is quoted as JSON Schema (draft 2020-12), compacted", () => {
    const model = scripted([envelope(tokyo, 0.9)]);
    check(model.sync, 'Largest city in Japan?', { schema: City });
    expect(model.prompts[0]).toBe(
      `Largest city in Japan?\n\n${INSTRUCTIONS.replace(
        '- "answer": your answer;',
        '- "answer": your answer, as a JSON value valid against this JSON Schema: {"type":"object","properties":{"city":{"type":"string"},"population":{"type":"number"}},"required":["city","population"]};',
      )}`,
    );
  });

  it('an arktype schema describes itself too', () => {
    const model = scripted([envelope(tokyo, 0.9)]);
    check(model.sync, 'q', { schema: type({ city: 'string', population: 'number' }) });
    expect(model.prompts[0]).toContain('your answer, as a JSON value valid against this JSON Schema: {"type":"object",');
  });

  it("otherwise the prompt says the application's schema applies", () => {
    const model = scripted([envelope(tokyo, 0.9)]);
    check(model.sync, 'Largest city in Japan?', { schema: v.object({ city: v.string(), population: v.number() }) });
    expect(model.prompts[0]).toBe(
      `Largest city in Japan?\n\n${INSTRUCTIONS.replace(
        '- "answer": your answer;',
        "- \"answer\": your answer, as a JSON value that satisfies the application's schema for answers;",
      )}`,
    );
  });

  it('a schema that cannot describe itself falls back to the same words', () => {
    const Dated = z.date();
    const model = scripted([envelope('2024-01-01', 0.9)]);
    check(model.sync, 'q', { schema: Dated, maxRetries: 0 });
    expect(model.prompts[0]).toContain("your answer, as a JSON value that satisfies the application's schema for answers;");
  });

  it('a long typed answer is quoted in a retry prompt only so far', () => {
    const long = { city: 'x'.repeat(1_000) };
    const model = scripted([envelope(long, 0.9), envelope(tokyo, 0.9)]);
    check(model.sync, 'q', { schema: City });
    // Cut inside the string, which the cut closes: the text after it can never read as part of the answer.
    expect(model.prompts[1]).toContain(`Your previous answer was ${JSON.stringify(long).slice(0, 198)}…". It failed validation`);
  });

  it('a typed answer is cut before an escape it would split, and a string answer is cut before it is quoted', () => {
    const escapes = { city: `${'x'.repeat(185)}${'\u0001'.repeat(10)}` };
    const model = scripted([envelope(escapes, 0.9), envelope({ city: 'é'.repeat(300) }, 0.9), envelope(tokyo, 0.9)]);
    check(model.sync, 'q', { schema: City, maxRetries: 2 });
    const json = JSON.stringify(escapes);
    // The cut at 198 falls inside the escape at 194–199, so the quote takes the text before it.
    expect(json.indexOf('\\u0001')).toBe(194);
    expect(model.prompts[1]).toContain(`Your previous answer was ${json.slice(0, 194)}…". It`);
    const text = scripted([envelope('y'.repeat(500), 0.9), envelope('ok', 0.9)]);
    check(text.sync, 'q', { schema: { '~standard': { version: 1, vendor: 'test', validate: (v: unknown) => (v === 'ok' ? { value: v } : { issues: [{ message: 'no' }] }) } } });
    expect(text.prompts[1]).toContain(`Your previous answer was "${'y'.repeat(199)}…". It`);
  });
});

describe("the reply's JSON Schema, handed to every callFn", () => {
  it("is the envelope, with the answer's schema inside when there is one", () => {
    const seen: unknown[] = [];
    const callFn = (_: string, info: { replySchema?: unknown }) => {
      seen.push(info.replySchema);
      return envelope(tokyo, 0.9);
    };
    check(callFn, 'q', { schema: City });
    check(() => envelope('Paris', 0.9), 'q');
    const answerOf = (schema: unknown) => (schema as { properties: { answer: unknown } }).properties.answer;
    expect(answerOf(seen[0])).toEqual({
      type: 'object',
      properties: { city: { type: 'string' }, population: { type: 'number' } },
      required: ['city', 'population'],
    });
    check(callFn, 'q', { schema: v.string(), maxRetries: 0 });
    expect(answerOf(seen[1])).toEqual({});
    check(callFn, 'q', { maxRetries: 0 });
    expect(answerOf(seen[2])).toEqual({ type: ['string', 'number', 'boolean'] });
  });
});

describe('the schema option', () => {
  it('must be a Standard Schema', () => {
    for (const schema of [{}, 'zod', () => true, { '~standard': { version: 2, validate: () => ({}) } }]) {
      expect(() => check(() => '', 'q', { schema } as never)).toThrow(TypeError);
    }
    expect(() => check(() => '', 'q', { schema: {} } as never)).toThrow(
      "Expected `schema` to be a Standard Schema (a zod 4, valibot 1 or arktype 2 schema, or any object with ['~standard'].validate), got an object.",
    );
  });

  it('a durable run resumes only with the same answer format', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    // The first run saves its first attempt, then is stopped during its second call.
    const interrupted = async (_prompt: string, { attempt }: { attempt: number }) => {
      if (attempt === 0) return envelope({ city: 'Tokyo' }, 0.9);
      controller.abort(new Error('stop'));
      return new Promise<string>(() => {});
    };
    const options = { schema: City, checkpoint: store, key: 'run' };
    await expect(acheck(interrupted, 'q', { ...options, signal: controller.signal })).rejects.toThrow('stop');
    await expect(acheck(interrupted, 'q', { ...options, schema: z.object({ city: z.string() }) })).rejects.toThrow(
      /belongs to a different run: its answerFormat is/,
    );
    const resumed = await acheck(scripted([envelope(tokyo, 0.9)]).async, 'q', options);
    expect(resumed.status).toBe('REPAIRED');
    expect(resumed.answer).toEqual(tokyo);
    expect(resumed.attempts[0]?.schemaIssues?.[0]?.path).toBe('answer.population');
  });
});

describe('in a workflow', () => {
  it('a provided checkSchema actor that fails is recorded like a throwing schema', async () => {
    const booth = checkpointMachine.provide({
      actors: {
        checkSchema: fromPromise<unknown, SchemaRequest>(async () => {
          throw new Error('schema service down');
        }),
      },
    });
    const output = await toPromise(createActor(booth, { input: { prompt: 'q', model: async () => envelope(tokyo, 0.9), schema: City, maxRetries: 0 } }).start());
    expect(output.status).toBe('UNCERTAIN');
    expect(output.attempts[0]?.validationError).toBe('answer: the schema threw Error: schema service down');
  });

  it("the machine validates with its checkSchema actor; resultFrom names the answer's type", async () => {
    const replies = [envelope({ city: 'Tokyo' }, 0.9), envelope(tokyo, 0.9)];
    const schemas: unknown[] = [];
    const model = async (_: string, { attempt, replySchema }: { attempt: number; replySchema: unknown }) => {
      schemas.push((replySchema as { properties: { answer: unknown } }).properties.answer);
      return replies[attempt];
    };
    const actor = createActor(checkpointMachine, { input: { prompt: 'q', model, schema: City } }).start();
    const output = await toPromise(actor);
    const result = resultFrom<z.infer<typeof City>>(output);
    expect(result.status).toBe('REPAIRED');
    expect(result.unwrap().population).toBe(37_400_000);
    expect(output.trace.map((s) => s.state)).toContain('schemaGate');
    // The model gets the reply's schema, as a callFn of check() does, for an adapter's structured output.
    expect(schemas).toEqual([City.toJSONSchema({ io: 'input' }), City.toJSONSchema({ io: 'input' })].map(({ $schema: _, ...rest }) => rest));
  });
});

describe('what review found', () => {
  it("a recursive or $defs schema keeps its references inside the envelope's schema", async () => {
    const { Ajv2020 } = await import('ajv/dist/2020.js');
    type Node = { name: string; children: Node[] };
    const Tree: z.ZodType<Node> = z.object({ name: z.string(), get children() { return z.array(Tree); } });
    const seen: unknown[] = [];
    const reply = envelope({ name: 'a', children: [{ name: 'b', children: [] }] }, 0.9);
    check((_, info) => (seen.push(info.replySchema), reply), 'q', { schema: Tree });
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validate(seen[0] as object, JSON.parse(reply))).toBe(true);
    expect(ajv.validate(seen[0] as object, JSON.parse(envelope({ name: 'a', children: [{ name: 1 }] }, 0.9)))).toBe(false);
    const Shared = z.object({ home: z.string().meta({ id: 'Place' }), work: z.string().meta({ id: 'Place' }) });
    check((_, info) => (seen.push(info.replySchema), envelope({ home: 'a', work: 'b' }, 0.9)), 'q', { schema: Shared });
    expect(ajv.validate(seen[1] as object, JSON.parse(envelope({ home: 'a', work: 'b' }, 0.9)))).toBe(true);
  });

  it("the reply's schema is frozen all through: a callFn cannot change it for the next run", () => {
    let schema: { properties: { answer: { type: string[] } } } | undefined;
    check((_, info) => ((schema = info.replySchema as never), envelope('Paris', 0.9)), 'q');
    expect(() => schema?.properties.answer.type.push('object')).toThrow(TypeError);
  });

  it('the schema gets a copy of the answer it may change, as Ajv with useDefaults does', () => {
    const withDefault: AnswerSchema<{ city: string; country: string }> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value) => {
          const answer = value as { city: string; country?: string };
          answer.country ??= 'Japan';
          return { value: answer as { city: string; country: string } };
        },
      },
    };
    const result = check(() => envelope({ city: 'Tokyo' }, 0.9), 'q', { schema: withDefault });
    expect(result.answer).toEqual({ city: 'Tokyo', country: 'Japan' });
    expect(result.parsed?.['answer']).toEqual({ city: 'Tokyo' });
  });

  it('a result with neither issues nor a value, or one that throws when read, fails the answer and never escapes', () => {
    const returning = (result: () => unknown) => ({ '~standard': { version: 1, vendor: 'test', validate: result } }) as AnswerSchema<string>;
    const errorOf = (result: () => unknown) => check(() => envelope('a', 0.9), 'q', { schema: returning(result), maxRetries: 0 }).attempts[0]?.validationError;
    expect(errorOf(() => ({}))).toBe('answer: the schema returned a result with neither issues nor a value');
    expect(check(() => envelope('a', 0.9), 'q', { schema: returning(() => ({ issues: false, value: 'A' })) }).answer).toBe('A');
    const getter = () => Object.defineProperty({}, 'issues', { get: () => { throw new Error('boom'); } });
    expect(errorOf(getter)).toBe('answer: the schema returned a result that could not be read (Error: boom)');
    expect(errorOf(() => ({ issues: [{ message: 'bad', path: [{ key: Object.create(null) }] }] }))).toMatch(/^answer: the schema returned a result that could not be read/);
  });

  it('no path longer than 200 characters is echoed', () => {
    const key = 'k'.repeat(5_000);
    const long = { '~standard': { version: 1, vendor: 'test', validate: () => ({ issues: [{ message: 'bad', path: [key] }] }) } } as AnswerSchema<string>;
    const [attempt] = check(() => envelope('a', 0.9), 'q', { schema: long, maxRetries: 0 }).attempts;
    expect(attempt?.schemaIssues?.[0]?.path).toHaveLength(200);
  });

  it('an UNCERTAIN run reports the last answer the schema passed, with its own confidence', () => {
    const model = scripted([envelope(tokyo, 0.4), envelope({ city: 'Osaka' }, 0.95)]);
    const result = check(model.sync, 'q', { schema: City });
    expect(result).toMatchObject({ status: 'UNCERTAIN', answer: tokyo, confidence: 0.4 });
  });

  it('an asynchronous schema that outlasts deadlineMs ends the run UNCERTAIN at the deadline', async () => {
    const slow = z.string().refine(async () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 2_000)));
    const started = Date.now();
    const result = await acheck(async () => envelope('a', 0.9), 'q', { schema: slow, deadlineMs: 100 });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts[0]?.validationError).toBe('answer: the deadline of 100 ms passed while the schema validated');
  });

  it('a checkpoint saved before typed answers (no answer format, no schema issues) resumes as the same run', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const interrupted = async (_prompt: string, { attempt }: { attempt: number }) => {
      if (attempt === 0) return 'not json';
      controller.abort(new Error('stop'));
      return new Promise<string>(() => {});
    };
    await expect(acheck(interrupted, 'q', { checkpoint: store, key: 'old', signal: controller.signal })).rejects.toThrow('stop');
    // As an earlier Booth wrote it: neither field existed.
    const saved = (await store.load('old')) as { snapshot: { context: Record<string, unknown> } };
    const context = saved.snapshot.context as { settings: Record<string, unknown>; draft: Record<string, unknown>; attempts: Array<Record<string, unknown>> };
    delete context.settings['answerFormat'];
    // Nor did sampling: one sample, confidence of its own.
    for (const name of ['samples', 'sampleConcurrency', 'confidenceFrom', 'agree']) delete context.settings[name];
    for (const name of ['slots', 'calls', 'started']) delete (context as Record<string, unknown>)[name];
    // Nor cascades and budgets.
    for (const name of ['models', 'budget']) delete context.settings[name];
    for (const name of ['replies', 'reports', 'escalations']) delete (context as Record<string, unknown>)[name];
    delete context.draft['schemaIssues'];
    for (const attempt of context.attempts) delete attempt['schemaIssues'];
    await store.save('old', saved as never);
    const resumed = await acheck(async () => envelope('Paris', 0.9), 'q', { checkpoint: store, key: 'old' });
    expect(resumed.status).toBe('REPAIRED');
    expect(Object.keys(resumed.attempts[0] ?? {})).toEqual(Object.keys(resumed.attempts[1] ?? {}));
    expect(resumed.attempts[0]?.schemaIssues).toBeNull();
  });

  it('options built apart from the call are typed with TypedCheckOptions; resultFrom<T> types an AMBIGUOUS answer as JSON', () => {
    const options: TypedCheckOptions<z.infer<typeof City>> = { schema: City, validator: (answer) => answer.population > 0 };
    const result = check(() => envelope(tokyo, 0.9), 'q', options);
    if (result.ok) expectTypeOf(result.answer).toEqualTypeOf<{ city: string; population: number }>();
    expectTypeOf<ReturnType<typeof resultFrom<string>>>().toEqualTypeOf<TypedCheckResult<string>>();
    expectTypeOf<Extract<TypedCheckResult<string>, { status: 'AMBIGUOUS' }>['answer']>().toEqualTypeOf<JsonValue>();
    // Nothing changes for a workflow without a schema: the machine's output keeps its string answer.
    expectTypeOf<CheckpointOutput['answer']>().toEqualTypeOf<string | null>();
  });
});

describe('answers JSON cannot hold', () => {
  it('a BigInt or undefined output is drawn by the HTML trace and the sequence diagram, never thrown', async () => {
    const { toHtml, toSequence } = await import('../../src/visualize/index.js');
    const big = check(() => envelope('12', 0.9), 'q', { schema: z.string().transform((s) => BigInt(s)) });
    expect(big.answer).toBe(12n);
    expect(await toHtml(big)).toContain('12n');
    expect(toSequence(big)).toContain('12n');
    const nothing = check(() => envelope('x', 0.9), 'q', { schema: z.string().transform(() => undefined) });
    expect(nothing.status).toBe('VERIFIED');
    expect(await toHtml(nothing)).toContain('undefined');
  });
});
