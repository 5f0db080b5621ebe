import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
// Types only: the CLI imports Ajv and ajv-formats at run time just when `--schema` is given (see loadAjv, loadFormats).
import type { Ajv2020, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { describeValue } from '../util/values.js';
import { readRegularFile } from './batch/input.js';
import { isMissingPackage } from '../util/optional-peers.js';

/**
 * `--schema answer.schema.json`: the answer's JSON Schema (draft 2020-12) as the Standard
 * Schema that `acheck` takes. The library judges answers through Standard Schema only, so
 * a schema written as a file needs a validator behind that interface: Ajv, wrapped here,
 * which also hands the file back as its own JSON Schema so the prompt quotes it. Its
 * `format`s are checked by ajv-formats, another optional peer, when it is installed.
 */

/** A Standard Schema that can also state its JSON Schema: what `--schema` gives `acheck`. */
export interface JsonSchemaAnswer extends StandardSchemaV1<unknown, unknown>, StandardJSONSchemaV1<unknown, unknown> {
  readonly '~standard': StandardSchemaV1.Props<unknown, unknown> & StandardJSONSchemaV1.Props<unknown, unknown>;
}

/** The file's contents as JSON Schema allows them: an object, or `true`/`false` for "anything"/"nothing". */
export type JsonSchemaDocument = Readonly<Record<string, unknown>> | boolean;

/** Ajv is an optional peer dependency and `--schema` was given without it. */
export class SchemaLibraryMissing extends Error {
  override readonly name = 'SchemaLibraryMissing';

  constructor(cause: unknown) {
    super('--schema checks answers with Ajv, an optional peer dependency of boothjs, and `ajv` is not installed. Install it with: npm i ajv', { cause });
  }
}

/**
 * The schema uses `format` and ajv-formats, the optional peer dependency that checks formats,
 * is not installed. Ajv alone knows no format, and its strict mode refuses a schema with one
 * rather than let a `"format": "date"` accept any string.
 */
export class FormatLibraryMissing extends Error {
  override readonly name = 'FormatLibraryMissing';
  /** The file, as given on the command line. */
  readonly path: string;

  constructor(path: string, format: string, cause: unknown) {
    super(
      `the schema file ${path} (--schema) uses "format": ${JSON.stringify(format)}; formats are checked by ajv-formats, an optional peer dependency of boothjs, and \`ajv-formats\` is not installed. Install it with: npm i ajv-formats`,
      { cause },
    );
    this.path = path;
  }
}

/** What adds format checks to an Ajv instance: ajv-formats' `addFormats`. */
export type AddFormats = (ajv: InstanceType<typeof Ajv2020>) => unknown;

/** The schema file was read but cannot serve: not JSON, or not a schema Ajv compiles. */
export class SchemaFileError extends Error {
  override readonly name = 'SchemaFileError';
  /** The file, as given on the command line. */
  readonly path: string;

  constructor(path: string, problem: string, cause?: unknown) {
    super(`the schema file ${path} (--schema) ${problem}`, { cause });
    this.path = path;
  }
}

/** The most a schema file may hold: far more than any schema a prompt can quote, far less than what would stall or abort the process. */
export const MAX_SCHEMA_BYTES = 1024 * 1024;

/** The schema file's text: a regular file of at most MAX_SCHEMA_BYTES, else a `CliFileError` (a FIFO would hang, /dev/zero exhaust memory). */
export function readSchemaText(file: string): string {
  return readRegularFile('schema', file, MAX_SCHEMA_BYTES);
}

/** Ajv's draft 2020-12 class, imported now; `SchemaLibraryMissing` when ajv is not installed. */
export async function loadAjv(): Promise<typeof Ajv2020> {
  try {
    // ajv has no "exports" map, so Node's ESM resolver needs the file's own name.
    return (await import('ajv/dist/2020.js')).Ajv2020;
  } catch (error) {
    if (isMissingPackage(error, 'ajv')) throw new SchemaLibraryMissing(error);
    throw error;
  }
}

/**
 * ajv-formats' `addFormats`, imported now; null when ajv-formats is not installed, which
 * matters only to a schema that uses `format`. `load` stands for `import('ajv-formats')`.
 */
export async function loadFormats(load: () => Promise<unknown> = () => import('ajv-formats')): Promise<AddFormats | null> {
  let loaded: unknown;
  try {
    loaded = await load();
  } catch (error) {
    if (isMissingPackage(error, 'ajv-formats')) return null;
    throw error;
  }
  // A CommonJS package: Node's ESM gives its module.exports as the default, a bundler may give its `default`; both are the plugin.
  const plugin = (loaded as { default?: unknown } | null)?.default;
  const addFormats = typeof plugin === 'function' ? plugin : (plugin as { default?: unknown } | null | undefined)?.default;
  if (typeof addFormats !== 'function') throw new TypeError('ajv-formats has no default export that is a function: install ajv-formats 3');
  return addFormats as AddFormats;
}

/**
 * The schema file, compiled: a `CliFileError` when it cannot be read, a `SchemaFileError`
 * when it is not JSON or Ajv refuses it, `SchemaLibraryMissing` without ajv,
 * `FormatLibraryMissing` for a schema with `format` without ajv-formats. Ajv's warnings
 * about the schema (strict mode's "log" checks) go to `warn`, naming the file.
 * `loadFormatsPlugin` is how ajv-formats is loaded: a test can say it is missing.
 */
export async function loadSchemaFile(file: string, warn: (message: string) => void, loadFormatsPlugin: () => Promise<AddFormats | null> = loadFormats): Promise<JsonSchemaAnswer> {
  // Ajv first: without it, the fix is to install it, whatever the file holds.
  const Ajv = await loadAjv();
  const text = readSchemaText(file);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new SchemaFileError(file, `is not JSON: ${(error as Error).message}`, error);
  }
  const addFormats = await loadFormatsPlugin();
  try {
    return compileJsonSchema(document, Ajv, (message) => warn(`${file}: ${message}`), addFormats);
  } catch (error) {
    const { message } = error as Error;
    // Strict mode refuses a format no plugin added: that is every format when ajv-formats is missing.
    const format = /^unknown format "(.*)" ignored in schema/.exec(message)?.[1];
    if (format !== undefined && addFormats === null) throw new FormatLibraryMissing(file, format, error);
    throw new SchemaFileError(file, `is not a JSON Schema (draft 2020-12) that Ajv can compile: ${message}${compileHint(message)}`, error);
  }
}

/**
 * `document` compiled by `Ajv` as a `JsonSchemaAnswer`, with the format checks of
 * `addFormats` when given (else a schema using `format` is refused); throws what Ajv throws
 * for a schema it refuses.
 */
export function compileJsonSchema(document: unknown, Ajv: typeof Ajv2020, warn: (message: string) => void, addFormats: AddFormats | null = null): JsonSchemaAnswer {
  // Ajv's own complaint about an array ("data must be object,boolean" once per item) hides the point.
  if (!isSchemaDocument(document)) {
    throw new TypeError(`a JSON Schema is an object or a boolean, not ${describeValue(document)}`);
  }
  const logged = (...parts: unknown[]) => warn(parts.map(String).join(' '));
  // allErrors: the retry prompt should list every issue, so one retry can fix them all.
  const ajv = new Ajv({ allErrors: true, logger: { log: logged, warn: logged, error: logged } });
  addFormats?.(ajv);
  return standardSchemaOf(document, ajv.compile(document));
}

function isSchemaDocument(value: unknown): value is JsonSchemaDocument {
  return typeof value === 'boolean' || (typeof value === 'object' && value !== null && !Array.isArray(value));
}

function standardSchemaOf(document: JsonSchemaDocument, validate: ValidateFunction): JsonSchemaAnswer {
  const asJsonSchema = (options: StandardJSONSchemaV1.Options): Record<string, unknown> => {
    // The spec asks a library to throw for a target it cannot give: the file is 2020-12 and is not translated.
    if (options.target !== 'draft-2020-12') throw new Error(`the schema file is JSON Schema draft 2020-12, not ${options.target}`);
    // The boolean schemas in their object form, since the spec's converters return objects.
    if (document === true) return {};
    if (document === false) return { not: {} };
    return structuredClone(document);
  };
  return {
    '~standard': {
      version: 1,
      vendor: 'ajv',
      validate: (value) => {
        const verdict: unknown = validate(value);
        if (verdict === true) return { value };
        if (verdict === false) return { issues: issuesOf(validate.errors ?? [], value) };
        // A schema with "$async": true returns a Promise, which rejects with Ajv's ValidationError.
        return Promise.resolve(verdict).then(
          () => ({ value }),
          (error: unknown) => {
            const errors = (error as { validation?: unknown; errors?: unknown } | null)?.errors;
            if ((error as { validation?: unknown } | null)?.validation === true && Array.isArray(errors)) return { issues: issuesOf(errors as ErrorObject[], value) };
            throw error;
          },
        );
      },
      // The file describes what the model writes; Ajv changes nothing (no defaults, no coercion), so input and output agree.
      jsonSchema: { input: asJsonSchema, output: asJsonSchema },
    },
  };
}

function issuesOf(errors: readonly ErrorObject[], value: unknown): StandardSchemaV1.Issue[] {
  return errors.map((error) => ({ message: messageOf(error), path: pathOf(error.instancePath, value) }));
}

/**
 * Ajv's message, with the property's name where Ajv leaves it in `params` only: a model
 * told just "must NOT have additional properties" cannot tell which one to drop.
 */
function messageOf(error: ErrorObject): string {
  const message = error.message ?? `fails "${error.keyword}"`;
  const params = error.params as { additionalProperty?: unknown; unevaluatedProperty?: unknown };
  const extra = error.keyword === 'additionalProperties' ? params.additionalProperty : error.keyword === 'unevaluatedProperties' ? params.unevaluatedProperty : undefined;
  return typeof extra === 'string' ? `${message}: ${JSON.stringify(extra)}` : message;
}

/**
 * Ajv's `instancePath` (a JSON Pointer) as Standard Schema path segments. A pointer cannot
 * tell an array index from an object key made of digits, so the value decides: a segment
 * is a number only where the value at that point is an array.
 */
function pathOf(pointer: string, value: unknown): PropertyKey[] {
  if (pointer === '') return [];
  const path: PropertyKey[] = [];
  let node = value;
  for (const escaped of pointer.slice(1).split('/')) {
    // RFC 6901: "~1" before "~0", so that "~01" becomes "~1" and not "/".
    const segment = escaped.replaceAll('~1', '/').replaceAll('~0', '~');
    const key: PropertyKey = Array.isArray(node) && /^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment;
    path.push(key);
    node = typeof node === 'object' && node !== null ? (node as Record<PropertyKey, unknown>)[key] : undefined;
  }
  return path;
}

/** What to do about the refusals a newcomer meets first: Ajv's own words do not say. */
function compileHint(message: string): string {
  if (message.startsWith('unknown format')) {
    return '. ajv-formats checks no such format: remove it from the schema, or use one it knows (such as date, time, date-time, email, uri, uuid)';
  }
  if (message.startsWith('no schema with key or ref "http://json-schema.org/')) {
    return '. Booth reads draft 2020-12: remove "$schema" or set it to "https://json-schema.org/draft/2020-12/schema"';
  }
  return '';
}
