import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { acheck } from '../../src/index.js';
import { CliFileError } from '../../src/cli/batch/input.js';
import {
  type AddFormats,
  compileJsonSchema,
  FormatLibraryMissing,
  type JsonSchemaAnswer,
  loadFormats,
  loadSchemaFile,
  SchemaFileError,
} from '../../src/cli/json-schema.js';
import { envelope, scripted } from '../fixtures/helpers.js';
import { dir } from '../fixtures/booth-process.js';

/**
 * The JSON Schema file of `booth --schema`, compiled by Ajv and wrapped as a Standard
 * Schema: its issues and their paths, its JSON Schema, and the files it refuses.
 */

const compile = (document: unknown, warn: (message: string) => void = () => {}) => compileJsonSchema(document, Ajv2020, warn);
const validate = (schema: JsonSchemaAnswer, value: unknown) => schema['~standard'].validate(value);

const Order = {
  type: 'object',
  properties: {
    customer: { type: 'string' },
    items: { type: 'array', items: { type: 'object', properties: { qty: { type: 'number' } } } },
    'a/b': { type: 'string' },
    'c~d': { type: 'string' },
    '0': { type: 'string' },
  },
  required: ['customer'],
  additionalProperties: false,
};

describe('the Ajv wrapper', () => {
  it('is a Standard Schema v1 from the vendor ajv, and a valid value comes back unchanged', () => {
    const schema = compile(Order);
    expect(schema['~standard']).toMatchObject({ version: 1, vendor: 'ajv' });
    const order = { customer: 'Ada', items: [{ qty: 2 }] };
    const result = validate(schema, order);
    expect(result).toEqual({ value: order });
    expect((result as { value: unknown }).value).toBe(order);
  });

  it('lists every issue (allErrors), its path split from the pointer: array indices as numbers, ~1 and ~0 unescaped', () => {
    const result = validate(compile(Order), { items: [{ qty: 1 }, { qty: 'x' }], 'a/b': 5, 'c~d': 1, '0': 2, extra: true, 'odd/key': 3 });
    expect(result).toEqual({
      issues: [
        { path: [], message: "must have required property 'customer'" },
        { path: [], message: 'must NOT have additional properties: "extra"' },
        { path: [], message: 'must NOT have additional properties: "odd/key"' },
        // An object key made of digits stays a string: only an array's index is a number.
        { path: ['0'], message: 'must be string' },
        { path: ['items', 1, 'qty'], message: 'must be number' },
        { path: ['a/b'], message: 'must be string' },
        { path: ['c~d'], message: 'must be string' },
      ],
    });
  });

  it('unescapes ~01 as "~1", not "/"', () => {
    const schema = compile({ type: 'object', properties: { 'x~1y': { type: 'number' } } });
    expect(validate(schema, { 'x~1y': 'no' })).toEqual({ issues: [{ path: ['x~1y'], message: 'must be number' }] });
  });

  it('indexes nested arrays and a top-level array', () => {
    const schema = compile({ type: 'array', items: { type: 'array', items: { type: 'integer' } } });
    expect(validate(schema, [[1], [2, 2.5]])).toEqual({ issues: [{ path: [1, 1], message: 'must be integer' }] });
  });

  it('names the unevaluated property too', () => {
    const schema = compile({ type: 'object', properties: { a: { type: 'number' } }, unevaluatedProperties: false });
    expect(validate(schema, { a: 1, b: 2 })).toEqual({ issues: [{ path: [], message: 'must NOT have unevaluated properties: "b"' }] });
  });

  it('a schema marked "$async" is awaited, its rejection made issues', async () => {
    const schema = compile({ $async: true, type: 'object', properties: { n: { type: 'number' } } });
    const passed = validate(schema, { n: 1 });
    expect(passed).toBeInstanceOf(Promise);
    await expect(passed).resolves.toEqual({ value: { n: 1 } });
    await expect(validate(schema, { n: 'one' })).resolves.toEqual({ issues: [{ path: ['n'], message: 'must be number' }] });
  });

  it("states the file's schema as its JSON Schema, input and output, for draft 2020-12 only", () => {
    const schema = compile(Order);
    const { jsonSchema } = schema['~standard'];
    expect(jsonSchema.input({ target: 'draft-2020-12' })).toEqual(Order);
    expect(jsonSchema.output({ target: 'draft-2020-12' })).toEqual(Order);
    // A copy: whoever changes it does not change what the next prompt quotes.
    const copy = jsonSchema.input({ target: 'draft-2020-12' });
    copy['type'] = 'string';
    expect(jsonSchema.input({ target: 'draft-2020-12' })).toEqual(Order);
    expect(() => jsonSchema.input({ target: 'draft-07' })).toThrow('the schema file is JSON Schema draft 2020-12, not draft-07');
  });

  it('takes the boolean schemas, stating them as objects', () => {
    const anything = compile(true);
    expect(validate(anything, [1, 'x'])).toEqual({ value: [1, 'x'] });
    expect(anything['~standard'].jsonSchema.input({ target: 'draft-2020-12' })).toEqual({});
    const nothing = compile(false);
    expect(validate(nothing, 1)).toEqual({ issues: [{ path: [], message: 'boolean schema is false' }] });
    expect(nothing['~standard'].jsonSchema.input({ target: 'draft-2020-12' })).toEqual({ not: {} });
  });

  it("refuses what Ajv refuses, and anything but an object or a boolean; strict mode's warnings go to warn", () => {
    expect(() => compile({ type: 12 })).toThrow(/^schema is invalid: data\/type must be equal to one of the allowed values/);
    expect(() => compile({ type: 'object', frobnicate: 1 })).toThrow('strict mode: unknown keyword: "frobnicate"');
    // Without the ajv-formats plugin Ajv knows no format: strict mode refuses one rather than skip it.
    expect(() => compile({ type: 'string', format: 'email' })).toThrow('unknown format "email" ignored in schema at path "#"');
    expect(() => compile({ $ref: '#/$defs/missing' })).toThrow("can't resolve reference #/$defs/missing");
    expect(() => compile([{ type: 'string' }])).toThrow('a JSON Schema is an object or a boolean, not an array');
    expect(() => compile(null)).toThrow('a JSON Schema is an object or a boolean, not null');
    const warnings: string[] = [];
    compile({ properties: { a: { type: 'string' } } }, (message) => warnings.push(message));
    expect(warnings).toEqual(['strict mode: missing type "object" for keyword "properties" at "#" (strictTypes)']);
  });

  it('with addFormats, a "format" is checked: "date" takes 2024-01-02 and refuses "yesterday"', () => {
    const schema = compileJsonSchema({ type: 'object', properties: { due: { type: 'string', format: 'date' } } }, Ajv2020, () => {}, addFormats as unknown as AddFormats);
    expect(validate(schema, { due: '2024-01-02' })).toEqual({ value: { due: '2024-01-02' } });
    expect(validate(schema, { due: 'yesterday' })).toEqual({ issues: [{ path: ['due'], message: 'must match format "date"' }] });
    // ajv-formats checks the calendar, not only the shape.
    expect(validate(schema, { due: '2024-02-30' })).toEqual({ issues: [{ path: ['due'], message: 'must match format "date"' }] });
  });

  it('through acheck: a wrong shape is retried, the retry naming the path, and the prompt quoting the schema', async () => {
    const City = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'number' } }, required: ['city', 'population'] };
    const tokyo = { city: 'Tokyo', population: 37_400_000 };
    const model = scripted([envelope({ city: 'Tokyo', population: 'many' }, 0.9), envelope(tokyo, 0.9)]);
    const result = await acheck(model.async, 'Largest city in Japan?', { schema: compile(City) });
    expect(result.status).toBe('REPAIRED');
    expect(result.answer).toEqual(tokyo);
    expect(result.attempts[0]?.validationError).toBe('answer.population: must be number');
    expect(model.prompts[0]).toContain(`valid against this JSON Schema: ${JSON.stringify(City)}`);
    expect(model.prompts[1]).toContain('It failed validation: answer.population: must be number.');
  });
});

describe('the schema file', () => {
  const file = (name: string, text: string) => {
    const path = join(dir(), name);
    writeFileSync(path, text);
    return path;
  };

  it('is read, parsed and compiled; warnings name the file', async () => {
    const path = file('answer.schema.json', '{ "properties": { "n": { "type": "number" } } }');
    const warnings: string[] = [];
    const schema = await loadSchemaFile(path, (message) => warnings.push(message));
    expect(validate(schema, { n: 'x' })).toEqual({ issues: [{ path: ['n'], message: 'must be number' }] });
    expect(warnings).toEqual([`${path}: strict mode: missing type "object" for keyword "properties" at "#" (strictTypes)`]);
  });

  it('a format is checked by ajv-formats, installed here', async () => {
    const dated = file('dated.json', '{ "type": "string", "format": "date-time" }');
    const schema = await loadSchemaFile(dated, () => {});
    expect(validate(schema, '2024-01-02T03:04:05Z')).toEqual({ value: '2024-01-02T03:04:05Z' });
    expect(validate(schema, 'yesterday')).toEqual({ issues: [{ path: [], message: 'must match format "date-time"' }] });
  });

  it('without ajv-formats, a schema with a format is FormatLibraryMissing naming the file, the format and the install; one without needs none', async () => {
    const missing = async () => null;
    const dated = file('dated.json', '{ "type": "object", "properties": { "due": { "type": "string", "format": "date" } } }');
    const refused = loadSchemaFile(dated, () => {}, missing);
    await expect(refused).rejects.toBeInstanceOf(FormatLibraryMissing);
    await expect(refused).rejects.toThrow(
      `the schema file ${dated} (--schema) uses "format": "date"; formats are checked by ajv-formats, an optional peer dependency of boothjs, and \`ajv-formats\` is not installed. Install it with: npm i ajv-formats`,
    );
    const plain = file('plain.json', '{ "type": "string" }');
    expect(validate(await loadSchemaFile(plain, () => {}, missing), 'x')).toEqual({ value: 'x' });
  });

  it('loadFormats: the plugin when installed, null when ajv-formats is missing, any other failure rethrown', async () => {
    expect(await loadFormats()).toBe(addFormats);
    // Node's ESM gives the CommonJS module.exports as the default, a bundler its `default`.
    expect(await loadFormats(async () => ({ default: { default: addFormats } }))).toBe(addFormats);
    const notFound = (name: string) => Object.assign(new Error(`Cannot find package '${name}' imported from /x.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(await loadFormats(() => Promise.reject(notFound('ajv-formats')))).toBeNull();
    // A module missing inside it (here ajv, which it requires) is not ajv-formats missing.
    await expect(loadFormats(() => Promise.reject(notFound('ajv')))).rejects.toThrow("Cannot find package 'ajv'");
    await expect(loadFormats(async () => ({ default: 42 }))).rejects.toThrow('ajv-formats has no default export that is a function: install ajv-formats 3');
  });

  it('a format ajv-formats does not know, or an older draft, is refused with what to do about it', async () => {
    const coloured = file('coloured.json', '{ "type": "string", "format": "colour" }');
    await expect(loadSchemaFile(coloured, () => {})).rejects.toThrow(
      'unknown format "colour" ignored in schema at path "#". ajv-formats checks no such format: remove it from the schema, or use one it knows (such as date, time, date-time, email, uri, uuid)',
    );
    const draft7 = file('draft7.json', '{ "$schema": "http://json-schema.org/draft-07/schema#", "type": "string" }');
    await expect(loadSchemaFile(draft7, () => {})).rejects.toThrow(
      'Booth reads draft 2020-12: remove "$schema" or set it to "https://json-schema.org/draft/2020-12/schema"',
    );
  });

  it('missing, not JSON, or refused by Ajv: an error naming the file and the problem', async () => {
    const missing = join(dir(), 'nope.json');
    const unread = loadSchemaFile(missing, () => {});
    await expect(unread).rejects.toBeInstanceOf(CliFileError);
    await expect(unread).rejects.toThrow(`cannot read the schema file ${missing} (--schema): ENOENT: no such file or directory. Check the path.`);
    const broken = file('broken.json', '{ "type": "object", }');
    const notJson = loadSchemaFile(broken, () => {});
    await expect(notJson).rejects.toBeInstanceOf(SchemaFileError);
    await expect(notJson).rejects.toThrow(new RegExp(`^the schema file ${broken} \\(--schema\\) is not JSON: `));
    const refused = file('refused.json', '{"type": 12}');
    await expect(loadSchemaFile(refused, () => {})).rejects.toThrow(
      `the schema file ${refused} (--schema) is not a JSON Schema (draft 2020-12) that Ajv can compile: schema is invalid: data/type must be equal to one of the allowed values`,
    );
    const draft7 = file('draft7.json', '{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}');
    await expect(loadSchemaFile(draft7, () => {})).rejects.toThrow('that Ajv can compile: no schema with key or ref "http://json-schema.org/draft-07/schema#"');
  });
});
