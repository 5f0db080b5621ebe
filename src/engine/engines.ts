import type { Snapshot } from 'xstate';
import type { CheckpointContext, CheckpointEvent, CheckpointInput, CheckpointOutput, SamplesOption } from '../../machines/checkpoint/types.js';
import type { SamplePlan } from '../decide/sampling.js';
import { checkpointEffects } from '../../machines/checkpoint/effects.js';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { checkpointOutput, contextOf } from '../../machines/checkpoint/context.js';
import { startRun } from './machine-run.js';
import type { Inspector } from './machine-run.js';
import type { MachineInput } from '../options/machine-input.js';
import { compile, eventlessTarget, type Resumable, Stepper } from './stepper.js';

/**
 * The two engines that run the checkpoint machine for `check()` and `acheck()`: the
 * compiled stepper, and XState's own actor, which a run with `inspect` uses so that the
 * inspector sees real XState events.
 */
export type EngineName = 'stepper' | 'actor';

export interface RunView {
  readonly status: string;
  readonly value: unknown;
  readonly context: CheckpointContext;
  readonly output: CheckpointOutput<unknown> | undefined;
  readonly error: unknown;
}

export interface Engine {
  readonly name: EngineName;
  /** The run now; the stepper's view is live, so read it before the next `send()`. */
  view(): RunView;
  send(event: CheckpointEvent): void;
  /** Called after each event the run handles, timers' included. */
  onChange(listener: () => void): void;
  /** The snapshot a store keeps: the same JSON from both engines. */
  persisted(): Snapshot<unknown>;
  stop(): void;
}

/** Compiled once, when Booth is loaded: a change to the machine the stepper cannot run fails here, not mid-check. */
const program = compile(checkpointMachine, checkpointEffects);

/**
 * The state the checkpoint machine's own guards lead to from `from` for `context`, no effect
 * run and stopping at `stops`: how a saved run's verdict is asked again of its attempts.
 */
export function decidedState(from: string, context: CheckpointContext, stops: readonly string[]): string {
  return eventlessTarget(program, from, context, stops);
}

let forced: EngineName | null = null;

/** Tests only: run every check on one engine, or `null` for the usual choice. */
export function forceEngine(name: EngineName | null): void {
  forced = name;
}

/** The engine for a run: the stepper, unless an inspector watches (or a test forces one). */
export function startEngine(input: MachineInput, snapshot: Snapshot<unknown> | undefined, inspect: Inspector | null): Engine {
  return createEngine(forced ?? (inspect ? 'actor' : 'stepper'), input, snapshot, inspect);
}

/** A run of the checkpoint machine on the named engine, from input already checked by `readMachineInput()`. */
export function createEngine(name: EngineName, input: MachineInput, snapshot?: Snapshot<unknown>, inspect: Inspector | null = null): Engine {
  return name === 'actor' ? actorEngine(input, snapshot, inspect) : stepperEngine(input, snapshot);
}

function stepperEngine(input: MachineInput, snapshot: Snapshot<unknown> | undefined): Engine {
  const resumed = snapshot as Resumable<CheckpointContext> | undefined;
  const engine = new CheckpointStepper(program, checkpointOutput, resumed ? resumed.context : contextOf(input, checkpointMachine), resumed);
  if (engine.status === 'error') throw engine.error;
  return engine;
}

/** The stepper is its own view: no object is made per step. */
class CheckpointStepper extends Stepper<CheckpointContext, CheckpointEvent, CheckpointOutput<unknown>> implements Engine {
  readonly name = 'stepper';

  view(): RunView {
    return this;
  }

  persisted(): Snapshot<unknown> {
    const { status, output, error, value } = this;
    return { status, output, error, value, historyValue: {}, context: this.savedContext(), children: {} } as Snapshot<unknown>;
  }
}

function actorEngine(input: MachineInput, snapshot: Snapshot<unknown> | undefined, inspect: Inspector | null): Engine {
  // The machine checks its input again, as it does in any workflow.
  const actor = startRun(checkpointMachine, { input: asInput(input), snapshot, inspect });
  return {
    name: 'actor',
    view: () => actor.getSnapshot(),
    send: (event) => actor.send(event),
    // Every observer needs an error handler: one without makes XState report the error globally.
    onChange: (listener) => actor.subscribe({ next: listener, error: () => {} }),
    persisted: () => actor.getPersistedSnapshot(),
    stop: () => actor.stop(),
  };
}

/** Checked input as the machine's input again: the options it reads, written as a caller writes them. */
function asInput({ plan, escalate, budget, ...input }: MachineInput): CheckpointInput {
  return {
    ...(input as unknown as Omit<CheckpointInput, "samples" | "escalate" | "budget">),
    samples: samplesOption(plan),
    escalate: escalate.length === 0 ? null : escalate.map(({ name, samples }) => ({ ...(name === null ? {} : { name }), ...(samples === null ? {} : { samples: samplesOption(samples) }) })),
    budget: budget === null ? null : Object.fromEntries(Object.entries(budget).filter(([, limit]) => limit !== null)),
  };
}

/** A plan as the `samples` option that makes it. */
function samplesOption({ max, min, stop }: SamplePlan): SamplesOption {
  return stop === null ? max : { max, min, stop };
}
