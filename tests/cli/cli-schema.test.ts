import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, dir, questionNumber, resultsIn, useProvider } from '../fixtures/booth-process.js';

/**
 * `booth ask --schema` and `booth batch --schema`: the answer checked against a JSON Schema
 * file by Ajv, the schema quoted in the prompt, its issues named in the retry, and every
 * way the file can be unusable refused before a call is made.
 */

const server = useProvider();

const City = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { city: { type: 'string' }, population: { type: 'number' } },
  required: ['city', 'population'],
  additionalProperties: false,
};
const tokyo = { city: 'Tokyo', population: 37_400_000 };

/** A file holding `text` in a fresh folder. */
function file(name: string, text: string): string {
  const path = join(dir(), name);
  writeFileSync(path, text);
  return path;
}

const schemaFile = () => file('city.schema.json', JSON.stringify(City, null, 2));

/** The prompt of a request the provider received. */
/** All a request said to the model: its system message (the instructions) and its user turn (the question, any retry paragraph). */
const promptOf = (body: Record<string, unknown>) => (body['messages'] as Array<{ content: string }>).map((message) => message.content).join('\n\n');

/** What the prompt says of the answer: the schema compacted, without its $schema. */
const { $schema: _dialect, ...quoted } = City;
const inPrompt = `"answer": your answer, as a JSON value valid against this JSON Schema: ${JSON.stringify(quoted)}`;

describe('booth ask --schema', () => {
  it('a wrong shape is retried, the retry naming the path; the second reply is accepted: REPAIRED, the answer printed as JSON', async () => {
    server.provider.script.push({ text: envelope({ city: 'Tokyo', population: 'many' }, 0.9) }, { text: envelope(tokyo, 0.9) });
    const run = await booth(['ask', 'Largest city in Japan?', ...server.endpoint, '--schema', schemaFile()]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('status      REPAIRED');
    expect(run.stdout).toContain('answer      {"city":"Tokyo","population":37400000}');
    expect(run.stdout).toContain('path        calling → parsing → ambiguityGate → schemaGate → reconsidering → calling → parsing → ambiguityGate → schemaGate');
    expect(run.stdout).toContain('failed validation attempt 1 of 2: answer.population: must be number');
    const [first, second] = server.provider.received.map((r) => promptOf(r.body));
    expect(first).toContain(inPrompt);
    expect(second).toContain('It failed validation: answer.population: must be number.');
    expect(second).toContain(inPrompt);
  }, 30_000);

  it('--json holds the typed answer as JSON, and every issue of a reply the schema never accepts', async () => {
    server.provider.script.push({ text: envelope({ town: 'Tokyo' }, 0.9) });
    const run = await booth(['ask', 'Largest city in Japan?', ...server.endpoint, '--schema', schemaFile(), '--max-retries', '0', '--json']);
    expect(run.code).toBe(1);
    const result = JSON.parse(run.stdout) as { status: string; answer: unknown; attempts: Array<{ schemaIssues: unknown; passedValidation: boolean }> };
    expect(result.status).toBe('UNCERTAIN');
    expect(result.answer).toBeNull();
    expect(result.attempts[0]?.passedValidation).toBe(false);
    expect(result.attempts[0]?.schemaIssues).toEqual([
      { path: 'answer', message: "must have required property 'city'" },
      { path: 'answer', message: "must have required property 'population'" },
      { path: 'answer', message: 'must NOT have additional properties: "town"' },
    ]);
    server.provider.script.push({ text: envelope(tokyo, 0.9) });
    const accepted = await booth(['ask', 'Largest city in Japan?', ...server.endpoint, '--schema', schemaFile(), '--json']);
    expect(accepted.code).toBe(0);
    expect(JSON.parse(accepted.stdout)).toMatchObject({ status: 'VERIFIED', answer: tokyo });
  }, 30_000);

  it("a schema of strings: the answer is printed as JSON, so \"42\" is not 42, and Ajv's strict-mode warnings reach stderr naming the file", async () => {
    const path = file('name.schema.json', '{ "type": "string", "minLength": 2, "properties": {} }');
    server.provider.script.push({ text: envelope('Tokyo', 0.9) });
    const run = await booth(['ask', 'Largest city in Japan?', ...server.endpoint, '--schema', path]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('answer      "Tokyo"\n');
    expect(run.stderr).toContain(`warning: ${path}: strict mode: missing type "object" for keyword "properties"`);
  }, 30_000);
});

describe('booth ask --schema with a format, checked by ajv-formats', () => {
  const Due = { type: 'object', properties: { due: { type: 'string', format: 'date' } }, required: ['due'] };

  it('"format": "date" accepts 2024-01-02 and refuses "yesterday", the retry naming the format', async () => {
    const path = file('due.schema.json', JSON.stringify(Due));
    server.provider.script.push({ text: envelope({ due: '2024-01-02' }, 0.9) });
    const accepted = await booth(['ask', 'When is it due?', ...server.endpoint, '--schema', path]);
    expect(accepted.stderr).toBe('');
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toContain('status      VERIFIED');
    expect(accepted.stdout).toContain('answer      {"due":"2024-01-02"}');
    server.provider.received.length = 0;
    server.provider.script.push({ text: envelope({ due: 'yesterday' }, 0.9) }, { text: envelope({ due: 'yesterday' }, 0.9) });
    const refused = await booth(['ask', 'When is it due?', ...server.endpoint, '--schema', path]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('status      UNCERTAIN');
    expect(refused.stdout).toContain('answer      —');
    expect(refused.stdout).toContain('answer.due: must match format "date"');
    expect(promptOf(server.provider.received[1]?.body ?? {})).toContain('It failed validation: answer.due: must match format "date".');
  }, 30_000);

  it('without ajv-formats installed: a schema with a format exits 2 saying npm i ajv-formats, before any call; one without runs', async () => {
    const hook = new URL('../fixtures/without-ajv-formats.mjs', import.meta.url).href;
    const env = { ...process.env, NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${hook}`.trim() };
    const path = file('due.schema.json', JSON.stringify(Due));
    const run = await booth(['ask', 'When is it due?', ...server.endpoint, '--schema', path], undefined, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `error: the schema file ${path} (--schema) uses "format": "date"; formats are checked by ajv-formats, an optional peer dependency of boothjs, and \`ajv-formats\` is not installed. Install it with: npm i ajv-formats\n`,
    );
    expect(run.stdout).toBe('');
    const { input, output } = batchFiles(2);
    const batched = await booth(['batch', input, '-o', output, ...server.endpoint, '--schema', path], undefined, env);
    expect(batched.code).toBe(2);
    expect(batched.stderr).toContain('Install it with: npm i ajv-formats');
    expect(server.provider.received).toHaveLength(0);
    server.provider.script.push({ text: envelope(tokyo, 0.9) });
    const plain = await booth(['ask', 'Largest city in Japan?', ...server.endpoint, '--schema', schemaFile()], undefined, env);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('answer      {"city":"Tokyo","population":37400000}');
  }, 30_000);
});

describe('booth batch --schema', () => {
  it('checks every answer against the schema: JSON answers in the result lines, issues in the attempts, the schema in every prompt', async () => {
    // Question 1 gives the population as a string, every time.
    server.provider.fallback = (body) => {
      const n = questionNumber(body);
      return { text: envelope({ city: `city ${n}`, population: n === 1 ? 'unknown' : n * 1_000 }, 0.9) };
    };
    const { input, output } = batchFiles(3);
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--schema', schemaFile(), '--max-retries', '1', '--concurrency', '2']);
    expect(run.code).toBe(0);
    const results = resultsIn(output).sort((a, b) => Number(a.id) - Number(b.id));
    expect(results.map((r) => [r.id, r.status, r['answer']])).toEqual([
      [0, 'VERIFIED', { city: 'city 0', population: 0 }],
      [1, 'UNCERTAIN', null],
      [2, 'VERIFIED', { city: 'city 2', population: 2_000 }],
    ]);
    const attempts = results[1]?.['attempts'] as Array<{ validationError: string }>;
    expect(attempts.map((a) => a.validationError)).toEqual(['answer.population: must be number', 'answer.population: must be number']);
    expect(server.provider.received).toHaveLength(4);
    for (const request of server.provider.received) expect(promptOf(request.body)).toContain(inPrompt);
    expect(run.stdout).toMatch(/VERIFIED\s+2\s+66\.7%/);
  }, 30_000);
});

describe('booth batch --schema, then booth calibrate', () => {
  it('a typed "expected" is kept in the result line and compared as JSON', async () => {
    server.provider.fallback = (body) => ({ text: envelope({ city: `city ${questionNumber(body)}`, population: 7 }, 0.9) });
    const { input, output } = batchFiles(2);
    const expected = [{ population: 7, city: 'city 0' }, { city: 'elsewhere', population: 7 }];
    writeFileSync(input, expected.map((value, i) => JSON.stringify({ id: i, prompt: `question ${i}`, expected: value })).join('\n'));
    expect((await booth(['batch', input, '-o', output, ...server.endpoint, '--schema', schemaFile()])).code).toBe(0);
    const results = resultsIn(output).sort((a, b) => Number(a.id) - Number(b.id));
    expect(results.map((r) => r['expected'])).toEqual(expected);
    const calibrated = await booth(['calibrate', output]);
    expect(calibrated.stdout).toContain('labelled results   2');
    expect(calibrated.stdout).toContain('accuracy VERIFIED  0.500 of 2');
  }, 30_000);
});

describe('a schema file that cannot be used: exit 2 naming the file, before any call', () => {
  it('not JSON', async () => {
    const path = file('broken.schema.json', '{ "type": "object", }');
    const run = await booth(['ask', 'q', ...server.endpoint, '--schema', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^error: the schema file ${path} \\(--schema\\) is not JSON: .+\\n$`));
    expect(run.stdout).toBe('');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('a schema Ajv cannot compile, in ask and in batch', async () => {
    const path = file('bad-type.schema.json', '{"type": 12}');
    const problem = `error: the schema file ${path} (--schema) is not a JSON Schema (draft 2020-12) that Ajv can compile: schema is invalid: data/type must be equal to one of the allowed values`;
    const asked = await booth(['ask', 'q', ...server.endpoint, '--schema', path]);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toContain(problem);
    const { input, output } = batchFiles(2);
    const batched = await booth(['batch', input, '-o', output, ...server.endpoint, '--schema', path]);
    expect(batched.code).toBe(2);
    expect(batched.stderr).toContain(problem);
    expect(batched.stderr).not.toContain('booth batch |');
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('a file that is not there', async () => {
    const path = join(dir(), 'missing.schema.json');
    const run = await booth(['batch', 'questions.jsonl', '-o', join(dir(), 'out.jsonl'), ...server.endpoint, '--schema', path]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`error: cannot read the schema file ${path} (--schema): ENOENT: no such file or directory. Check the path.`);
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);

  it('without ajv installed: exit 2 naming the command that installs it; without --schema nothing needs it', async () => {
    const hook = new URL('../fixtures/without-ajv.mjs', import.meta.url).href;
    const env = { ...process.env, NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${hook}`.trim() };
    const run = await booth(['ask', 'q', ...server.endpoint, '--schema', schemaFile()], undefined, env);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'error: --schema checks answers with Ajv, an optional peer dependency of boothjs, and `ajv` is not installed. Install it with: npm i ajv\n',
    );
    expect(server.provider.received).toHaveLength(0);
    server.provider.script.push({ text: envelope('Paris', 0.95) });
    const plain = await booth(['ask', 'capital of France?', ...server.endpoint], undefined, env);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('answer      Paris');
  }, 30_000);
});
