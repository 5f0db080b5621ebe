import { type Actor, type AnyStateMachine, createActor, type InputFrom, type InspectionEvent, type Observer, type Snapshot } from 'xstate';

/** What XState's `createActor(…, { inspect })` accepts. */
export type Inspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

export interface RunOptions<TMachine extends AnyStateMachine> {
  readonly input: InputFrom<TMachine>;
  /** A persisted snapshot to resume from instead of starting afresh. */
  readonly snapshot?: Snapshot<unknown> | undefined;
  readonly inspect?: Inspector | null;
}

/**
 * Starts a machine for one run. The error observer matters: without one, XState
 * rethrows an exception from an action or guard inside a `setTimeout`, where it would
 * crash the process long after the caller moved on. With it, the actor just stops in
 * an `error` snapshot, which `failIfBroken()` turns into a throw at the call site.
 */
export function startRun<TMachine extends AnyStateMachine>(machine: TMachine, options: RunOptions<TMachine>): Actor<TMachine> {
  const actor = createActor(machine, {
    input: options.input,
    // Inspection is attached only when asked for: XState does no inspection work otherwise.
    ...(options.inspect ? { inspect: options.inspect } : {}),
    ...(options.snapshot ? { snapshot: options.snapshot } : {}),
  });
  actor.subscribe({ error: () => {} });
  actor.start();
  return actor;
}

/** Rethrows what broke inside the machine, if anything did. */
export function failIfBroken(snapshot: { status: string; error: unknown }): void {
  if (snapshot.status === 'error') throw snapshot.error;
}
