import type { EventObject } from 'xstate';

/**
 * What a machine's actions do, written as plain data and functions of `(context, params)`.
 * XState keeps its action objects opaque, so a machine that is also run by Booth's
 * compiled stepper (src/engine/stepper.ts) wraps these very functions in its `assign` and
 * `enqueueActions` actions, and the stepper calls them directly: both engines run the
 * same code.
 */
export type Effect<TContext, TEvent extends EventObject> =
  /** `assign`: the fields it returns replace the context's. */
  | { readonly kind: 'update'; readonly run: (context: TContext, params: never) => Partial<TContext> }
  /**
   * `assign` of the context's array `field` with `run`'s item at its end. XState copies the
   * array; the stepper, whose run owns its arrays, pushes onto it.
   */
  | { readonly kind: 'append'; readonly field: string; readonly run: (context: TContext, params: never) => unknown }
  /** `raise`: the event is handled before any other event from outside. */
  | { readonly kind: 'raise'; readonly run: (context: TContext, params: never) => TEvent }
  /** Delayed `raise`s with ids: one, several, or none when `run` returns null. */
  | { readonly kind: 'schedule'; readonly run: (context: TContext, params: never) => Timer<TEvent> | readonly Timer<TEvent>[] | null }
  /** `cancel` of a scheduled event by id, or by the id `id` makes of the params. */
  | { readonly kind: 'cancel'; readonly id: string | ((params: never) => string) }
  /** Spawning or stopping a child actor: only in workflows, which the stepper does not run. */
  | { readonly kind: 'child' };

export interface Timer<TEvent> {
  readonly id: string;
  readonly delay: number;
  readonly event: TEvent;
}

export const update = <TContext, TParams>(run: (context: TContext, params: TParams) => Partial<TContext>) =>
  ({ kind: 'update', run }) as const;
export const appending = <TContext, TParams, TItem>(field: keyof TContext & string, run: (context: TContext, params: TParams) => TItem) =>
  ({ kind: 'append', field, run }) as const;
export const raising = <TContext, TEvent, TParams>(run: (context: TContext, params: TParams) => TEvent) => ({ kind: 'raise', run }) as const;
export const schedule = <TContext, TEvent, TParams>(run: (context: TContext, params: TParams) => Timer<TEvent> | readonly Timer<TEvent>[] | null) =>
  ({ kind: 'schedule', run }) as const;
export const cancelling = (id: string) => ({ kind: 'cancel', id }) as const;
/** `cancel` of the scheduled event whose id the action's params name. */
export const cancellingBy = <TParams>(id: (params: TParams) => string) => ({ kind: 'cancel', id }) as const;
export const CHILD = { kind: 'child' } as const;

const guardParts = new WeakMap<object, readonly string[]>();

/**
 * Notes which named guards an `and()` guard combines: XState's guard is an opaque
 * function, and the stepper must evaluate the same guards in the same order.
 */
export function remember<TGuard extends object>(guard: TGuard, names: readonly string[]): TGuard {
  guardParts.set(guard, names);
  return guard;
}

/** The named guards a remembered `and()` guard combines, or undefined for any other guard. */
export function partsOf(guard: unknown): readonly string[] | undefined {
  return typeof guard === 'function' ? guardParts.get(guard) : undefined;
}
