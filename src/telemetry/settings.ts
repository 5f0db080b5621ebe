import type * as OpenTelemetry from '@opentelemetry/api';
import { CheckpointError } from '../stores/store.js';
import { isMissingPackage } from '../util/optional-peers.js';
import { describeValue, isPlainObject } from '../util/values.js';

/**
 * OpenTelemetry spans for a check: `booth.check`, a `booth.attempt` child per attempt, and a
 * `booth.sample` child per sample when several are drawn. The spans only watch the machine:
 * each attempt span opens when the trace first shows its attempt and closes when the machine
 * commits it, each state the machine enters is an event on its attempt's span, and no span
 * decides anything.
 *
 * `@opentelemetry/api` is an optional peer dependency, loaded (synchronously, since
 * `check()` is) the first time a check asks for telemetry: a check without it loads nothing.
 * Booth imports no Node built-in to load it: it asks the runtime for Node's `require` where the
 * runtime hands out built-in modules (Node 20.16+, Deno, Bun), and elsewhere — browsers, edge
 * runtimes, Workers, where a bundler must see the import — takes the module as `telemetry.api`.
 * This file reads the `telemetry` option; run-telemetry.ts keeps a run's spans.
 */

/**
 * An OpenTelemetry `Tracer` from `@opentelemetry/api`. Booth calls its `startSpan`, then the
 * spans' `setAttribute(s)`, `addEvent`, `recordException`, `setStatus` and `end`.
 */
export interface TelemetryTracer {
  startSpan(name: string, options?: object, context?: object): unknown;
}

/** Span attributes, as OpenTelemetry takes them. */
export type TelemetryAttributes = Readonly<
  Record<string, string | number | boolean | readonly (string | null | undefined)[] | readonly (number | null | undefined)[] | readonly (boolean | null | undefined)[] | undefined>
>;

export interface TelemetryOptions {
  /** Where the spans go; default the global provider's tracer named `boothjs`. */
  readonly tracer?: TelemetryTracer | null | undefined;
  /** Put the question and each attempt's prompt on the spans. Off by default: prompts may hold personal data. */
  readonly recordPrompts?: boolean | undefined;
  /** Put each reply's raw text on the spans. Off by default: replies may hold personal data. */
  readonly recordReplies?: boolean | undefined;
  /** Names the call site, as `booth.function_id` on every span, to group the checks one place makes. */
  readonly functionId?: string | null | undefined;
  /** More attributes for every Booth span, such as `gen_ai.request.model`. */
  readonly attributes?: TelemetryAttributes | null | undefined;
  /**
   * The `@opentelemetry/api` module (`import * as api from '@opentelemetry/api'`). Needed only
   * where Booth cannot load it itself: browsers, edge runtimes, Workers, Node before 20.16.
   */
  readonly api?: TelemetryApi | null | undefined;
}

/** The parts of `@opentelemetry/api` Booth uses; the module itself is one. */
export interface TelemetryApi {
  readonly trace: {
    getTracer(name: string): unknown;
    setSpan(context: never, span: never): unknown;
    wrapSpanContext(spanContext: never): unknown;
  };
  readonly context: { active(): unknown; with(context: never, fn: never): unknown };
  readonly diag: { error(message: string, ...args: never[]): void };
  readonly SpanStatusCode: { readonly ERROR: number };
  readonly INVALID_SPAN_CONTEXT: object;
}

type Api = typeof OpenTelemetry;
type Span = OpenTelemetry.Span;
type Attributes = OpenTelemetry.Attributes;

/** How a run's telemetry was asked for, checked. */
export interface TelemetrySettings {
  readonly api: Api;
  readonly tracer: OpenTelemetry.Tracer;
  readonly recordPrompts: boolean;
  readonly recordReplies: boolean;
  /** `functionId` and the caller's attributes: every Booth span carries them. */
  readonly common: Attributes;
}

const TELEMETRY_KEYS = ['tracer', 'recordPrompts', 'recordReplies', 'functionId', 'attributes', 'api'];

/** The `telemetry` option, checked; null when off. Loads `@opentelemetry/api` when on. */
export function readTelemetry(value: unknown): TelemetrySettings | null {
  if (value === undefined || value === null || value === false) return null;
  if (value !== true && !isPlainObject(value)) {
    throw new TypeError(
      `Expected \`telemetry\` to be true, false or { tracer?, recordPrompts?, recordReplies?, functionId?, attributes?, api? }, got ${describeValue(value)}.`,
    );
  }
  const given = (value === true ? {} : value) as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!TELEMETRY_KEYS.includes(key)) {
      throw new TypeError(`Unknown key \`${key}\` in \`telemetry\`; the keys are ${TELEMETRY_KEYS.map((k) => `\`${k}\``).join(', ')}.`);
    }
  }
  const { tracer, recordPrompts, recordReplies, functionId, attributes, api: givenApi } = given;
  if (tracer !== undefined && tracer !== null && typeof (tracer as { startSpan?: unknown }).startSpan !== 'function') {
    throw new TypeError(`Expected \`telemetry.tracer\` to be an OpenTelemetry Tracer (with startSpan), got ${describeValue(tracer)}.`);
  }
  const flag = (name: string, flagValue: unknown): boolean => {
    if (flagValue === undefined) return false;
    if (typeof flagValue === 'boolean') return flagValue;
    throw new TypeError(`Expected \`telemetry.${name}\` to be a boolean, got ${describeValue(flagValue)}.`);
  };
  if (functionId !== undefined && functionId !== null && typeof functionId !== 'string') {
    throw new TypeError(`Expected \`telemetry.functionId\` to be a string, got ${describeValue(functionId)}.`);
  }
  const common: Attributes = { ...readAttributes(attributes) };
  if (typeof functionId === 'string') common['booth.function_id'] = functionId;
  const api = givenApi === undefined || givenApi === null ? openTelemetryApi() : readApi(givenApi);
  return {
    api,
    tracer: (tracer as OpenTelemetry.Tracer | null | undefined) ?? api.trace.getTracer('boothjs'),
    recordPrompts: flag('recordPrompts', recordPrompts),
    recordReplies: flag('recordReplies', recordReplies),
    common,
  };
}

function readAttributes(value: unknown): Attributes {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) {
    throw new TypeError(`Expected \`telemetry.attributes\` to be an object of span attributes, got ${describeValue(value)}.`);
  }
  const attributes: Attributes = {};
  for (const [key, item] of Object.entries(value)) {
    const ok = ['string', 'number', 'boolean', 'undefined'].includes(typeof item) || (Array.isArray(item) && sameKind(item));
    if (!ok) {
      throw new TypeError(
        `Expected \`telemetry.attributes.${key}\` to be a string, number, boolean or an array of one of them, got ${describeValue(item)}.`,
      );
    }
    attributes[key] = item as OpenTelemetry.AttributeValue | undefined;
  }
  return attributes;
}

function sameKind(items: readonly unknown[]): boolean {
  const kinds = new Set(items.filter((item) => item !== null && item !== undefined).map((item) => typeof item));
  return kinds.size <= 1 && [...kinds].every((kind) => kind === 'string' || kind === 'number' || kind === 'boolean');
}

/** `telemetry.api`, checked for what Booth calls on it. */
function readApi(value: unknown): Api {
  const api = value as Partial<Record<'trace' | 'context' | 'diag', Record<string, unknown>>> | null;
  const ok =
    typeof api === 'object' &&
    api !== null &&
    ['getTracer', 'setSpan', 'wrapSpanContext'].every((name) => typeof api.trace?.[name] === 'function') &&
    ['active', 'with'].every((name) => typeof api.context?.[name] === 'function') &&
    typeof api.diag?.['error'] === 'function' &&
    typeof (value as { SpanStatusCode?: { ERROR?: unknown } }).SpanStatusCode?.ERROR === 'number' &&
    typeof (value as { INVALID_SPAN_CONTEXT?: unknown }).INVALID_SPAN_CONTEXT === 'object';
  // The module's default export has trace, context and diag but not SpanStatusCode: errors would go unrecorded.
  if (!ok) {
    throw new TypeError(
      `Expected \`telemetry.api\` to be the @opentelemetry/api module as a namespace (import * as api from '@opentelemetry/api', not its default export), got ${describeValue(value)}.`,
    );
  }
  return value as Api;
}

let loaded: Api | undefined;

function openTelemetryApi(): Api {
  if (loaded) return loaded;
  const require = nodeRequire();
  if (require === null) {
    throw new Error(
      "`telemetry` cannot load @opentelemetry/api in this runtime (a browser, an edge runtime, a Worker, Node before 20.16): pass the module as `telemetry.api` (import * as api from '@opentelemetry/api').",
    );
  }
  try {
    loaded = require('@opentelemetry/api') as Api;
  } catch (error) {
    if (!isMissingPackage(error, '@opentelemetry/api')) throw error;
    throw new Error('`telemetry` needs the package @opentelemetry/api (1.9 or later), an optional peer dependency of boothjs: npm install @opentelemetry/api');
  }
  return loaded;
}

/**
 * Node's `require`, from the runtime rather than an import of `node:module`: a bundle for a
 * browser or a Worker then holds no Node built-in, and a runtime without one (or without a
 * module URL, as in Workers) says so with null instead of failing when Booth is loaded.
 */
function nodeRequire(): ((id: string) => unknown) | null {
  const process = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  // The ES module build has its URL; the CommonJS build, where import.meta is empty, its file name.
  const from: unknown = import.meta.url ?? (typeof __filename === 'string' ? __filename : undefined);
  if (typeof process?.getBuiltinModule !== 'function' || typeof from !== 'string') return null;
  try {
    const module = process.getBuiltinModule('node:module') as { createRequire?: (from: string) => (id: string) => unknown } | undefined;
    return typeof module?.createRequire === 'function' ? module.createRequire(from) : null;
  } catch {
    return null;
  }
}

/** The `booth.check` span of a check that failed on its arguments: it starts and ends in error. */
export function rejectedCheck(settings: TelemetrySettings, entry: string, error: unknown): void {
  // The caller gets the argument error either way: a tracer that throws must not replace it.
  try {
    const span = settings.tracer.startSpan('booth.check', { attributes: { ...settings.common, 'booth.entry': entry } });
    // Booth wrote it, about an option's value: options are settings, not prompts or replies.
    failed(settings, span, error, true);
    span.end();
  } catch (tracerError) {
    settings.api.diag.error('boothjs: a tracer or span threw; this check records no telemetry', tracerError);
  }
}

/**
 * What a span says of an error whose text Booth did not write (the caller's callFn, store or
 * abort reason, a provider, an SDK): it may quote a prompt or a reply, so only its name is
 * recorded unless both are recorded anyway.
 */
const UNRECORDED = 'message not recorded: an error Booth did not write may quote a prompt or a reply; telemetry records it with recordPrompts and recordReplies on';

/**
 * Ends `span` in error with `error`: its name always, its message and stack when Booth wrote
 * the message itself (an argument error, a `CheckpointError`, which never quote a prompt or a
 * reply) or when the caller records both prompts and replies. Otherwise the stack keeps its
 * frames, which say where the error came from, and loses the message at its top.
 */
export function failed(settings: TelemetrySettings, span: Span, error: unknown, boothWrote = false): void {
  const { api, recordPrompts, recordReplies } = settings;
  if ((recordPrompts && recordReplies) || boothWrote || error instanceof CheckpointError) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    return;
  }
  const name = errorName(error);
  const exception: OpenTelemetry.Exception = { name, message: UNRECORDED };
  const frames = stackFrames(error);
  if (frames !== null) exception.stack = `${name}: ${UNRECORDED}\n${frames}`;
  span.recordException(exception);
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: `${name} (${UNRECORDED})` });
}

/** An error's class name, as a span may show it: an identifier, else `Error` (a name is the thrower's to choose). */
export function errorName(error: unknown): string {
  let name: unknown;
  try {
    name = (error as { name?: unknown } | null)?.name;
  } catch {
    // A throwing getter names nothing.
  }
  return typeof name === 'string' && /^[A-Za-z_$][\w$.]{0,99}$/.test(name) ? name : 'Error';
}

/** The `at …` lines of an error's stack, without the message above them; null when there are none. */
function stackFrames(error: unknown): string | null {
  let stack: unknown;
  let name: unknown;
  let message: unknown;
  try {
    ({ stack, name, message } = error as { stack?: unknown; name?: unknown; message?: unknown });
  } catch {
    return null;
  }
  if (typeof stack !== 'string' || typeof name !== 'string' || typeof message !== 'string') return null;
  // V8 writes `name: message` above the frames. The message is cut off by its length, never by
  // looking for the first frame: a message can hold a line that looks like one, and what
  // follows it would reach the span. A stack that does not start so shows no frames.
  const header = message === '' ? name : `${name}: ${message}`;
  if (!stack.startsWith(header)) return null;
  const frames = stack.slice(header.length);
  return frames.startsWith('\n    at ') ? frames.slice(1) : null;
}
