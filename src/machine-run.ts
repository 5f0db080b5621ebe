import { type Actor, type AnyStateMachine, createActor, type InputFrom } from 'xstate';
import type { Inspector } from './options.js';

/**
 * Starts a machine for one run. The error observer matters: without one, XState
 * rethrows an exception from an action or guard inside a `setTimeout`, where it would
 * crash the process long after the caller moved on. With it, the actor just stops in
 * an `error` snapshot, which `failIfBroken()` turns into a throw at the call site.
 */
export function startRun<TMachine extends AnyStateMachine>(
  machine: TMachine,
  input: InputFrom<TMachine>,
  inspect: Inspector | null = null,
): Actor<TMachine> {
  // Inspection is attached only when asked for: XState does no inspection work otherwise.
  const actor = createActor(machine, inspect ? { input, inspect } : { input });
  actor.subscribe({ error: () => {} });
  actor.start();
  return actor;
}

/** Rethrows what broke inside the machine, if anything did. */
export function failIfBroken(snapshot: { status: string; error: unknown }): void {
  if (snapshot.status === 'error') throw snapshot.error;
}
