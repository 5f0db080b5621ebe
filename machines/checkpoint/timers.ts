import type { Timer } from '../effects.js';
import type { CheckpointContext, CheckpointEvent } from './types.js';

/** The checkpoint machine's timers: a call's timeout, the run's deadline, a retry's backoff, each sample's. */

// Timer ids only tell the machine's timers apart: any three distinct names would do.
// Stryker disable next-line StringLiteral: a timer id is a name, not a behaviour
export const CALL_TIMEOUT = 'callTimeout';
// Stryker disable next-line StringLiteral: a timer id is a name, not a behaviour
export const BACKOFF = 'backoff';
// Stryker disable next-line StringLiteral: a timer id is a name, not a behaviour
export const DEADLINE = 'deadline';

export const timers = {
  callTimeout: ({ settings }: CheckpointContext): Timer<CheckpointEvent> | null =>
    settings.timeoutMs === null ? null : { id: CALL_TIMEOUT, delay: settings.timeoutMs, event: { type: 'model.timedOut' } },
  deadline: ({ settings }: CheckpointContext): Timer<CheckpointEvent> | null =>
    settings.deadlineAt === null ? null : { id: DEADLINE, delay: Math.max(0, settings.deadlineAt - Date.now()), event: { type: 'run.deadline' } },
  backoff: ({ backoffMs }: CheckpointContext): Timer<CheckpointEvent> | null => ({ id: BACKOFF, delay: backoffMs, event: { type: 'backoff.elapsed' } }),
};

export const sampleTimeoutId = (call: number) => `callTimeout.${call}`;

/** A sample's timer: its call's timeout, or the end of its backoff. Ids name the call, so no two runs' timers collide. */
export function sampleTimer(context: CheckpointContext, sample: number): Timer<CheckpointEvent> | null {
  const { state, call, backoffMs } = context.slots[sample]!;
  const { timeoutMs } = context.settings;
  if (state === 'backingOff') return { id: `backoff.${call}`, delay: backoffMs, event: { type: 'sample.backoffElapsed', sample, call } };
  if (state === 'calling' && timeoutMs !== null) return { id: sampleTimeoutId(call), delay: timeoutMs, event: { type: 'sample.timedOut', sample, call } };
  return null;
}
export type TimerName = keyof typeof timers;
export const arm = (timer: TimerName) => ({ type: 'arm', params: { timer } }) as const;
export const armSamples = (all: boolean) => ({ type: 'armSamples', params: { all } }) as const;
