import { createRequire } from 'node:module';
import type * as OpenTelemetry from '@opentelemetry/api';
import type { CheckpointContext } from '../machines/checkpoint.js';
import type { Attempt } from './attempt.js';
import { CheckpointError } from './checkpoints.js';
import type { AnyBoothResult } from './result.js';
import { isMissingPackage } from './optional-peers.js';
import { addUsage, type Usage } from './usage.js';
import { describeValue, isPlainObject } from './values.js';

/**
 * OpenTelemetry spans for a check: `booth.check`, a `booth.attempt` child per attempt, and a
 * `booth.sample` child per sample when several are drawn. The spans only watch the machine:
 * each attempt span opens when the trace first shows its attempt and closes when the machine
 * commits it, each state the machine enters is an event on its attempt's span, and no span
 * decides anything.
 *
 * `@opentelemetry/api` is an optional peer dependency, loaded (synchronously, since
 * `check()` is) the first time a check asks for telemetry: a check without it loads nothing.
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
}

type Api = typeof OpenTelemetry;
type Span = OpenTelemetry.Span;
type Context = OpenTelemetry.Context;
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

const TELEMETRY_KEYS = ['tracer', 'recordPrompts', 'recordReplies', 'functionId', 'attributes'];

/** The `telemetry` option, checked; null when off. Loads `@opentelemetry/api` when on. */
export function readTelemetry(value: unknown): TelemetrySettings | null {
  if (value === undefined || value === null || value === false) return null;
  if (value !== true && !isPlainObject(value)) {
    throw new TypeError(
      `Expected \`telemetry\` to be true, false or { tracer?, recordPrompts?, recordReplies?, functionId?, attributes? }, got ${describeValue(value)}.`,
    );
  }
  const given = (value === true ? {} : value) as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (!TELEMETRY_KEYS.includes(key)) {
      throw new TypeError(`Unknown key \`${key}\` in \`telemetry\`; the keys are ${TELEMETRY_KEYS.map((k) => `\`${k}\``).join(', ')}.`);
    }
  }
  const { tracer, recordPrompts, recordReplies, functionId, attributes } = given;
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
  const api = openTelemetryApi();
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

let loaded: Api | undefined;

function openTelemetryApi(): Api {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)('@opentelemetry/api') as Api;
  } catch (error) {
    if (!isMissingPackage(error, '@opentelemetry/api')) throw error;
    throw new Error('`telemetry` needs the package @opentelemetry/api (1.9 or later), an optional peer dependency of boothjs: npm install @opentelemetry/api');
  }
  return loaded;
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
function failed(settings: TelemetrySettings, span: Span, error: unknown, boothWrote = false): void {
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
function errorName(error: unknown): string {
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

/**
 * The error of a failed call or reading, as `booth.attempt.error` and `booth.error` record it.
 * A reading's error is Booth's own (the envelope rule the reply broke), always recorded. A
 * failed call's is the thrower's text (an adapter quoting the provider, an SDK, the caller's
 * callFn): it counts as the call's reply, recorded only with `recordReplies`, like
 * `booth.attempt.reply`, which for a failed call holds that same text. Otherwise the error's
 * name stands for it.
 */
function replyError(reply: Pick<Attempt<unknown>, 'error' | 'callFailed' | 'rawText'>, recordReplies: boolean): string | null {
  if (reply.error === null || recordReplies || !reply.callFailed) return reply.error;
  // A failed call's raw text is "<name>: <message>" (attemptFromCallError).
  const colon = reply.rawText.indexOf(':');
  return `${errorName({ name: colon < 0 ? '' : reply.rawText.slice(0, colon) })} (${UNRECORDED_CALL})`;
}

const UNRECORDED_CALL = 'its message may quote the reply or the prompt: recorded only with telemetry.recordReplies';

interface OpenSpan {
  readonly span: Span;
  readonly context: Context;
}

/**
 * The spans of one run. The interpreter shows it the machine's context after every change
 * (`observe`), runs each model call inside `within`, and ends it with the result or the
 * error that ended the check.
 */
export class RunTelemetry {
  readonly #settings: TelemetrySettings;
  readonly #check: OpenSpan;
  /** The attempt span open now, and its index. */
  #attempt: OpenSpan | null = null;
  #attemptIndex = -1;
  /** Trace steps already shown as span events. */
  #steps = 0;
  /** The sample spans of the attempt under way, by sample. */
  #samples = new Map<number, OpenSpan>();
  #sampleUsage = new Map<number, Usage | null>();
  /** Set when a tracer or span threw: the rest of the run records nothing. */
  #broken = false;

  constructor(settings: TelemetrySettings, entry: 'check' | 'acheck' | 'checkWithEvidence', question: string | null) {
    this.#settings = settings;
    const { api, common } = settings;
    const attributes: Attributes = { ...common, 'booth.entry': entry };
    if (settings.recordPrompts && question !== null) attributes['booth.prompt'] = question;
    const parent = api.context.active();
    let check: OpenSpan = { span: api.trace.wrapSpanContext(api.INVALID_SPAN_CONTEXT), context: parent };
    this.#guard(() => (check = this.#open('booth.check', attributes, parent)));
    this.#check = check;
  }

  /** The run's settings, once known; a resumed run starts where its trace left off. */
  begin(context: CheckpointContext, resumed: boolean): void {
    this.#guard(() => this.#begin(context, resumed));
  }

  /**
   * What the machine did since the last look: states entered, samples started or done, attempts
   * committed. Attempts after the first `reported` wait: until its report is done (`onAttempt`,
   * the checkpoint's save), the next attempt has not begun, and may never if the report throws.
   */
  observe(context: CheckpointContext, reported: number): void {
    this.#guard(() => this.#observe(context, reported));
  }

  /** Runs a model call inside its span's context, so that a provider SDK's own spans nest under it. */
  within<T>(sample: number | undefined, call: () => T): T {
    if (this.#broken) return call();
    const open = (sample === undefined ? null : this.#samples.get(sample)) ?? this.#attempt ?? this.#check;
    return this.#settings.api.context.with(open.context, call);
  }

  /** A call's usage report, for its sample's span: the attempt's span reads the machine's sum. */
  reported(attempt: number, sample: number | undefined, usage: Usage): void {
    if (sample === undefined || attempt !== this.#attemptIndex) return;
    this.#sampleUsage.set(sample, addUsage(this.#sampleUsage.get(sample) ?? null, usage));
  }

  /** Runs the check and ends its spans with the result it returns or the error it throws. */
  around<TResult extends AnyBoothResult>(check: () => TResult): TResult {
    try {
      const result = check();
      this.#guard(() => this.#end(result));
      return result;
    } catch (error) {
      this.#guard(() => this.#fail(error));
      throw error;
    }
  }

  /** `around` for `acheck()`. */
  async aroundAsync<TResult extends AnyBoothResult>(check: () => Promise<TResult>): Promise<TResult> {
    try {
      const result = await check();
      this.#guard(() => this.#end(result));
      return result;
    } catch (error) {
      this.#guard(() => this.#fail(error));
      throw error;
    }
  }

  /**
   * Telemetry never changes what a check does: a tracer or span that throws ends this run's
   * spans, and the error goes to OpenTelemetry's own diagnostic log, where instrumentation reports.
   */
  #guard(work: () => void): void {
    if (this.#broken) return;
    try {
      work();
    } catch (error) {
      this.#broken = true;
      this.#settings.api.diag.error('boothjs: a tracer or span threw; this check records no more telemetry', error);
      // Ended as they are, where the tracer still lets them end, so an exporter is not left waiting for them.
      for (const open of [...this.#samples.values(), this.#attempt, this.#check]) {
        try {
          open?.span.end();
        } catch {
          // This span is the tracer's problem now: it already failed once.
        }
      }
    }
  }

  #begin(context: CheckpointContext, resumed: boolean): void {
    const { settings } = context;
    this.#check.span.setAttributes({
      'booth.threshold': settings.threshold,
      'booth.max_retries': settings.maxRetries,
      'booth.samples': settings.samples,
    });
    if (!resumed) return;
    this.#steps = context.trace.length;
    // A resumed run: its attempt under way gets its span now, before the call it repeats.
    this.#check.span.setAttribute('booth.resumed_attempts', context.attempts.length);
    if (context.status === null) {
      this.#startAttempt(context.attempt);
      this.#attempt!.span.setAttribute('booth.attempt.resumed', true);
    }
  }

  #observe(context: CheckpointContext, reported: number): void {
    const { trace, attempts } = context;
    for (; this.#steps < trace.length; this.#steps += 1) {
      const step = trace[this.#steps]!;
      if (step.attempt > reported) break;
      if (step.attempt !== this.#attemptIndex) {
        this.#endAttempt(context);
        this.#startAttempt(step.attempt);
      }
      this.#attempt!.span.addEvent('booth.state', { 'booth.state': step.state });
    }
    if (context.attempt === this.#attemptIndex) this.#observeSamples(context);
    if (attempts.length > this.#attemptIndex && this.#attempt !== null) this.#endAttempt(context);
  }

  /** The check ended with `result`: an UNCERTAIN or AMBIGUOUS result is an outcome, not an error. */
  #end(result: AnyBoothResult): void {
    const { span } = this.#check;
    span.setAttributes({ 'booth.status': result.status, 'booth.method': result.method, 'booth.attempts': result.attempts.length });
    if (result.settings === null && result.evidenceAgreement !== null) span.setAttribute('booth.evidence_agreement', result.evidenceAgreement);
    span.setAttributes(usageAttributes(result.usage));
    span.end();
  }

  /** The check threw (a wrong argument, an abort, an internal error): every span still open ends in error. */
  #fail(error: unknown): void {
    const { api } = this.#settings;
    for (const open of [...this.#samples.values(), ...(this.#attempt ? [this.#attempt] : [])]) {
      open.span.setStatus({ code: api.SpanStatusCode.ERROR, message: 'the check ended with an error' });
      open.span.end();
    }
    this.#samples.clear();
    this.#attempt = null;
    failed(this.#settings, this.#check.span, error);
    this.#check.span.end();
  }

  #open(name: string, attributes: Attributes, parent: Context): OpenSpan {
    const { api, tracer } = this.#settings;
    const span = tracer.startSpan(name, { attributes }, parent);
    return { span, context: api.trace.setSpan(parent, span) };
  }

  #startAttempt(index: number): void {
    this.#attemptIndex = index;
    this.#attempt = this.#open('booth.attempt', { ...this.#settings.common, 'gen_ai.operation.name': 'chat', 'booth.attempt.index': index }, this.#check.context);
  }

  /** Ends the attempt span open now with what the machine committed for it (nothing, if the run ends uncommitted). */
  #endAttempt(context: CheckpointContext): void {
    const open = this.#attempt;
    if (open === null) return;
    const attempt = context.attempts[this.#attemptIndex];
    const prompt = context.prompts[this.#attemptIndex];
    for (const [sample, sampleSpan] of this.#samples) this.#endSample(sample, sampleSpan, attempt?.samples?.[sample] ?? null);
    this.#samples.clear();
    this.#sampleUsage.clear();
    if (prompt && this.#attemptIndex > 0) open.span.setAttribute('booth.attempt.retry_kind', prompt.kind);
    if (prompt && this.#settings.recordPrompts) open.span.setAttribute('booth.attempt.prompt', prompt.text);
    if (attempt) open.span.setAttributes(attemptAttributes(attempt, this.#settings.recordReplies));
    open.span.end();
    this.#attempt = null;
  }

  #observeSamples(context: CheckpointContext): void {
    context.slots.forEach((slot, sample) => {
      const open = this.#samples.get(sample);
      if (open === undefined && slot.state !== 'queued' && !this.#sampleUsage.has(sample) && this.#attempt !== null) {
        this.#samples.set(sample, this.#open('booth.sample', { ...this.#settings.common, 'gen_ai.operation.name': 'chat', 'booth.sample.index': sample }, this.#attempt.context));
        this.#sampleUsage.set(sample, null);
      } else if (open !== undefined && slot.state === 'done') {
        this.#endSample(sample, open, slot.reply);
        this.#samples.delete(sample);
      }
    });
  }

  #endSample(sample: number, open: OpenSpan, reply: SampleReply | null): void {
    if (reply !== null) open.span.setAttributes(replyAttributes(reply, this.#settings.recordReplies));
    open.span.setAttributes(usageAttributes(this.#sampleUsage.get(sample) ?? null));
    open.span.end();
  }
}

type SampleReply = Pick<Attempt<unknown>, 'rawText' | 'parseOk' | 'confidence' | 'error' | 'callFailed' | 'callTries'>;

function replyAttributes(reply: SampleReply, recordReplies: boolean): Attributes {
  const attributes: Attributes = { 'booth.parse_ok': reply.parseOk, 'booth.call_tries': reply.callTries.length };
  if (reply.confidence !== null) attributes['booth.confidence'] = reply.confidence;
  const error = replyError(reply, recordReplies);
  if (error !== null) attributes['booth.error'] = error;
  if (recordReplies) attributes['booth.reply'] = reply.rawText;
  return attributes;
}

function attemptAttributes(attempt: Attempt<unknown>, recordReplies: boolean): Attributes {
  const attributes: Attributes = {
    'booth.attempt.parse_ok': attempt.parseOk,
    'booth.attempt.call_tries': attempt.callTries.length,
    'booth.attempt.duration_ms': attempt.durationMs,
    ...usageAttributes(attempt.usage),
  };
  if (attempt.confidence !== null) attributes['booth.attempt.confidence'] = attempt.confidence;
  const error = replyError(attempt, recordReplies);
  if (error !== null) attributes['booth.attempt.error'] = error;
  // A validator's or a schema's message may quote the answer: it is part of the reply.
  if (recordReplies && attempt.validationError !== null) attributes['booth.attempt.validation_error'] = attempt.validationError;
  if (recordReplies) attributes['booth.attempt.reply'] = attempt.rawText;
  return attributes;
}

/** The GenAI semantic conventions' token counts, and Booth's own total and cost. */
function usageAttributes(usage: Usage | null): Attributes {
  if (usage === null) return {};
  const attributes: Attributes = {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'booth.usage.total_tokens': usage.totalTokens,
  };
  if (usage.costUsd !== null) attributes['booth.usage.cost_usd'] = usage.costUsd;
  return attributes;
}
