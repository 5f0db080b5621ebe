import type * as OpenTelemetry from '@opentelemetry/api';
import type { CheckpointContext } from '../../machines/checkpoint/types.js';
import { PARSE_FN_THREW, type Attempt } from '../decide/attempt.js';
import type { AnyBoothResult } from '../results/result.js';
import { addUsage, totalUsage, type Usage } from '../decide/usage.js';
import { errorName, failed, type TelemetrySettings } from './settings.js';

type Span = OpenTelemetry.Span;
type Context = OpenTelemetry.Context;
type Attributes = OpenTelemetry.Attributes;

/**
 * The error of a failed call or reading, as `booth.attempt.error` and `booth.error` record it.
 * A reading's error is Booth's own (the envelope rule the reply broke), always recorded. A
 * failed call's is the thrower's text (an adapter quoting the provider, an SDK, the caller's
 * callFn): it counts as the call's reply, recorded only with `recordReplies`, like
 * `booth.attempt.reply`, which for a failed call holds that same text. Otherwise the error's
 * name stands for it. So with a `parseFn` that threw: what follows "parseFn threw: " is the
 * caller's message about the reply.
 */
function replyError(reply: Pick<Attempt<unknown>, 'error' | 'callFailed' | 'rawText'>, recordReplies: boolean): string | null {
  if (reply.error === null || recordReplies) return reply.error;
  if (reply.error.startsWith(PARSE_FN_THREW)) return `${PARSE_FN_THREW.trimEnd()} (${UNRECORDED_CALL})`;
  if (!reply.callFailed) return reply.error;
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
  /** In a cascade, the span of the model asked now, and which model of which round it is. */
  #model: OpenSpan | null = null;
  #modelKey = '';
  /** The first attempt the open model span holds. */
  #modelFirst = 0;
  /** The attempt span open now, and its index. */
  #attempt: OpenSpan | null = null;
  #attemptIndex = -1;
  /** Trace steps already shown as span events. */
  #steps = 0;
  /** The sample spans of the attempt under way, by sample. */
  #samples = new Map<number, OpenSpan>();
  #sampleUsage = new Map<number, Usage | null>();
  /** Clarifications already shown as span events. */
  #clarifications = 0;
  /** Whether a reply streamed: the check's span then says when the verdict came. */
  #streamed = false;
  readonly #startedAt = performance.now();
  /** Set when a tracer or span threw: the rest of the run records nothing. */
  #broken = false;

  constructor(settings: TelemetrySettings, entry: 'check' | 'acheck' | 'clarify' | 'checkWithEvidence', question: string | null) {
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

  /**
   * A streamed reply ended (whole, ended early, or failed): its sample's span, or its attempt's,
   * records the chunks and when the first came; the check's span, when the verdict came.
   */
  streamed(attempt: number, sample: number | undefined, stream: { readonly firstChunkMs: number | null; readonly chunks: number; readonly early: boolean }): void {
    this.#guard(() => {
      this.#streamed = true;
      if (attempt !== this.#attemptIndex) return;
      const open = (sample === undefined ? null : this.#samples.get(sample)) ?? this.#attempt;
      if (!open) return;
      open.span.setAttribute('booth.stream.chunks', stream.chunks);
      if (stream.firstChunkMs !== null) open.span.setAttribute('booth.stream.first_chunk_ms', stream.firstChunkMs);
      if (stream.early) open.span.addEvent('booth.stream.ended_early');
    });
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
      for (const open of [...this.#samples.values(), this.#attempt, this.#model, this.#check]) {
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
      ...budgetAttributes(settings.budget),
    });
    // A cascade's models, named in the order they would be asked: known before any is.
    if (settings.models.length > 1) this.#check.span.setAttribute('booth.models', settings.models.map((m, i) => m.name ?? `model ${i + 1}`));
    if (!resumed) return;
    this.#steps = context.trace.length;
    this.#clarifications = context.clarifications.length;
    // A resumed run: its attempt under way gets its span now, before the call it repeats.
    this.#check.span.setAttribute('booth.resumed_attempts', context.attempts.length);
    if (context.status === null) {
      this.#enterModel(context, context.attempt);
      this.#startAttempt(context.attempt);
      this.#attempt!.span.setAttribute('booth.attempt.resumed', true);
    }
  }

  #observe(context: CheckpointContext, reported: number): void {
    const { trace, attempts, clarifications } = context;
    // The readings are the model's text and the choice the person's: counted, their text recorded only with recordPrompts.
    for (; this.#clarifications < clarifications.length; this.#clarifications += 1) {
      const { readings, chosen, rephrased, attempt } = clarifications[this.#clarifications]!;
      const attributes: Attributes = {
        'booth.clarification.readings': readings.length,
        'booth.clarification.kind': rephrased === null ? 'chose' : 'rephrased',
        'booth.clarification.attempt': attempt,
      };
      if (this.#settings.recordPrompts) attributes['booth.clarification.text'] = rephrased ?? chosen ?? '';
      this.#check.span.addEvent('booth.clarification', attributes);
    }
    for (; this.#steps < trace.length; this.#steps += 1) {
      const step = trace[this.#steps]!;
      if (step.attempt > reported) break;
      if (step.attempt !== this.#attemptIndex) {
        this.#endAttempt(context);
        this.#enterModel(context, step.attempt);
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
    this.#endModel(result.attempts);
    span.setAttributes({ 'booth.status': result.status, 'booth.method': result.method, 'booth.attempts': result.attempts.length });
    if (this.#streamed) span.setAttribute('booth.stream.verdict_ms', performance.now() - this.#startedAt);
    // The model that gave the answer reported, when the run names its models.
    if (typeof result.model === 'string') span.setAttribute('booth.model.name', result.model);
    // Booth's own words for the limit reached; no prompt or reply text is in them.
    if (result.method === 'budget') span.addEvent('booth.budget.stop', { 'booth.budget.detail': result.detail ?? '' });
    if (result.settings === null && result.evidenceAgreement !== null) span.setAttribute('booth.evidence_agreement', result.evidenceAgreement);
    span.setAttributes(usageAttributes(result.usage));
    span.end();
  }

  /** The check threw (a wrong argument, an abort, an internal error): every span still open ends in error. */
  #fail(error: unknown): void {
    const { api } = this.#settings;
    for (const open of [...this.#samples.values(), ...(this.#attempt ? [this.#attempt] : []), ...(this.#model ? [this.#model] : [])]) {
      open.span.setStatus({ code: api.SpanStatusCode.ERROR, message: 'the check ended with an error' });
      open.span.end();
    }
    this.#samples.clear();
    this.#attempt = null;
    this.#model = null;
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
    const parent = this.#model ?? this.#check;
    this.#attempt = this.#open('booth.attempt', { ...this.#settings.common, 'gen_ai.operation.name': 'chat', 'booth.attempt.index': index }, parent.context);
  }

  /**
   * In a cascade, the model span attempt `index` belongs under: the one open, or a new one
   * when the attempt begins the next model (an escalation) or a clarified round, which asks
   * the first model again. A run of one model has no model span: its attempts stay children
   * of the check, as they always were.
   */
  #enterModel(context: CheckpointContext, index: number): void {
    const { models } = context.settings;
    if (models.length < 2) return;
    const round = roundOf(context, index);
    const stage = context.escalations.filter((e) => e.attempt > round && e.attempt <= index).length;
    const key = `${round}:${stage}`;
    if (this.#model !== null && key === this.#modelKey) return;
    this.#endModel(context.attempts);
    const name = models[stage]?.name ?? `model ${stage + 1}`;
    this.#model = this.#open('booth.model', { ...this.#settings.common, 'booth.model.name': name, 'booth.model.index': stage }, this.#check.context);
    this.#modelKey = key;
    this.#modelFirst = index;
  }

  /** Ends the model span open now with what its attempts committed: how many, and what they used. */
  #endModel(attempts: readonly Attempt<unknown>[]): void {
    const open = this.#model;
    if (open === null) return;
    const its = attempts.slice(this.#modelFirst);
    open.span.setAttributes({ 'booth.model.attempts': its.length, ...usageAttributes(totalUsage(its.map((a) => a.usage ?? null))) });
    open.span.end();
    this.#model = null;
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
      // A sample not yet in a wave (`held`), or waiting for a free call (`queued`), has not been asked.
      const asked = slot.state !== 'queued' && slot.state !== 'held';
      if (open === undefined && asked && !this.#sampleUsage.has(sample) && this.#attempt !== null) {
        this.#samples.set(sample, this.#open('booth.sample', { ...this.#settings.common, 'gen_ai.operation.name': 'chat', 'booth.sample.index': sample }, this.#attempt.context));
        this.#sampleUsage.set(sample, null);
      } else if (open !== undefined && (slot.state === 'done' || slot.state === 'skipped')) {
        this.#endSample(sample, open, slot.state === 'skipped' ? SKIPPED : slot.reply);
        this.#samples.delete(sample);
      }
    });
  }

  #endSample(sample: number, open: OpenSpan, reply: SampleReply | typeof SKIPPED | null): void {
    if (reply === SKIPPED || (reply !== null && (reply as { skipped?: unknown }).skipped === true)) {
      // Aborted in flight once the vote was settled: no reply to describe, and no failure.
      open.span.setAttribute('booth.sample.skipped', true);
      open.span.addEvent('booth.sample.skipped');
    } else if (reply !== null) {
      open.span.setAttributes(replyAttributes(reply, this.#settings.recordReplies));
    }
    open.span.setAttributes(usageAttributes(this.#sampleUsage.get(sample) ?? null));
    open.span.end();
  }
}

type SampleReply = Pick<Attempt<unknown>, 'rawText' | 'parseOk' | 'confidence' | 'error' | 'callFailed' | 'callTries'>;

/** A sample whose call was aborted once the vote was settled. */
const SKIPPED = Symbol('skipped');

/** The first attempt of the round attempt `index` is in: 0, or the first after the latest clarification before it. */
function roundOf(context: CheckpointContext, index: number): number {
  let start = 0;
  for (const { attempt } of context.clarifications) if (attempt <= index && attempt > start) start = attempt;
  return start;
}

/** The run's budget, as `booth.budget.*` attributes: only the limits given. */
function budgetAttributes(budget: CheckpointContext['settings']['budget']): Attributes {
  if (budget === null) return {};
  const attributes: Attributes = {};
  if (budget.maxCalls !== null) attributes['booth.budget.max_calls'] = budget.maxCalls;
  if (budget.maxTokens !== null) attributes['booth.budget.max_tokens'] = budget.maxTokens;
  if (budget.maxCostUsd !== null) attributes['booth.budget.max_cost_usd'] = budget.maxCostUsd;
  return attributes;
}

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
