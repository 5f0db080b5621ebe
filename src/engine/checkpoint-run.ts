import type { Snapshot } from 'xstate';
import type { CheckpointContext, CheckpointEvent, CheckpointOutput } from '../../machines/checkpoint/types.js';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { checkpointOutput, contextOf, spentOf } from '../../machines/checkpoint/context.js';
import { nextPrompt } from '../../machines/checkpoint/effects.js';
import { guards, planOf, stageOf, voteSettled } from '../../machines/checkpoint/guards.js';
import type { Attempt } from '../decide/attempt.js';
import { type CallRetryPolicy, failedForGood } from '../decide/call-retries.js';
import { type Checkpoint, CheckpointError, digest, FORMAT, VERSION } from '../stores/store.js';
import { decidedState, type Engine, startEngine } from './engines.js';
import { failIfBroken } from './machine-run.js';
import type { CheckSettings } from './settings.js';
import type { MachineInput } from '../options/machine-input.js';
import type { RunTelemetry } from '../telemetry/run-telemetry.js';
import { type UsageReport, usageFromReport } from '../decide/usage.js';
import { answerForSchema, answerFormatOf, type JsonSchema, replySchemaOf } from '../decide/schema.js';
import { checkSnapshot, kindOf } from '../results/stored.js';
import { budgetStop } from '../decide/budget.js';
import { isSettled, type SamplePlan, tallyOfVote } from '../decide/sampling.js';
import { type ChatMessage, chatMessages, type Clarification, clarifiedQuestion, firstPrompt, instructions } from '../decide/prompts.js';
import { AMBIGUOUS, DEFAULT_MAX_CLARIFICATIONS } from '../decide/constants.js';
import { MAX_REPHRASED_CHARS, readChoice } from '../decide/clarification.js';

/** The state a run waits in for a person, and the actions that give a final state its verdict. */
const WAITING = 'awaitingClarification';
const VERDICT_ACTIONS: readonly unknown[] = ['conclude', 'settle'];

/** What the machine needs next from its interpreter. */
export type Need =
  | { readonly kind: 'report'; readonly index: number; readonly attempt: Attempt<unknown> }
  | CallNeed
  /** One sample's call: answer it with `sampleEvent()`, naming the sample and the call. */
  | SampleNeed
  | { readonly kind: 'schema'; readonly answer: unknown }
  | { readonly kind: 'validate'; readonly answer: unknown }
  | { readonly kind: 'wait' }
  /** The question is ambiguous and the run waits for the person who asked: a store keeps it so; the result so far is AMBIGUOUS. */
  | { readonly kind: 'awaiting'; readonly output: CheckpointOutput<unknown> }
  | { readonly kind: 'done'; readonly output: CheckpointOutput<unknown> };

/** One call: its prompt as one string, the caller's question, and the whole chat as messages. */
export interface CallNeed {
  readonly kind: 'call';
  readonly prompt: string;
  readonly question: string;
  readonly messages: readonly ChatMessage[];
  readonly attempt: number;
  readonly replySchema: JsonSchema;
  /** Which model of the cascade to ask: 0 for the caller's callFn, then each of `escalate`. */
  readonly stage: number;
  /** The call's token, unique within the run: what a streamed reply's news names (`wantsCall()`). */
  readonly call: number;
}

export interface SampleNeed extends Omit<CallNeed, 'kind'> {
  readonly kind: 'sample';
  readonly sample: number;
  readonly call: number;
}

/** The model a call asks: the caller's callFn, or the cascade's model the machine has moved on to. */
export function modelFor<TFn>(need: { readonly stage: number }, callFn: TFn, settings: { readonly escalate: readonly { readonly call: unknown }[] }): TFn {
  return need.stage === 0 ? callFn : (settings.escalate[need.stage - 1]!.call as TFn);
}

/** A call's outcome as the event of the sample it was made for. */
export function sampleEvent(outcome: CallOutcome, { sample, call }: SampleNeed): CheckpointEvent {
  return outcome.type === 'model.replied'
    ? { type: 'sample.replied', sample, call, reply: outcome.reply }
    : { type: 'sample.failed', sample, call, error: outcome.error };
}

export type CallOutcome = Extract<CheckpointEvent, { type: 'model.replied' | 'model.failed' }>;

/**
 * One run of the checkpoint machine, seen from an interpreter: a sequence of needs.
 * Each finished attempt is reported before anything else happens, so `onAttempt(n)`
 * always runs before the call of attempt n + 1 and before the result is returned.
 */
export class CheckpointRun {
  readonly #engine: Engine;
  #reported = 0;
  /** The sample calls already handed out, by token: each is made once. Made by the first sample: most runs have none. */
  #handedOut: Set<number> | null = null;
  /** Who waits for the machine to change on its own; null while nobody does, so a pending call holds no array. */
  #waiters: Array<() => void> | null = null;
  /** True while a usage report is sent: the machine only adds it up, and nobody waiting should wake. */
  #reporting = false;

  /** Watches the run for spans, when the caller asked for telemetry. */
  readonly #telemetry: RunTelemetry | null;

  /** Starts a run, or resumes the one in `checkpoint` (already checked by `readCheckpoint`). */
  constructor(prompt: string, settings: CheckSettings, snapshot?: Snapshot<unknown>, telemetry: RunTelemetry | null = null) {
    this.#telemetry = telemetry;
    const input = machineInput(prompt, settings);
    this.#engine = startEngine(input, snapshot, settings.inspect);
    this.#engine.onChange(() => {
      if (!this.#reporting) this.#wake();
    });
    telemetry?.begin(this.#engine.view().context, snapshot !== undefined);
    if (snapshot) {
      this.#reported = this.#engine.view().context.attempts.length;
      if (this.#engine.view().status === 'active') this.#engine.send({ type: 'booth.resumed' });
    }
  }

  next(): Need {
    const snapshot = this.#engine.view();
    failIfBroken(snapshot);
    const { context } = snapshot;
    this.#telemetry?.observe(context, this.#reported);
    const unreported = context.attempts[this.#reported];
    if (unreported) return { kind: 'report', index: this.#reported++, attempt: unreported };
    if (snapshot.status === 'done' && snapshot.output) return { kind: 'done', output: snapshot.output };
    const prompt = context.prompts[context.attempt];
    if (snapshot.value === 'calling' && prompt) {
      // Made once per answer format and shared (replySchemaOf keeps it): a lookup per call.
      const { settings } = context;
      return {
        kind: 'call',
        prompt: prompt.text,
        question: settings.prompt,
        messages: chatMessages(settings, prompt),
        attempt: context.attempt,
        replySchema: replySchemaOf(settings.answerFormat),
        stage: stageOf(context),
        call: context.calls - 1,
      };
    }
    if (snapshot.value === 'sampling') {
      const handedOut = (this.#handedOut ??= new Set());
      const slot = context.slots.findIndex((s) => s.state === 'calling' && !handedOut.has(s.call));
      if (slot < 0) return { kind: 'wait' };
      const { call } = context.slots[slot]!;
      handedOut.add(call);
      const { settings } = context;
      const replySchema = replySchemaOf(settings.answerFormat);
      const messages = chatMessages(settings, prompt!);
      return { kind: 'sample', prompt: prompt!.text, question: settings.prompt, messages, attempt: context.attempt, sample: slot, call, replySchema, stage: stageOf(context) };
    }
    if (snapshot.value === 'schemaGate') return { kind: 'schema', answer: answerForSchema(context.draft) };
    if (snapshot.value === 'validationGate') return { kind: 'validate', answer: context.draft.answer };
    if (snapshot.value === 'backingOff') return { kind: 'wait' };
    if (snapshot.value === WAITING) return { kind: 'awaiting', output: checkpointOutput(context) };
    throw new Error(`Booth internal error: the checkpoint machine rests in ${JSON.stringify(snapshot.value)}`);
  }

  /**
   * Hands the run, made waiting from a result the caller holds, the person's answer: `choice`
   * read against the readings of that result (a `TypeError` naming `name` when it is none).
   */
  clarify(choice: unknown, name: string): void {
    this.#engine.send(readChoice(choice, this.#engine.view().context.draft.interpretations, name));
  }

  /**
   * Hands the run kept in a store the person's answer, for the run waiting for it: `choice` read against
   * the readings offered (a `TypeError` naming `name` when it is none of them). `'given'`
   * when this answer was handed over before — the retried call of one that died after it
   * did, the round under way, ended or waiting again — so it is not given twice; `'none'`
   * when there is no run it answers.
   */
  answer(choice: unknown, name: string): 'sent' | 'given' | 'none' {
    const { value, context } = this.#engine.view();
    const last = context.clarifications.at(-1);
    const repeated = last !== undefined && answers(choice, last);
    if (value !== WAITING) return repeated ? 'given' : 'none';
    const readings = context.draft.interpretations;
    if (last !== undefined && typeof choice === 'number') {
      // An index cannot say which round's readings it counts in: given again after a crash, it would pick from the next round's.
      throw new TypeError(
        `Expected \`${name}\` to be a reading's exact text or { rephrased: '…' }, got an index: the run under this key was clarified before, so an index could count in readings the person never saw.`,
      );
    }
    // The same words again are the retried call, unless they are one of the readings offered now.
    if (repeated && !(typeof choice === 'string' && readings.includes(choice))) return 'given';
    this.#engine.send(readChoice(choice, readings, name));
    return 'sent';
  }

  /** Whether the machine still waits for this call (a sample's, or the lone call's): a call it gave up on is abandoned. */
  wantsCall(call: number): boolean {
    const { status, value, context } = this.#engine.view();
    if (status !== 'active') return false;
    if (value === 'calling') return context.calls - 1 === call;
    return value === 'sampling' && context.slots.some((s) => s.state === 'calling' && s.call === call);
  }

  /** The name of the model at `stage` of the cascade; null when the run names none. */
  modelName(stage: number): string | null {
    return this.#engine.view().context.settings.models[stage]?.name ?? null;
  }

  /** Tells the machine what the model or the validator did; it decides synchronously. */
  send(event: CheckpointEvent): void {
    this.#engine.send(event);
  }

  /**
   * The `reportUsage` a call of `attempt` is given: each report becomes the machine's
   * `model.usage` event, for that attempt. A call abandoned after the run ended has nobody to tell.
   */
  usageReporter({ attempt, sample }: { readonly attempt: number; readonly sample?: number }): (report: UsageReport) => void {
    return (report) => {
      const usage = usageFromReport(report);
      if (this.#engine.view().status !== 'active') return;
      this.#telemetry?.reported(attempt, sample, usage);
      this.#reporting = true;
      try {
        this.#engine.send({ type: 'model.usage', usage, attempt });
      } finally {
        this.#reporting = false;
      }
    };
  }

  /** Settles when the machine next changes on its own: a timeout, the deadline, the end of a backoff. */
  changed(): Promise<void> {
    return new Promise((resolve) => (this.#waiters ??= []).push(resolve));
  }

  /** The run so far, as a store keeps it. */
  checkpoint(key: string): Checkpoint {
    return { format: FORMAT, version: VERSION, key, snapshot: withoutAgree(this.#engine.persisted()) };
  }

  /** Stops the run; whoever waits for a change is woken, and finds the run no longer wants any call (a stream still flowing is ended). */
  stop(): void {
    this.#engine.stop();
    this.#wake();
  }

  #wake(): void {
    if (this.#waiters === null) return;
    const waiters = this.#waiters;
    this.#waiters = null;
    for (const wake of waiters) wake();
  }
}

/** The machine's input for a check: the arguments were checked by readCheckArguments(), with the same rules as the machine's. */
function machineInput(prompt: string, settings: CheckSettings): MachineInput {
  return {
    prompt,
    threshold: settings.threshold,
    maxRetries: settings.maxRetries,
    effects: 'events',
    model: null,
    validator: settings.validator === null ? null : true,
    schema: settings.schema,
    timeoutMs: settings.timeoutMs,
    deadlineMs: settings.deadlineMs,
    callRetries: settings.callRetries,
    samples: settings.samples,
    plan: settings.plan,
    sampleConcurrency: settings.sampleConcurrency,
    agree: settings.agree,
    confidenceFrom: settings.confidenceFrom,
    system: settings.system,
    messages: settings.messages,
    instructions: settings.instructions,
    parseFn: settings.parseFn,
    awaitClarification: settings.awaitClarification,
    maxClarifications: settings.maxClarifications,
    modelName: settings.modelName,
    // The interpreter calls the models: the machine keeps their names and samples.
    escalate: settings.escalate.map(({ name, samples }) => ({ name, samples, call: null })),
    budget: settings.budget,
  };
}

/**
 * An AMBIGUOUS result (already checked field by field) as the run it was, waiting for the
 * person who asked: its attempts, prompts, trace and clarifications, in `awaitingClarification`.
 * `question` is the caller's; the run asks it as its clarifications made it.
 */
export function waitingSnapshot(output: CheckpointOutput<unknown>, question: string, settings: CheckSettings): Snapshot<unknown> {
  const started = contextOf(machineInput(question, settings), checkpointMachine);
  const attempts = output.attempts.map(currentAttempt) as unknown as CheckpointContext['attempts'];
  const asked = output.clarifications.reduce((before, clarification) => clarifiedQuestion(before, clarification), question);
  // A result that ended AMBIGUOUS (no store kept it waiting) ends its trace in the final `ambiguous`, which no
  // transition leaves: continued, the run waited for the person instead, as a run kept in a store records it.
  const trace = output.trace.map((step, i) => (i === output.trace.length - 1 && step.state === 'ambiguous' ? Object.freeze({ ...step, state: WAITING }) : step));
  const context: CheckpointContext = {
    ...started,
    settings: Object.freeze({ ...started.settings, prompt: asked }),
    attempt: attempts.length - 1,
    prompts: output.prompts,
    draft: attempts.at(-1)!,
    attempts,
    trace: trace as CheckpointContext['trace'],
    status: AMBIGUOUS,
    clarifications: output.clarifications,
    // A result line from before cascades has none.
    escalations: output.escalations ?? [],
    // What its rounds spent counts against the budget, as a run kept in a store keeps counting: a clarified round does not start it afresh.
    ...spentBy(attempts),
  };
  return { status: 'active', value: WAITING, output: undefined, error: null, historyValue: {}, children: {}, context } as unknown as Snapshot<unknown>;
}

/**
 * What a result's attempts spent, as a budget counts it: a call per try; a reply per call that
 * answered; and, a result keeping only each attempt's usage summed, a report per call that
 * answered in an attempt with usage — so the next call is expected to cost their average, and
 * replies of attempts with none (usage unknown) keep a token or cost budget from being kept.
 */
function spentBy(attempts: readonly Attempt<unknown>[]): Pick<CheckpointContext, 'calls' | 'replies' | 'reports' | 'priced'> {
  let calls = 0;
  let replies = 0;
  let reports = 0;
  let priced = 0;
  for (const attempt of attempts) {
    const tries = attempt.samples ? attempt.samples.flatMap((sample) => sample.callTries) : attempt.callTries;
    const answered = tries.filter((t) => t.error === null).length;
    calls += tries.length;
    replies += answered;
    if (attempt.usage === null) continue;
    reports += Math.max(1, answered);
    if (attempt.usage.costUsd !== null) priced += Math.max(1, answered);
  }
  return { calls, replies, reports, priced };
}

/** Whether `choice` is the answer `clarification` recorded: the same reading, or the same rephrasing. */
function answers(choice: unknown, clarification: Clarification): boolean {
  let event: ReturnType<typeof readChoice>;
  try {
    event = readChoice(choice, clarification.readings);
  } catch {
    return false;
  }
  return event.type === 'clarify.chose' ? clarification.chosen === event.reading : clarification.rephrased === event.question;
}

/**
 * The snapshot as plain data: a custom `agree` or `parseFn` is a function, which no store
 * can keep; the caller gives it again on resume (see `upgraded`).
 */
function withoutAgree(snapshot: Snapshot<unknown>): Snapshot<unknown> {
  const { context } = snapshot as unknown as { context: { settings: { agree: unknown; parseFn: unknown } } };
  if (context.settings.agree === null && context.settings.parseFn === null) return snapshot;
  return { ...snapshot, context: { ...context, settings: { ...context.settings, agree: null, parseFn: null } } } as unknown as Snapshot<unknown>;
}

/**
 * The snapshot inside a loaded checkpoint, once it is known to be this run's: a Booth
 * checkpoint, for this key, this prompt and these options. Anything else is an error
 * naming the key and where it is kept — never a silent fresh start.
 */
export async function readCheckpoint(
  saved: unknown,
  key: string,
  location: string | null,
  prompt: string,
  settings: CheckSettings,
): Promise<Snapshot<unknown>> {
  const fail = (problem: string): never => {
    throw new CheckpointError(key, location, problem);
  };
  const checkpoint = saved as Partial<Checkpoint> | null;
  if (typeof checkpoint !== 'object' || checkpoint === null || checkpoint.format !== FORMAT) {
    fail('is not a Booth checkpoint. Delete it to start the run afresh.');
  }
  // Stored text is never quoted: a number is shown, anything else by its kind.
  if (checkpoint?.version !== VERSION) fail(`has version ${kindOf(checkpoint?.version)}; this Booth reads version ${VERSION}.`);
  if (checkpoint?.key !== key) fail('was saved for another key.');
  const snapshot = checkpoint?.snapshot as
    | {
        status?: unknown;
        value?: unknown;
        context?: { attempts?: unknown; settings?: Record<string, unknown>; usage?: unknown; lateUsage?: unknown; clarifications?: readonly Clarification[] };
      }
    | undefined;
  const settingsSaved = snapshot?.context?.settings;
  if (
    (snapshot?.status !== 'active' && snapshot?.status !== 'done') ||
    typeof snapshot.value !== 'string' ||
    !Array.isArray(snapshot.context?.attempts) ||
    typeof settingsSaved !== 'object'
  ) {
    fail('holds no resumable run of the checkpoint machine.');
  }
  // What it holds reaches the result, onAttempt and the machine's guards: each field of its type
  // (usage is summed into results: a corrupt count would spread to every total after it).
  checkSnapshot(snapshot, (problem) => fail(`holds a run whose ${problem}. Delete it to start the run afresh.`));
  const expected: Record<string, unknown> = {
    prompt,
    threshold: settings.threshold,
    maxRetries: settings.maxRetries,
    hasValidator: settings.validator !== null,
    answerFormat: answerFormatOf(settings.schema),
    effects: 'events',
    timeoutMs: settings.timeoutMs,
    deadlineMs: settings.deadlineMs,
    callRetries: settings.callRetries,
    samples: settings.samples,
    // The cascade's models, by name and samples, and the budget: a run resumed with others would spend by other rules.
    models: machineSettings(prompt, settings).models.map(({ name, samples }) => ({ name, samples })),
    budget: settings.budget,
    confidenceFrom: settings.confidenceFrom,
    system: settings.system,
    messages: settings.messages,
    instructions: settings.instructions,
    // The run's bound, like maxRetries. `awaitClarification` is not compared: the call that continues a waiting
    // run gives its `clarification` and need not repeat it; the run waits again as it was started.
    maxClarifications: settings.maxClarifications,
  };
  const waits = settingsSaved?.['awaitClarification'] === true;
  if (!waits && (snapshot?.value === WAITING || (snapshot?.context?.clarifications?.length ?? 0) > 0)) {
    fail('holds a run that waits for, or was given, a clarification, yet was not started with `awaitClarification`, which the checkpoint machine never saves. Delete it to start the run afresh.');
  }
  // What a run saved before conversations and sampling existed had: no system prompt, no turns, Booth's instructions, one sample.
  const samplesBefore = typeof settingsSaved?.['samples'] === 'number' ? settingsSaved['samples'] : 1;
  const before: Record<string, unknown> = {
    ...SETTINGS_BEFORE,
    instructions: instructions(answerFormatOf(settings.schema)),
    models: [{ name: null, samples: { max: samplesBefore, min: samplesBefore, stop: null } }],
  };
  // A clarified run asks the clarified question now: the caller's is the one its first clarification began from.
  const asked = snapshot?.context?.clarifications?.[0]?.question ?? settingsSaved?.['prompt'];
  for (const [name, value] of Object.entries(expected)) {
    const stored = (name === 'prompt' ? asked : settingsSaved?.[name]) ?? before[name] ?? null;
    const saved = JSON.stringify(stored);
    const given = JSON.stringify(value ?? null);
    if (saved !== given) {
      // These are the caller's texts, and this message reaches logs and spans: a digest tells two apart without quoting either.
      const differs =
        name === 'models'
          ? await modelsDiffer(stored as readonly { name: unknown; samples: unknown }[], value as readonly { name: string | null; samples: unknown }[])
          : PRIVATE_SETTINGS.includes(name)
            ? `its ${name} (${await privately(stored, saved)}) is not this call's (${await privately(value ?? null, given)})`
            : `its ${name} is ${saved}, this call's is ${given}`;
      fail(`belongs to a different run: ${differs}.`);
    }
  }
  const run = upgraded(snapshot as unknown as SavedRun, settings);
  // A Booth before budgets counted only sample calls, as their tokens; one with them counts every call, which a budget reads.
  const countsCalls = settings.budget !== null || Object.hasOwn(settingsSaved ?? {}, 'models');
  checkDecisions(run as unknown as DecidedRun, (problem) => fail(`${problem} Delete it to start the run afresh.`), false, countsCalls);
  // A run that waits for a person is continued only by a call that knows it may: one that waits too, or brings the answer.
  // So a store's clarification text reaches no call that did not ask for clarifications.
  if (waits && !settings.awaitClarification && settings.clarification === null) {
    fail('holds a run started with `awaitClarification`: pass `awaitClarification: true` to see it waiting, or the person\'s `clarification` to continue it.');
  }
  return run;
}

/**
 * Fails unless a result continued by `clarify()` (as `waitingSnapshot` made it, with the
 * settings it ran with) is a run the machine made: the same questions a stored run is asked.
 */
export function checkContinuedRun(snapshot: Snapshot<unknown>, fail: (problem: string) => never): void {
  checkDecisions(snapshot as unknown as DecidedRun, fail, true);
}

/** A saved run once upgraded: the machine's context, in a state. */
interface DecidedRun {
  readonly status: 'active' | 'done';
  readonly value: string;
  readonly context: CheckpointContext;
}

/** The final states' verdicts, as the machine's own `conclude` actions name them. */
const CONCLUDES: ReadonlyMap<string, unknown> = new Map(
  Object.entries(checkpointMachine.root.states).flatMap(([name, node]) =>
    node.type !== 'final' ? [] : node.entry.flatMap((action) => (VERDICT_ACTIONS.includes((action as { type?: unknown }).type) ? [[name, (action as { params: { status: unknown } }).params.status] as const] : [])),
  ),
);

/**
 * Where a run can be saved while it is under way: a save follows a finished attempt, before
 * the next attempt's calls are handed out, so the run waits for a call (or its retry); only a
 * timer can change it before the save, and a timer only fails calls. Or it waits for a
 * person, its last attempt ambiguous.
 */
const RESTING = ['calling', 'backingOff', 'sampling', WAITING];

/**
 * A saved run must be one the machine made: each finished attempt is asked again, of the
 * machine's own guards in its own order (no copy of them here), where its eventless
 * transitions lead once its reply was read. Every attempt but a finished run's last must
 * have earned a retry, and the last must have ended the run where the snapshot says, with
 * that verdict: a snapshot marked VERIFIED whose attempt is not confident is forged or
 * corrupt, and fails here before any call. Time cannot be asked again, so the deadline is
 * given the benefit of the doubt: a run with one may have ended UNCERTAIN with retries left.
 */
function checkDecisions({ status, value, context }: DecidedRun, fail: (problem: string) => never, continued = false, countsCalls = false): void {
  const done = status === 'done';
  const waiting = value === WAITING;
  const { attempts } = context;
  const concluded = CONCLUDES.get(value);
  if (done ? concluded === undefined || context.status !== concluded : !RESTING.includes(value) || context.status !== (waiting ? AMBIGUOUS : null)) {
    fail(`holds a run ${status} in state ${value} with verdict ${String(context.status)}, which the checkpoint machine never saves.`);
  }
  // Each state the run enters is its trace's next step, and the result reads the budget's stop off the last: it says overBudget only where the run rests.
  if ((context.trace.at(-1)?.state === 'overBudget') !== (value === 'overBudget')) {
    fail(`holds a trace whose last step is not the state ${value} the run rests in: it was changed after it was saved.`);
  }
  if (context.prompts.length !== context.attempt + 1 || attempts.length !== context.attempt + (done || waiting ? 1 : 0)) {
    fail(`holds a run at attempt ${context.attempt} with ${attempts.length} attempts and ${context.prompts.length} prompts, which do not go together.`);
  }
  // The replies of an attempt under way come after the save: any a saved run holds is a call a timer failed.
  // A waiting run's slots are its finished attempt's, answered; the next round starts sampling afresh.
  if (!done && !waiting && context.slots.some((slot) => slot.reply !== null && !slot.reply.callFailed)) {
    fail('holds a sample answered before its call was made, which the checkpoint machine never saves.');
  }
  if (!done && value === 'sampling') checkSlots(context, fail);
  // The calls the run made are what `budget.maxCalls` counts: fewer than its attempts made would spend the budget again.
  if (countsCalls) {
    const { least, most } = callsMade(context, value);
    if (!Number.isSafeInteger(context.calls) || context.calls < least || context.calls > most) {
      fail(`holds calls: ${String(context.calls)}, which its attempts (${least === most ? least : `${least} to ${most}`} calls) do not make: it was changed after it was saved.`);
    }
  }
  // A waiting run offers its draft's readings (the machine's isOfferedReading and clarify read them), while the
  // person is shown its last attempt's: the draft must be that attempt, as committed, or an index picks a reading never shown.
  if (waiting && !sameAttempt(context.draft, attempts.at(-1)!)) {
    fail(`holds a run waiting for a clarification of a draft that is not its last attempt (${attempts.length - 1}): it was changed after it was saved.`);
  }
  const rounds = clarifiedRounds(context, fail);
  checkEscalations(context, rounds, fail);
  const escalatedAt = new Set(context.escalations.map((escalation) => escalation.attempt));
  attempts.forEach((attempt, index) => {
    const round = rounds.findLast((r) => r.start <= index)!;
    // Each attempt is asked again as its round had it: the question then, the clarifications and moves to other models before it.
    // Not the budget: what the run has spent since then is not what it had spent then (its stop is asked of the run's end below).
    const settings = { ...context.settings, prompt: round.question, deadlineAt: null, budget: null };
    const clarifications = context.clarifications.slice(0, round.index);
    const escalations = context.escalations.filter((escalation) => escalation.attempt <= index);
    const asked = { ...context, settings, clarifications, escalations, attempt: index, draft: attempt, awaitingVerdict: false };
    if ((attempt.model ?? null) !== settings.models[stageOf(asked)]!.name) fail(`holds attempt ${index}, made by a model the run did not ask then: it was changed after it was saved.`);
    const from = planOf(asked).max > 1 ? 'agreementGate' : 'parsing';
    let decided = decidedState(from, asked, ['reconsidering', 'escalating']);
    // A call that failed for good went on to the next model, or ended the run, without a retry.
    if (decided === 'reconsidering' && failedForGood(attempt.callTries)) decided = guards.canEscalate({ context: asked }) ? 'escalating' : 'uncertain';
    if (escalatedAt.has(index + 1)) {
      if (decided !== 'escalating') fail(`holds attempt ${index}, after which the run asked the next model, which the checkpoint machine would not have done.`);
      return;
    }
    const clarifiedAfter = rounds.some((r) => r.start === index + 1);
    // The run waited after it; or, continued by clarify(), it ended AMBIGUOUS there (without awaitClarification).
    if (clarifiedAfter || (waiting && index === attempts.length - 1)) {
      if (decided !== WAITING && !(continued && decided === 'ambiguous')) {
        fail(`holds attempt ${index}, after which the run waited for a clarification the checkpoint machine would not have waited for.`);
      }
      return;
    }
    if (!done || index < attempts.length - 1) {
      if (decided !== 'reconsidering') {
        fail(`holds attempt ${index}, which the checkpoint machine would have ended ${String(CONCLUDES.get(decided))}, yet the run went on.`);
      }
      return;
    }
    // A run can end early: at the deadline (time cannot be asked again), or by its budget, before a call it wanted.
    const early = (decided === 'reconsidering' || decided === 'escalating') && settings.deadlineMs !== null;
    const spent = budgetStop(context.settings.budget, spentOf(context)) !== null;
    if (value === 'overBudget') {
      const wanted = decided === 'reconsidering' || decided === 'escalating' || decided === WAITING || cutShort(attempt, planOf(asked), settings.callRetries);
      if (!wanted || !spent) {
        fail(`says the run ended ${String(context.status)} in overBudget, but its budget allowed the next call${wanted ? '' : ', and its attempts wanted none'}: it was changed after it was saved.`);
      }
      return;
    }
    // A run whose budget could not pay for a clarified round does not wait for one: it ends AMBIGUOUS.
    const ended = early ? 'uncertain' : decided === WAITING && value === 'ambiguous' && spent ? 'ambiguous' : decided;
    if (ended !== value) {
      const verdict =
        decided === 'reconsidering' ? 'a retry' : decided === 'escalating' ? 'the next model' : decided === WAITING ? 'a wait for a clarification' : String(CONCLUDES.get(decided));
      fail(`says the run ended ${String(context.status)}, but its attempts and settings lead to ${verdict}: it was changed after it was saved.`);
    }
  });
  // The prompts are what the run sends: each must be the one the machine builds from the question and the attempt before it.
  const { answerFormat, instructions: text } = context.settings;
  context.prompts.forEach((prompt, index) => {
    const round = rounds.findLast((r) => r.start <= index)!;
    const expected =
      index === round.start
        ? prompt.kind === (round.index === 0 ? 'first' : 'clarification') && firstPrompt(round.question, answerFormat, text)
        : escalatedAt.has(index)
          ? prompt.kind === 'escalation' && firstPrompt(round.question, answerFormat, text)
          : prompt.kind !== 'first' && prompt.kind !== 'clarification' && prompt.kind !== 'escalation' && nextPrompt({ settings: { ...context.settings, prompt: round.question }, draft: attempts[index - 1]! }, prompt.kind);
    if (prompt.text !== expected) {
      fail(`holds prompt ${index}, which is not the one the checkpoint machine builds for it: it was changed after it was saved.`);
    }
  });
}

/**
 * Whether the budget stopped `attempt` before a call it wanted: a retry of a failed call (one
 * scheduled and never made, or one the call retry policy still allowed), or samples its vote
 * still needed (fewer than `max`, none skipped, and an adaptive vote not settled by those that
 * answered).
 */
function cutShort(attempt: Attempt<unknown>, { max, stop }: SamplePlan, callRetries: CallRetryPolicy | null): boolean {
  const { samples, clusters } = attempt;
  if (samples === undefined || max === 1) {
    const tries = attempt.callTries;
    const last = tries.at(-1);
    if (last === undefined) return false;
    return last.delayMs !== null || (last.error !== null && !failedForGood(tries) && callRetries !== null && tries.length <= callRetries.retries);
  }
  if (samples.length >= max || samples.some((sample) => sample.skipped === true)) return false;
  return stop === null || !isSettled(tallyOfVote(samples, clusters ?? []), max - samples.length, stop);
}

/**
 * Whether `draft` is `attempt` as the machine committed it: the commit adds only its duration,
 * its usage and, when the run names its models, the model (checked against the run's own).
 */
function sameAttempt(draft: Attempt<unknown>, attempt: Attempt<unknown>): boolean {
  const decided = (a: Attempt<unknown>) => JSON.stringify({ ...a, durationMs: 0, usage: null, model: undefined });
  return decided(draft) === decided(attempt);
}

/** One round of a run: the question it asked, from which attempt. Round 0 is the caller's question. */
interface Round {
  readonly index: number;
  readonly question: string;
  readonly start: number;
}

/**
 * The rounds of a saved run, each clarification read against the run: made from the
 * question the round before asked, after an attempt that offered its readings, choosing one
 * of them (or rephrasing), and leading to the question the run asks now.
 */
function clarifiedRounds({ clarifications, attempts, settings, attempt }: CheckpointContext, fail: (problem: string) => never): Round[] {
  const rounds: Round[] = [{ index: 0, question: clarifications[0]?.question ?? settings.prompt, start: 0 }];
  clarifications.forEach((clarification, i) => {
    const before = rounds[i]!;
    const offered = attempts[clarification.attempt - 1];
    const fits =
      i < settings.maxClarifications &&
      clarification.question === before.question &&
      clarification.attempt > before.start &&
      // A round begins with an attempt of its own, asked with the clarification's prompt.
      clarification.attempt <= attempt &&
      (clarification.rephrased === null || clarification.rephrased.length <= MAX_REPHRASED_CHARS) &&
      offered !== undefined &&
      JSON.stringify(offered.interpretations) === JSON.stringify(clarification.readings) &&
      (clarification.rephrased === null
        ? clarification.chosen !== null && clarification.readings.includes(clarification.chosen)
        : clarification.chosen === null && clarification.rephrased.trim() !== '');
    if (!fits) fail(`holds clarification ${i}, which does not follow from the run before it: it was changed after it was saved.`);
    rounds.push({ index: i + 1, question: clarifiedQuestion(before.question, clarification), start: clarification.attempt });
  });
  if (rounds.at(-1)!.question !== settings.prompt) {
    fail('holds a question that is not the one its clarifications lead to: it was changed after it was saved.');
  }
  return rounds;
}

/**
 * The calls a saved run's attempts made, as the machine counts them (`context.calls`): one
 * try each, and the call under way. A call still waiting to retry when its attempt ended (at
 * the deadline, or when the vote no longer needed it) is recorded with a try of its own that
 * made no call, so such a last try may or may not be a call: `least` leaves it out.
 */
function callsMade(context: CheckpointContext, value: string): { least: number; most: number } {
  let least = 0;
  let most = 0;
  const add = (tries: readonly { readonly error: string | null; readonly delayMs: number | null }[]) => {
    most += tries.length;
    const last = tries.at(-1);
    const waited = tries.length >= 2 && last!.delayMs === null && last!.error !== null && tries.at(-2)!.delayMs !== null;
    least += waited ? tries.length - 1 : tries.length;
  };
  for (const attempt of context.attempts) {
    if (attempt.samples) for (const sample of attempt.samples) add(sample.callTries);
    else add(attempt.callTries);
  }
  // The attempt under way: its call in flight was counted as it started; a retry waiting for its backoff is not yet.
  let underWay = 0;
  if (value === 'calling') underWay = context.tries.length + 1;
  else if (value === 'backingOff') underWay = context.tries.length;
  else if (value === 'sampling') for (const slot of context.slots) underWay += slot.tries.length + (slot.state === 'calling' ? 1 : 0);
  return { least: least + underWay, most: most + underWay };
}

/**
 * The moves to the next model a saved run holds, as the machine makes them: in order, each
 * within a round and after an attempt, to a model the run has, named as the settings name it.
 */
function checkEscalations(context: CheckpointContext, rounds: readonly Round[], fail: (problem: string) => never): void {
  let previous = 0;
  context.escalations.forEach((escalation, i) => {
    const stage = stageOf({ ...context, escalations: context.escalations.slice(0, i + 1) });
    const fits =
      escalation.attempt > previous &&
      escalation.attempt <= context.attempt &&
      !rounds.some((round) => round.start === escalation.attempt) &&
      stage < context.settings.models.length &&
      escalation.model === context.settings.models[stage]!.name;
    if (!fits) fail(`holds escalation ${i}, which does not follow from the run before it: it was changed after it was saved.`);
    previous = escalation.attempt;
  });
}

/**
 * The samples of a run saved while it samples, as the machine hands them out: one slot per
 * sample, each started one under its own call number (below the run's count of calls), a
 * finished one with its reply, at least one in flight, none skipped, and held ones (an
 * adaptive vote's, after its first wave) last. Any other set would wait for a reply, a timer
 * or a wave that never comes, or read a reply that is not there.
 */
function checkSlots(context: CheckpointContext, fail: (problem: string) => never): void {
  const { slots, calls } = context;
  const { max, min, stop } = planOf(context);
  const started = slots.filter((slot) => slot.state !== 'queued' && slot.state !== 'held');
  const numbers = new Set(started.map((slot) => slot.call));
  // Held samples wait, last, for a wave of an adaptive vote; a skipped one is recorded only as the vote ends.
  const held = slots.filter((slot) => slot.state === 'held').length;
  const broken =
    slots.length !== max ||
    slots.some((slot) => slot.state === 'skipped') ||
    (held > 0 && (stop === null || max - held < min || slots.slice(max - held).some((slot) => slot.state !== 'held'))) ||
    // A vote the samples answered so far settle is not sampling any more.
    voteSettled(context) ||
    numbers.size !== started.length ||
    started.some((slot) => !Number.isSafeInteger(slot.call) || slot.call < 0 || slot.call >= calls) ||
    slots.some((slot) => slot.state === 'done' && slot.reply === null) ||
    !slots.some((slot) => slot.state === 'calling' || slot.state === 'backingOff');
  if (broken) fail(`holds ${slots.length} sample slots for ${max} samples that the checkpoint machine never hands out so.`);
}

/** The settings a run saved before sampling and conversations existed did not write, as it ran: one sample, no system prompt, no turns. */
const SETTINGS_BEFORE = Object.freeze({ samples: 1, confidenceFrom: 'self', system: null, messages: Object.freeze([]), awaitClarification: false, maxClarifications: DEFAULT_MAX_CLARIFICATIONS });

/** The settings the machine runs a check with: what a saved run's are compared with. */
function machineSettings(prompt: string, settings: CheckSettings): CheckpointContext['settings'] {
  return contextOf(machineInput(prompt, settings), checkpointMachine).settings;
}

/** A private setting as a message names it: by digest, or as "none" when there is none (a digest of "null" would say there was one). */
async function privately(value: unknown, json: string): Promise<string> {
  if (value === null || (Array.isArray(value) && value.length === 0)) return 'none';
  const hex = await digest(typeof value === 'string' ? value : json);
  return hex === null ? 'a text not shown' : `sha-256 ${hex}…`;
}

/**
 * How a saved run's models differ from this call's, in words that quote no name: a name is
 * the caller's text (or a forger's), so it is told apart by digest; a sample plan holds only
 * numbers and the rule's name, as its shape was checked.
 */
async function modelsDiffer(stored: readonly { name: unknown; samples: unknown }[], given: readonly { name: string | null; samples: unknown }[]): Promise<string> {
  if (stored.length !== given.length) return `it asks ${stored.length} model${stored.length === 1 ? '' : 's'}, this call ${given.length}`;
  const i = stored.findIndex((model, index) => JSON.stringify(model) !== JSON.stringify(given[index]));
  const [theirs, ours] = [stored[i]!, given[i]!];
  if (JSON.stringify(theirs.name) !== JSON.stringify(ours.name)) {
    const named = async (value: unknown) => privately(value, JSON.stringify(value));
    return `its model ${i + 1} is named otherwise (${await named(theirs.name)}) than this call's (${await named(ours.name)})`;
  }
  return `its model ${i + 1} samples ${JSON.stringify(theirs.samples)}, this call's ${JSON.stringify(ours.samples)}`;
}

/** Settings holding the caller's own text, which a message names only by digest. */
const PRIVATE_SETTINGS: readonly string[] = ['prompt', 'system', 'messages', 'instructions'];

interface SavedRun {
  readonly status: 'active' | 'done';
  readonly value: string;
  readonly context: { readonly settings: object; readonly draft: object; readonly attempts: readonly object[] };
}

/**
 * A run saved before typed answers had no answer format and no schema issues, one saved
 * before sampling no samples, and one saved before usage was counted no usage: they read
 * as none, so a checkpoint from an earlier Booth resumes as the same run. A custom `agree`
 * is a function, which the saved JSON cannot hold: the caller's is given to the run again.
 */
function upgraded(snapshot: SavedRun, caller: CheckSettings): Snapshot<unknown> {
  const { context } = snapshot;
  const resumed = {
    slots: [],
    calls: 0,
    replies: 0,
    reports: 0,
    escalations: [],
    // Written by a Booth that counted reports but not yet those with a cost: each is taken to have given one, as it then did.
    priced: (context as { reports?: number }).reports ?? 0,
    started: [],
    usage: null,
    lateUsage: null,
    clarifications: [],
    ...context,
    settings: {
      answerFormat: null,
      ...SETTINGS_BEFORE,
      budget: null,
      ...context.settings,
      models: (((context.settings as { models?: readonly object[] }).models ?? machineSettings('', caller).models) as readonly object[]).map((stage) => Object.freeze({ ...stage })),
      // Checked equal to the caller's, which a run saved before conversations had not written: Booth's own text.
      instructions: caller.instructions,
      sampleConcurrency: caller.sampleConcurrency,
      agree: caller.agree === null ? null : () => caller.agree,
      parseFn: caller.parseFn === null ? null : () => caller.parseFn,
    },
    draft: currentAttempt(context.draft),
    attempts: context.attempts.map(currentAttempt),
  } as unknown as CheckpointContext;
  // A saved output is never read: XState would hand it out as it is, the stepper makes its own. A run resumed ended gets the machine's.
  const output = snapshot.status === 'done' ? checkpointOutput(resumed) : undefined;
  return { ...snapshot, output, context: resumed } as unknown as Snapshot<unknown>;
}

/** An attempt written by an earlier Booth, with the fields it did not write null. */
function currentAttempt(attempt: object): object {
  return withField(withField(attempt, 'schemaIssues', 'validationError'), 'usage', 'durationMs');
}

/** `attempt` with `field` null when it lacks it, in its documented place after `after`, so an old attempt reads like a new one. */
function withField(attempt: object, field: string, after: string): object {
  if (field in attempt) return attempt;
  return Object.fromEntries(Object.entries(attempt).flatMap((entry) => (entry[0] === after ? [entry, [field, null]] : [entry])));
}
