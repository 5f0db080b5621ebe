import type { AnyStateMachine, EventObject } from 'xstate';
import { type Effect, partsOf, type Timer } from '../../machines/effects.js';

/**
 * The compiled stepper: a machine's own definition turned, once, into a table of states
 * and transitions, run by a plain loop with the context updated in place.
 *
 * XState rebuilds an immutable snapshot at every `assign` and every microstep, which is
 * what lets an inspector watch each one. A check that nobody inspects cannot observe those
 * intermediate snapshots, so it pays for them for nothing: the stepper makes the same
 * decisions — the same guard implementations, the same effect functions the machine's
 * actions wrap, XState's order of exit, transition and entry actions, eventless
 * transitions before raised events — without them. tests/engine/engines.test.ts drives it and
 * XState's actor side by side and requires equal state, context and output after every
 * event.
 *
 * It reads only what XState's typings expose (`machine.root`, its state nodes and
 * `machine.implementations.guards`) and refuses, when compiled, any construct it does not
 * run, naming the state and the construct.
 */

type Params = unknown;
type ParamsFrom = (args: { readonly context: never; readonly event: EventObject }) => Params;

interface Step {
  readonly effect: Effect<object, EventObject>;
  /** Static params, or a function of the context and event. */
  readonly params: Params;
  readonly dynamic: boolean;
}

interface Check {
  readonly guards: ReadonlyArray<{ readonly run: GuardFn; readonly params: Params; readonly dynamic: boolean }>;
}

type GuardFn = (args: { readonly context: never; readonly event: EventObject }, params: never) => boolean;

interface Transition {
  readonly check: Check | null;
  /** Index of the target state; -1 for a transition that stays. */
  readonly target: number;
  readonly steps: readonly Step[];
}

interface State {
  readonly name: string;
  readonly final: boolean;
  readonly entry: readonly Step[];
  readonly exit: readonly Step[];
  readonly on: ReadonlyMap<string, readonly Transition[]>;
  readonly always: readonly Transition[];
}

/** A machine compiled for the stepper. */
export interface Program {
  readonly id: string;
  readonly states: readonly State[];
  readonly initial: number;
  readonly rootEntry: readonly Step[];
  readonly rootOn: ReadonlyMap<string, readonly Transition[]>;
  /** The context's arrays that `append` effects push onto: a run must own them. */
  readonly appended: readonly string[];
}

type Node = AnyStateMachine['root'];

export class UnsupportedMachineError extends Error {
  override readonly name = 'UnsupportedMachineError';
}

/**
 * Compiles `machine` with `effects`, the plain functions its named actions wrap. Throws
 * an `UnsupportedMachineError` for nested, parallel or history states, invoked or delayed
 * (`after`) transitions, wildcard events, and inline guards or actions.
 */
export function compile<TContext, TEvent extends EventObject>(
  machine: AnyStateMachine,
  effects: Readonly<Record<string, Effect<TContext, TEvent>>>,
): Program {
  const root = machine.root;
  const refuse = (where: string, what: string): never => {
    throw new UnsupportedMachineError(`The stepper cannot run machine "${machine.id}": ${where} ${what}.`);
  };
  const nodes = Object.values(root.states);
  const index = new Map(nodes.map((node, i) => [node, i]));
  const guards = machine.implementations.guards as Readonly<Record<string, GuardFn | undefined>>;

  const step = (where: string, action: unknown): Step => {
    const named = typeof action === 'string' ? { type: action, params: undefined } : (action as { type?: unknown; params?: unknown });
    if (typeof named !== 'object' || named === null || typeof named.type !== 'string') {
      return refuse(where, 'has an inline action; name it in setup({ actions }) and give it an effect');
    }
    const effect = effects[named.type] as Effect<object, EventObject> | undefined;
    if (!effect) return refuse(where, `uses action "${named.type}", which has no effect in the stepper's table`);
    return { effect, params: named.params, dynamic: typeof named.params === 'function' };
  };
  const guard = (where: string, name: string, params: Params) => {
    const run = guards[name];
    if (typeof run !== 'function') return refuse(where, `uses guard "${name}", which setup({ guards }) does not implement`);
    return { run, params, dynamic: typeof params === 'function' };
  };
  const check = (where: string, raw: unknown): Check | null => {
    if (raw === undefined) return null;
    if (typeof raw === 'string') return { guards: [guard(where, raw, undefined)] };
    const parts = partsOf(raw);
    if (parts) return { guards: parts.map((name) => guard(where, name, undefined)) };
    const named = raw as { type?: unknown; params?: unknown };
    if (typeof raw === 'object' && raw !== null && typeof named.type === 'string') return { guards: [guard(where, named.type, named.params)] };
    return refuse(where, 'has an inline guard; name it in setup({ guards }), or combine named guards with remember(and([…]))');
  };
  const transitions = (where: string, list: Node['always']): Transition[] =>
    (list ?? []).map((t) => {
      const targets = t.target ?? [];
      if (targets.length > 1) refuse(where, 'has a transition with several targets');
      const target = targets[0] === undefined ? -1 : (index.get(targets[0]) ?? refuse(where, `targets "${targets[0].id}", which is not a top-level state`));
      return { check: check(where, t.guard), target, steps: t.actions.map((a) => step(where, a)) };
    });
  const events = (node: Node, where: string): Map<string, readonly Transition[]> => {
    const on = new Map<string, readonly Transition[]>();
    for (const [type, list] of node.transitions) {
      if (type.includes('*')) refuse(where, `listens for the wildcard event "${type}"`);
      if (type.startsWith('xstate.after.')) refuse(where, 'has a delayed (`after`) transition; raise a named event with a scheduled action instead');
      on.set(type, transitions(`${where} on "${type}"`, list));
    }
    return on;
  };

  if (root.always?.length) refuse('the root', 'has eventless transitions');
  if (root.invoke.length > 0) refuse('the root', 'invokes actors');
  const states = nodes.map((node): State => {
    const where = `state "${node.key}"`;
    if (node.type !== 'atomic' && node.type !== 'final') refuse(where, `is a ${node.type} state; only flat machines are compiled`);
    if (node.invoke.length > 0) refuse(where, 'invokes actors');
    return {
      name: node.key,
      final: node.type === 'final',
      entry: node.entry.map((a) => step(`${where} entry`, a)),
      exit: node.exit.map((a) => step(`${where} exit`, a)),
      on: events(node, where),
      always: transitions(`${where} always`, node.always),
    };
  });
  const initial = states.findIndex((state) => state.name === root.config.initial);
  if (initial < 0) refuse('the root', 'has no initial state among its children');
  if (root.exit.length > 0) refuse('the root', 'has exit actions');
  const appended = [...new Set(Object.values(effects).flatMap((effect) => (effect.kind === 'append' ? [effect.field] : [])))];
  return { id: machine.id, states, initial, rootEntry: root.entry.map((a) => step('the root entry', a)), rootOn: events(root, 'the root'), appended };
}

export type StepperStatus = 'active' | 'done' | 'error' | 'stopped';

/** The parts of a persisted snapshot the stepper resumes from. */
export interface Resumable<TContext> {
  readonly value: string;
  readonly context: TContext;
}

/**
 * One run of a compiled machine. The context object is updated in place: read what you
 * need after each `send()`, or copy it.
 */
export class Stepper<TContext extends object, TEvent extends EventObject, TOutput> {
  status: StepperStatus = 'active';
  value: string;
  readonly context: TContext;
  output: TOutput | undefined = undefined;
  error: unknown = undefined;
  readonly #program: Program;
  readonly #outputOf: (context: TContext) => TOutput;
  #state: State;
  readonly #raised: TEvent[] = [];
  /**
   * Scheduled events by id, as XState keeps them: scheduling an id again forgets the older
   * timer, which still fires. Both made on the first timer: most runs have none.
   */
  #timers: Map<string, ReturnType<typeof setTimeout>> | null = null;
  #pending: Set<ReturnType<typeof setTimeout>> | null = null;
  #onChange: (() => void) | null = null;

  /** Starts a run with `context` (entering the initial state), or resumes `resumed` without entering anything. */
  constructor(program: Program, outputOf: (context: TContext) => TOutput, context: TContext, resumed?: Resumable<TContext>) {
    this.#program = program;
    this.#outputOf = outputOf;
    this.context = resumed ? ownArrays(program, resumed.context) : context;
    const state = resumed ? program.states.find((s) => s.name === resumed.value) : program.states[program.initial];
    if (!state) throw new TypeError(`Cannot resume machine "${program.id}" in state ${JSON.stringify(resumed?.value)}: it has no such state.`);
    this.#state = state;
    this.value = state.name;
    // A run saved once it had ended (its last attempt is saved before the checkpoint is deleted) resumes ended.
    if (resumed && state.final) {
      this.status = 'done';
      this.output = outputOf(this.context);
    }
    if (!resumed) {
      this.#guarded(() => {
        this.#run(program.rootEntry, INIT);
        this.#enter(state, INIT);
        this.#settle(INIT);
      });
    }
  }

  /** Called after every event the run handles, timers' included. */
  onChange(listener: () => void): void {
    this.#onChange = listener;
  }

  send(event: TEvent): void {
    if (this.status !== 'active') return;
    this.#guarded(() => {
      const transition = this.#onEvent(event);
      if (transition) this.#take(transition, event);
      this.#settle(event);
    });
    this.#onChange?.();
  }

  /** The context as a snapshot keeps it: with its own copy of the arrays this run still appends to. */
  savedContext(): TContext {
    return ownArrays(this.#program, this.context);
  }

  stop(): void {
    // As XState marks a stopped actor: not done, for it has no output.
    if (this.status === 'active') this.status = 'stopped';
    this.#clearTimers();
  }

  /** Eventless transitions first, then raised events one by one, as XState orders a macrostep. */
  #settle(first: EventObject): void {
    let event = first;
    while (this.status === 'active') {
      const always = this.#select(this.#state.always, event);
      if (always) {
        this.#take(always, event);
        continue;
      }
      const raised = this.#raised.shift();
      if (raised === undefined) return;
      event = raised;
      const transition = this.#onEvent(event);
      if (transition) this.#take(transition, event);
    }
  }

  /** The state's own transitions for the event first, then the root's, as XState looks them up. */
  #onEvent(event: EventObject): Transition | undefined {
    return this.#select(this.#state.on.get(event.type), event) ?? this.#select(this.#program.rootOn.get(event.type), event);
  }

  #select(transitions: readonly Transition[] | undefined, event: EventObject): Transition | undefined {
    if (transitions === undefined) return undefined;
    for (const transition of transitions) if (this.#passes(transition.check, event)) return transition;
    return undefined;
  }

  #passes(check: Check | null, event: EventObject): boolean {
    return passes(check, this.context, event);
  }

  #take(transition: Transition, event: EventObject): void {
    if (transition.target < 0) {
      this.#run(transition.steps, event);
      return;
    }
    this.#run(this.#state.exit, event);
    this.#run(transition.steps, event);
    const target = this.#program.states[transition.target]!;
    this.#enter(target, event);
  }

  #enter(state: State, event: EventObject): void {
    this.#state = state;
    this.value = state.name;
    this.#run(state.entry, event);
    if (!state.final) return;
    this.#run(state.exit, event);
    this.status = 'done';
    this.output = this.#outputOf(this.context);
    this.#raised.length = 0;
    this.#clearTimers();
  }

  #run(steps: readonly Step[], event: EventObject): void {
    for (const step of steps) {
      const params = step.dynamic ? (step.params as ParamsFrom)({ context: this.context as never, event }) : step.params;
      const effect = step.effect;
      switch (effect.kind) {
        case 'update':
          Object.assign(this.context, effect.run(this.context, params as never));
          break;
        case 'append':
          (this.context[effect.field as keyof TContext] as unknown[]).push(effect.run(this.context, params as never));
          break;
        case 'raise':
          this.#raised.push(effect.run(this.context, params as never) as TEvent);
          break;
        case 'schedule': {
          const timers = effect.run(this.context, params as never);
          if (Array.isArray(timers)) for (const timer of timers) this.#schedule(timer as Timer<TEvent>);
          else if (timers !== null) this.#schedule(timers as Timer<TEvent>);
          break;
        }
        case 'cancel': {
          const id = typeof effect.id === 'function' ? effect.id(params as never) : effect.id;
          const handle = this.#timers?.get(id);
          if (handle !== undefined) {
            clearTimeout(handle);
            this.#pending?.delete(handle);
            this.#timers?.delete(id);
          }
          break;
        }
        case 'child':
          break;
      }
    }
  }

  #schedule(timer: Timer<TEvent>): void {
    const timers = (this.#timers ??= new Map());
    const pending = (this.#pending ??= new Set());
    const handle = setTimeout(() => {
      pending.delete(handle);
      timers.delete(timer.id);
      this.send(timer.event);
    }, timer.delay);
    pending.add(handle);
    timers.set(timer.id, handle);
  }

  #clearTimers(): void {
    if (this.#pending === null) return;
    for (const handle of this.#pending) clearTimeout(handle);
    this.#pending.clear();
    this.#timers?.clear();
  }

  /** What XState does with a throwing guard or action: the run stops in an error state. */
  #guarded(body: () => void): void {
    try {
      body();
    } catch (error) {
      this.status = 'error';
      this.error = error;
      this.#clearTimers();
    }
  }
}

const INIT: EventObject = { type: 'xstate.init' };

function passes(check: Check | null, context: object, event: EventObject): boolean {
  if (check === null) return true;
  const args = { context: context as never, event };
  for (const guard of check.guards) {
    const params = guard.dynamic ? (guard.params as ParamsFrom)(args) : guard.params;
    if (!guard.run(args, params as never)) return false;
  }
  return true;
}

const DECIDE: EventObject = { type: 'booth.decide' };

/**
 * Where `program`'s eventless transitions lead from state `from` for `context`, running no
 * effect: the machine's own guards, in its own order, asked of data whose events were already
 * handled (a checkpoint's finished attempt). Stops at a final state, at one of `stops`, or
 * where no eventless transition is open; a loop stops once every state was passed.
 */
export function eventlessTarget(program: Program, from: string, context: object, stops: readonly string[]): string {
  let state = program.states.find((s) => s.name === from);
  if (!state) throw new TypeError(`Machine "${program.id}" has no state ${JSON.stringify(from)}.`);
  for (let passed = 0; passed < program.states.length && !state.final && !stops.includes(state.name); passed += 1) {
    const next: Transition | undefined = state.always.find((transition) => passes(transition.check, context, DECIDE));
    if (next === undefined || next.target < 0) break;
    state = program.states[next.target]!;
  }
  return state.name;
}

/** A copy of `context` with its own copy of every array a run appends to, so a saved snapshot and a run never share one. */
function ownArrays<TContext extends object>(program: Program, context: TContext): TContext {
  const own = { ...context } as Record<string, unknown>;
  for (const field of program.appended) own[field] = [...(own[field] as unknown[])];
  return own as TContext;
}
