import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { freezeDeep, type JsonObject } from '../reply/json-objects.js';
import { describeThrown, describeValue, isPlainObject } from '../util/values.js';
import type { AnswerRule, JsonType, MemberFailure } from '../reply/stream-reader.js';

/**
 * Typed answers through Standard Schema (https://standardschema.dev): zod 4, valibot 1,
 * arktype 2 and Effect Schema all implement it, so Booth needs none of them, only the
 * spec's types.
 */
export type AnswerSchema<TOutput = unknown> = StandardSchemaV1<unknown, TOutput>;

/** What a schema says of an answer, as Booth keeps it: a path and a message. */
export interface SchemaIssue {
  /** Where in the envelope, from `answer`: `answer.city`, `answer.items[0]`. */
  readonly path: string;
  readonly message: string;
}

/** A schema's verdict on one answer. */
export type SchemaVerdict =
  | { readonly passed: true; readonly value: unknown }
  | { readonly passed: false; readonly error: string; readonly issues: readonly SchemaIssue[] };

/** At most this many issues reach the retry prompt; the attempt keeps them all. */
const MAX_LISTED_ISSUES = 10;
/** No text from the schema (which may quote the answer) is echoed longer than this. */
const MAX_ECHO = 200;

/** The `schema` option, checked: a Standard Schema v1, or null. */
export function readSchema(value: unknown): AnswerSchema | null {
  if (value === undefined || value === null) return null;
  const standard = (typeof value === 'object' || typeof value === 'function') ? (value as Partial<AnswerSchema>)['~standard'] : undefined;
  if (typeof standard !== 'object' || standard === null || standard.version !== 1 || typeof standard.validate !== 'function') {
    throw new TypeError(
      `Expected \`schema\` to be a Standard Schema (a zod 4, valibot 1 or arktype 2 schema, or any object with ['~standard'].validate), got ${describeValue(value)}.`,
    );
  }
  return value as AnswerSchema;
}

/**
 * What the answer must be: free text (`null`), or with a schema the JSON value it
 * accepts, described by its JSON Schema when it has one.
 */
export interface AnswerFormat {
  /** The answer's JSON Schema, compacted; null when the schema cannot describe itself. */
  readonly jsonSchema: string | null;
}

/** What the prompts say the answer must be: null for free text, or what the schema says of itself. */
export function answerFormatOf(schema: AnswerSchema | null): AnswerFormat | null {
  if (schema === null) return null;
  // Describing a schema costs about as much as a whole check, and a suite checks thousands of replies with one.
  let format = formats.get(schema);
  if (format === undefined) formats.set(schema, (format = Object.freeze({ jsonSchema: answerJsonSchema(schema) })));
  return format;
}

const formats = new WeakMap<AnswerSchema, AnswerFormat>();

/**
 * How the instructions describe the answer: the schema's own JSON Schema (draft 2020-12)
 * when it can give one (Standard JSON Schema), compacted; otherwise null, and the
 * instructions only say that the application's schema applies.
 */
function answerJsonSchema(schema: AnswerSchema): string | null {
  const converter = (schema['~standard'] as Partial<StandardJSONSchemaV1.Props>).jsonSchema;
  if (typeof converter?.input !== 'function') return null;
  try {
    // The model writes the schema's input: transforms turn it into the output afterwards.
    const { $schema: _dialect, ...jsonSchema } = converter.input({ target: 'draft-2020-12' });
    return JSON.stringify(jsonSchema);
  } catch {
    // The spec lets a library throw for a type it cannot express: the generic wording remains.
    return null;
  }
}

/**
 * What a schema's result means: issues fail the answer; a result without issues passes it
 * with its `value`. Anything else, a result that has neither included, fails it with the
 * reason, and reading a result never throws: it is the schema's output, not Booth's.
 */
export function verdictFromResult(result: unknown): SchemaVerdict {
  try {
    if (typeof result !== 'object' || result === null) {
      return schemaFailure(`the schema returned ${describeValue(result)}, not a Standard Schema result`);
    }
    const { issues } = result as { issues?: unknown };
    if (!issues) {
      if (!('value' in result)) return schemaFailure('the schema returned a result with neither issues nor a value');
      return { passed: true, value: (result as { value: unknown }).value };
    }
    if (!Array.isArray(issues) || issues.length === 0) {
      return schemaFailure(`the schema returned issues that are not a list of issues: ${describeValue(issues)}`);
    }
    const kept = issues.map(schemaIssue);
    return { passed: false, error: describeIssues(kept), issues: Object.freeze(kept) };
  } catch (error) {
    const { name, message } = describeThrown(error);
    return schemaFailure(`the schema returned a result that could not be read (${name}: ${clip(message)})`);
  }
}

/** What a schema's throw means: a failed verdict, as a validator's throw is. */
export function schemaThrew(thrown: unknown): SchemaVerdict {
  const { name, message } = describeThrown(thrown);
  return schemaFailure(`the schema threw ${name}: ${clip(message)}`);
}

/**
 * The answer the schema judges: a copy of the model's value, since the parsed reply is
 * frozen and a schema may change what it is given (Ajv's `useDefaults` does).
 */
export function answerForSchema(draft: { readonly parsed: JsonObject | null }): unknown {
  return structuredClone(draft.parsed?.['answer']);
}

/** A failed verdict Booth gives for the schema, with the reason as the one issue. */
export function schemaFailure(message: string): SchemaVerdict {
  const issues = Object.freeze([Object.freeze({ path: 'answer', message })]);
  return { passed: false, error: describeIssues(issues), issues };
}

function schemaIssue(issue: unknown): SchemaIssue {
  const { message, path } = (typeof issue === 'object' && issue !== null ? issue : {}) as { message?: unknown; path?: unknown };
  return Object.freeze({
    path: clip(pathText(Array.isArray(path) ? path : [])),
    message: clip(typeof message === 'string' && message !== '' ? message : 'is invalid'),
  });
}

/** `answer.city`, `answer.items[0]`, `answer["first name"]`: a path as a reader of the envelope writes it. */
function pathText(path: readonly unknown[]): string {
  let text = 'answer';
  for (const segment of path) {
    const key = typeof segment === 'object' && segment !== null ? (segment as { key?: unknown }).key : segment;
    if (typeof key === 'number') text += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) text += `.${key}`;
    else text += `[${clip(JSON.stringify(typeof key === 'symbol' ? key.toString() : String(key)))}]`;
  }
  return text;
}

/**
 * What the answer's JSON Schema says of types that a member judged alone can break: the
 * answer's own `type`, and for an object answer the `type` of each of its `properties`.
 * Only plain `type` keywords count (a string or a list): a member under `anyOf`, `$ref`,
 * `enum` or without `type` is never judged early. Null without a JSON Schema.
 */
export function answerRuleOf(format: AnswerFormat | null): AnswerRule | null {
  if (format === null || format.jsonSchema === null) return null;
  let rule = rules.get(format);
  if (rule === undefined) rules.set(format, (rule = ruleOf(JSON.parse(format.jsonSchema) as unknown)));
  return rule;
}

const rules = new WeakMap<AnswerFormat, AnswerRule | null>();

const JSON_TYPES: readonly JsonType[] = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];

function typesOf(schema: unknown): readonly JsonType[] | null {
  if (!isPlainObject(schema)) return null;
  const { type } = schema as { type?: unknown };
  const listed = typeof type === 'string' ? [type] : Array.isArray(type) ? type : null;
  return listed !== null && listed.length > 0 && listed.every((t) => JSON_TYPES.includes(t as JsonType)) ? Object.freeze(listed as JsonType[]) : null;
}

function ruleOf(schema: unknown): AnswerRule | null {
  const type = typesOf(schema);
  const members = new Map<string, readonly JsonType[]>();
  const properties = isPlainObject(schema) ? (schema as { properties?: unknown }).properties : undefined;
  if (isPlainObject(properties)) {
    for (const [key, member] of Object.entries(properties as Record<string, unknown>)) {
      const types = typesOf(member);
      if (types !== null) members.set(key, types);
    }
  }
  return type === null && members.size === 0 ? null : { type, members };
}

/**
 * Whether the schema itself refuses a member the type rule flagged, and with which of its
 * issues: the JSON Schema a library writes for its input can be narrower than what it
 * accepts (`z.coerce.number()` takes "42", `.catch()` takes anything). The answer itself is
 * validated whole; a member of an object answer alone, in an object of that member only,
 * and only the issues at that member count (the members still to come are missing, not
 * wrong). Null when the schema accepts the value, validates asynchronously, or throws: the
 * whole reply is then awaited, and the schema judges it as always.
 */
export function schemaRefuses(schema: AnswerSchema, { key, value }: MemberFailure): readonly SchemaIssue[] | null {
  let result: unknown;
  try {
    result = schema['~standard'].validate(key === null ? structuredClone(value) : { [key]: structuredClone(value) });
  } catch {
    return null;
  }
  if (typeof result !== 'object' || result === null || typeof (result as { then?: unknown }).then === 'function') return null;
  const { issues } = result as { issues?: unknown };
  if (!Array.isArray(issues)) return null;
  const at = key === null ? issues : issues.filter((issue) => firstKey(issue) === key);
  return at.length === 0 ? null : Object.freeze(at.map(schemaIssue));
}

function firstKey(issue: unknown): unknown {
  const path = typeof issue === 'object' && issue !== null ? (issue as { path?: unknown }).path : undefined;
  const segment = Array.isArray(path) ? path[0] : undefined;
  return typeof segment === 'object' && segment !== null ? (segment as { key?: unknown }).key : segment;
}

/** The schema's issues with a member read before the reply ended, as the attempt's verdict. */
export function earlyVerdict(issues: readonly SchemaIssue[]): SchemaVerdict {
  return { passed: false, error: describeIssues(issues), issues };
}

/** The issues as one line each, at most `MAX_LISTED_ISSUES` of them: what the retry prompt quotes. */
function describeIssues(issues: readonly SchemaIssue[]): string {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map(({ path, message }) => `${path}: ${message}`);
  const more = issues.length - listed.length;
  return more > 0 ? `${listed.join('; ')}; and ${more} more` : listed.join('; ');
}

/** Text cut to `MAX_ECHO` characters: a schema's message may quote a whole answer. */
export function clip(text: string): string {
  return text.length <= MAX_ECHO ? text : `${text.slice(0, MAX_ECHO - 1)}…`;
}

/** What the envelope's `answer` may be without a schema: the reader's own rule. */
const TEXT_ANSWER = Object.freeze({ type: ['string', 'number', 'boolean'] });

/**
 * The JSON Schema (draft 2020-12) of the reply Booth asks for: the envelope, keys in the
 * order the instructions give, with the answer's own schema inside when it has one. The
 * adapters send it as a provider's structured-output request.
 */
export function replySchemaOf(format: AnswerFormat | null): JsonSchema {
  if (format === null) return TEXT_REPLY;
  let reply = replies.get(format);
  if (reply === undefined) replies.set(format, (reply = envelopeFor(format)));
  return reply;
}

/** One per answer format, like the formats themselves: it is frozen, so runs can share it. */
const replies = new WeakMap<AnswerFormat, JsonSchema>();

function envelopeFor(format: AnswerFormat): JsonSchema {
  // A schema that cannot describe itself leaves the answer open: any JSON value.
  if (format.jsonSchema === null) return envelopeWith({}, {});
  const { $defs, definitions, ...answer } = JSON.parse(format.jsonSchema) as Record<string, unknown>;
  const hoisted = { ...($defs === undefined ? {} : { $defs }), ...(definitions === undefined ? {} : { definitions }) };
  return envelopeWith(rebased(answer), rebased(hoisted));
}

/**
 * A schema's local references, once it sits at `properties.answer` of the envelope: its
 * definitions move to the envelope's root, where `#/$defs/…` still finds them, and every
 * other pointer (`#` itself, for a recursive schema) gains the answer's place as prefix.
 */
function rebased<T extends Record<string, unknown>>(schema: T): T {
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node !== 'object' || node === null) continue;
    const record = node as Record<string, unknown>;
    const ref = record['$ref'];
    if (typeof ref === 'string' && (ref === '#' || ref.startsWith('#/')) && !ref.startsWith('#/$defs/') && !ref.startsWith('#/definitions/')) {
      record['$ref'] = `#/properties/answer${ref.slice(1)}`;
    }
    for (const child of Object.values(record)) pending.push(child);
  }
  return schema;
}

/** A JSON Schema, as plain data. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** Frozen all through: every run shares it, and a callFn must not change it for the next. */
function envelopeWith(answer: JsonSchema, definitions: JsonSchema): JsonSchema {
  const envelope = {
    type: 'object',
    properties: {
      ambiguous: { type: 'boolean' },
      interpretations: { type: 'array', items: { type: 'string' } },
      chosen_interpretation: { type: ['string', 'null'] },
      answer,
      confidence: { type: 'number', minimum: 0, maximum: 1 },
    },
    required: ['ambiguous', 'interpretations', 'chosen_interpretation', 'answer', 'confidence'],
    additionalProperties: false,
    ...definitions,
  };
  return freezeDeep(envelope as unknown as JsonObject) as JsonSchema;
}

const TEXT_REPLY = envelopeWith(TEXT_ANSWER, {});

