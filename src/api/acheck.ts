import { resultOf } from '../results/result-from.js';
import { runSchema, runValidator } from '../engine/verdicts.js';
import { type CallNeed, type CallOutcome, CheckpointRun, modelFor, readCheckpoint, type SampleNeed, sampleEvent } from '../engine/checkpoint-run.js';
import { readReplyStream, type StreamTarget } from '../engine/streamed-call.js';
import { isReplyStream } from '../reply/reply-streams.js';
import { answerFormatOf, answerRuleOf } from '../decide/schema.js';
import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import { type AsyncCheckOptions, readCheckArguments, type TypedAsyncCheckOptions } from './options.js';
import type { CheckSettings } from '../engine/settings.js';
import { nextMacrotask } from '../util/macrotask.js';
import { RunTelemetry } from '../telemetry/run-telemetry.js';
import type { CheckResult, TypedCheckResult } from '../results/result.js';
import { isThenable } from '../util/values.js';
import type { Snapshot } from 'xstate';

/**
 * The asynchronous `check()`: `callFn` may return the text or a Promise of it, and
 * `onAttempt` is awaited. With `signal`, aborting rejects with `signal.reason` at once,
 * without waiting for the call in flight, and no further call is made. Timeouts, the
 * deadline and call retries are states of the machine; this loop only waits for them.
 *
 * @example
 * const result = await acheck((prompt, { signal }) => llm(prompt, { signal }), question, { timeoutMs: 30_000 });
 */
export function acheck<T>(
  callFn: AsyncCallFn,
  prompt: string,
  options: TypedAsyncCheckOptions<T>,
): Promise<TypedCheckResult<T>>;
export function acheck(callFn: AsyncCallFn, prompt: string, options?: AsyncCheckOptions | null): Promise<CheckResult>;
/** A schema that may be absent: the answer's type is known only at run time. */
export function acheck(
  callFn: AsyncCallFn,
  prompt: string,
  options?: AsyncCheckOptions<unknown> | null,
): Promise<CheckResult<unknown, unknown>>;
export function acheck(callFn: AsyncCallFn, prompt: string, options?: object | null): Promise<CheckResult<unknown, unknown>> {
  // Not an async function itself: one wrapped in another holds a second promise per check in flight.
  let settings: CheckSettings;
  try {
    settings = readCheckArguments('acheck', callFn, prompt, options);
  } catch (error) {
    return Promise.reject(error);
  }
  if (settings.telemetry === null) return runAcheck(callFn, prompt, settings, null);
  const telemetry = new RunTelemetry(settings.telemetry, 'acheck', prompt);
  return telemetry.aroundAsync(() => runAcheck(callFn, prompt, settings, telemetry));
}

/** A result waiting for the person who asked, as a run of the machine, and their answer: what `clarify()` continues. */
export interface Continuation {
  readonly snapshot: Snapshot<unknown>;
  readonly choice: unknown;
}

export async function runAcheck(
  callFn: AsyncCallFn,
  prompt: string,
  settings: CheckSettings,
  telemetry: RunTelemetry | null,
  continued: Continuation | null = null,
): Promise<CheckResult<unknown, unknown>> {
  const { checkpoint, onPartial } = settings;
  // `onPartial` is the caller's code, run mid-stream: its throw stops the run as an abort would, with that error.
  const halt = onPartial ? new AbortController() : null;
  const signal = halt ? (settings.signal ? AbortSignal.any([settings.signal, halt.signal]) : halt.signal) : settings.signal;
  signal?.throwIfAborted();
  const saved = checkpoint ? await checkpoint.store.load(checkpoint.key) : undefined;
  signal?.throwIfAborted();
  const resumed =
    continued?.snapshot ??
    (checkpoint && saved !== undefined && saved !== null
      ? await readCheckpoint(saved, checkpoint.key, checkpoint.store.locate?.(checkpoint.key) ?? null, prompt, settings)
      : undefined);
  // Booth abandons a lone call only when it can time out: only then is it given a signal of
  // Booth's own, and only then can the machine move on while it is in flight. Without a
  // timeout or deadline no controller is made and no change is waited for during the call: a
  // pending acheck() holds less. A sample can always be abandoned: another sample failing for
  // good ends the vote.
  const abandons = settings.timeoutMs !== null || settings.deadlineMs !== null;
  const run = new CheckpointRun(prompt, settings, resumed, telemetry);
  const streams = new Streams(run, settings, telemetry, halt);
  // Sample calls run side by side: each settles into the machine by itself, if it still waits for it.
  // Made for the first sample: a lone call has nothing to abort.
  let samplesInFlight: Map<number, AbortController> | null = null;
  const inbox = new SampleInbox();
  try {
    // Inside the try: a refused answer still stops the run, whose resume armed its timers.
    if (continued) run.clarify(continued.choice, 'choice');
    else if (settings.clarification !== null && run.answer(settings.clarification, 'clarification') === 'none') {
      throw new TypeError(
        `\`clarification\` was given, but no run under key ${JSON.stringify(checkpoint!.key)} waits for it: none is saved, the run ended (answered, or AMBIGUOUS once \`maxClarifications\` was spent) or is under way with another answer, or it never waited for one. Continue a result you hold with clarify(result, choice, callFn).`,
      );
    }
    for (;;) {
      const need = run.next();
      switch (need.kind) {
        case 'call': {
          // Every call gets Booth's signal: a reply that streams may be ended early, whatever the timeouts.
          const call = new AbortController();
          const reply = called(modelFor(need, callFn, settings), need.prompt, callInfo(need, run, signal, call), telemetry, streams, need, call);
          let outcome: CallOutcome | undefined;
          // A stream's news changes the run without moving it on: only a move away from this call ends the wait.
          do outcome = (await untilAborted(abandons ? Promise.race([reply, run.changed()]) : reply, signal)) as CallOutcome | undefined;
          while (outcome === undefined && abandons && run.wantsCall(need.call));
          signal?.throwIfAborted();
          // The machine moved on without this call (it timed out, the deadline passed, a streamed reply decided early): drop its reply.
          if (outcome !== undefined) run.send(outcome);
          else abort(call);
          break;
        }
        case 'sample': {
          const call = new AbortController();
          (samplesInFlight ??= new Map()).set(need.call, call);
          void called(modelFor(need, callFn, settings), need.prompt, callInfo(need, run, signal, call), telemetry, streams, need, call).then((outcome) => {
            samplesInFlight?.delete(need.call);
            // A streamed sample the machine decided on early, or gave up on, has nothing left to hand over.
            if (outcome === undefined) return;
            // Asked when the reply is handed over: the machine may have given up on it meanwhile.
            inbox.deliver(outcome, () => {
              if (run.wantsCall(need.call)) run.send(sampleEvent(outcome, need));
            });
          });
          // callFn may have aborted synchronously: then no other sample is called.
          signal?.throwIfAborted();
          break;
        }
        case 'wait':
          await untilAborted(run.changed(), signal);
          if (samplesInFlight) abandon(samplesInFlight, (token) => !run.wantsCall(token));
          break;
        case 'schema': {
          // An asynchronous schema may outlast the deadline; the machine then moves on without it.
          const judged = await untilAborted(Promise.race([runSchema(settings.schema!, need.answer), run.changed()]), signal);
          signal?.throwIfAborted();
          if (judged !== undefined) run.send(judged);
          break;
        }
        case 'validate':
          run.send(runValidator(settings, need.answer));
          break;
        case 'report': {
          const returned = settings.onAttempt?.(need.index, need.attempt);
          if (isThenable(returned)) await untilAborted(Promise.resolve(returned), signal);
          signal?.throwIfAborted();
          if (checkpoint) await checkpoint.store.save(checkpoint.key, run.checkpoint(checkpoint.key));
          break;
        }
        case 'awaiting':
          // The store keeps the run, waiting: a later acheck() with its key and the person's `clarification` goes on.
          return resultOf(need.output);
        case 'done':
          if (checkpoint) await checkpoint.store.delete(checkpoint.key);
          return resultOf(need.output);
      }
    }
  } finally {
    if (samplesInFlight) abandon(samplesInFlight, () => true);
    run.stop();
  }
}

/**
 * A sample reply this long or longer is handed to the machine in a macrotask of its own:
 * reading it (and making its vote key) takes a few milliseconds a megabyte. Shorter ones, the
 * usual, are handed over at once, as before.
 */
const HEAVY_REPLY_CHARS = 64 * 1024;

/**
 * Hands sample replies to the machine, long ones one macrotask apart. Sample calls that
 * settle together (a provider that answers at once, a batch of responses read in one go)
 * would otherwise all be read in one stretch of the event loop: 20 replies of 1 MB held it
 * for over 400 ms, long enough to starve timers, sockets and a queue worker's lock renewal.
 * The machine decides the same either way; this only chooses when it is told. In order of
 * arrival: a short reply behind a long one waits its turn.
 */
class SampleInbox {
  readonly #waiting: Array<() => void> = [];

  deliver(outcome: CallOutcome, hand: () => void): void {
    const heavy = outcome.type === 'model.replied' && typeof outcome.reply === 'string' && outcome.reply.length >= HEAVY_REPLY_CHARS;
    if (!heavy && this.#waiting.length === 0) return hand();
    this.#waiting.push(hand);
    if (this.#waiting.length === 1) nextMacrotask(this.#next);
  }

  readonly #next = (): void => {
    const hand = this.#waiting.shift();
    if (this.#waiting.length > 0) nextMacrotask(this.#next);
    hand?.();
  };
}

/**
 * What callFn is told about a call: with the caller's signal, Booth's own (`call`, when it
 * may abandon the call) or both combined. Written out in the documented key order: a spread
 * of a literal-shaped object is several times slower in V8.
 */
function callInfo(
  need: Omit<CallNeed, 'kind'> & { readonly sample?: number },
  run: CheckpointRun,
  signal: AbortSignal | null,
  call: AbortController | null,
): CallInfo {
  const { attempt, replySchema, sample, question, messages } = need;
  const reportUsage = run.usageReporter(need);
  const callSignal = call ? (signal ? AbortSignal.any([signal, call.signal]) : call.signal) : signal;
  if (sample === undefined) {
    return callSignal ? { attempt, replySchema, question, messages, reportUsage, signal: callSignal } : { attempt, replySchema, question, messages, reportUsage };
  }
  return callSignal
    ? { attempt, replySchema, sample, question, messages, reportUsage, signal: callSignal }
    : { attempt, replySchema, sample, question, messages, reportUsage };
}

/** Aborts the sample calls the machine no longer waits for: timed out, or the run is over. */
function abandon(inFlight: Map<number, AbortController>, gone: (token: number) => boolean): void {
  for (const [token, call] of inFlight) {
    if (!gone(token)) continue;
    inFlight.delete(token);
    abort(call);
  }
}

function abort(call: AbortController): void {
  call.abort(new DOMException('Booth no longer waits for this call', 'AbortError'));
}

/** With telemetry a call runs inside its attempt's (or sample's) span, so a provider SDK's spans nest under it. */
function called(
  callFn: AsyncCallFn,
  prompt: string,
  info: CallInfo,
  telemetry: RunTelemetry | null,
  streams: Streams,
  need: CallNeed | SampleNeed,
  call: AbortController,
): Promise<CallOutcome | undefined> {
  const made = () => callModel(callFn, prompt, info, streams, need, call);
  return telemetry ? telemetry.within(info.sample, made) : made();
}

/**
 * The streams of one run: what each streamed call reports to, and which calls and samples
 * have shown text before (the next stream of the same replaces it).
 */
class Streams {
  readonly #run: CheckpointRun;
  readonly #settings: CheckSettings;
  readonly #telemetry: RunTelemetry | null;
  readonly #halt: ((error: unknown) => void) | null;
  /** The samples (and, as -1, the lone call) that streamed so far. */
  readonly #shown = new Set<number>();

  constructor(run: CheckpointRun, settings: CheckSettings, telemetry: RunTelemetry | null, halt: AbortController | null) {
    this.#run = run;
    this.#settings = settings;
    this.#telemetry = telemetry;
    this.#halt = halt ? (error) => halt.abort(error) : null;
  }

  /** What the call `need` asked for reports to, once its reply turns out to stream. */
  target(need: CallNeed | SampleNeed, controller: AbortController): StreamTarget {
    const lane = need.kind === 'sample' ? need.sample : -1;
    const replaces = this.#shown.has(lane);
    this.#shown.add(lane);
    return {
      run: this.#run,
      call: need.call,
      attempt: need.attempt,
      sample: need.kind === 'sample' ? need.sample : undefined,
      model: this.#run.modelName(need.stage),
      rule: answerRuleOf(this.#settings.schema === null ? null : answerFormatOf(this.#settings.schema)),
      schema: this.#settings.schema,
      onPartial: this.#settings.onPartial,
      replaces,
      controller,
      halt: this.#halt,
      telemetry: this.#telemetry,
    };
  }
}

/**
 * The call's outcome as the machine's event; never rejects. A `then` rather than an async
 * function: a pending async function holds its frame and the closures of its `await`, which
 * the heap of every acheck() in flight would carry. `Promise.resolve` adopts a Promise or
 * other thenable as `await` does, in as many ticks.
 */
function callModel(
  callFn: AsyncCallFn,
  prompt: string,
  info: CallInfo,
  streams: Streams,
  need: CallNeed | SampleNeed,
  call: AbortController,
): Promise<CallOutcome | undefined> {
  let reply: ReturnType<AsyncCallFn>;
  try {
    reply = callFn(prompt, info);
  } catch (error) {
    return Promise.resolve(failed(error));
  }
  return Promise.resolve(reply).then((text) => (isReplyStream(text) ? readReplyStream(text, streams.target(need, call)) : replied(text)), failed);
}

function replied(reply: unknown): CallOutcome {
  return { type: 'model.replied', reply };
}

function failed(error: unknown): CallOutcome {
  return { type: 'model.failed', error };
}

/** Settles like `promise`, or rejects with `signal.reason` as soon as the signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | null): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
