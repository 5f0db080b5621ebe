import type { AnyActorRef, PromiseActorLogic, PromiseSnapshot } from 'xstate';

/**
 * Actor logic for an effect performed outside the machine: it starts, does nothing,
 * and finishes when its outcome is delivered with `settle()`.
 *
 * This is what lets one machine serve both interpreters. `check()` delivers the outcome
 * of a synchronous call right away, so the whole run completes without a microtask;
 * `acheck()` delivers it when the call's Promise settles. The machine cannot tell the
 * difference, and it is typed as promise logic so that users who embed the machine can
 * `.provide()` a `fromPromise(...)` in its place.
 */
export function awaited<TOutput, TInput>(): PromiseActorLogic<TOutput, TInput> {
  return {
    transition(snapshot, event) {
      if (snapshot.status !== 'active') return snapshot;
      if (event.type === RESOLVE) return { ...snapshot, status: 'done', output: event['output'] as TOutput };
      if (event.type === REJECT) return { ...snapshot, status: 'error', error: event['error'] };
      return snapshot;
    },
    getInitialSnapshot: (_scope, input) => ({ status: 'active', output: undefined, error: undefined, input }),
    getPersistedSnapshot: (snapshot) => snapshot,
    restoreSnapshot: (snapshot) => snapshot as PromiseSnapshot<TOutput, TInput>,
  };
}

const RESOLVE = 'booth.effect.resolve';
const REJECT = 'booth.effect.reject';

export type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/** Delivers an effect's outcome to the awaiting actor, which then reports done or error to its parent. */
export function settle(actor: AnyActorRef, outcome: Outcome): void {
  actor.send(outcome.ok ? { type: RESOLVE, output: outcome.value } : { type: REJECT, error: outcome.error });
}
