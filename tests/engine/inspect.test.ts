import type { InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { acheck, check, type CheckOptions } from '../../src/index.js';
import { envelope, scripted } from '../fixtures/helpers.js';


describe('live inspection', () => {
  it('a custom observer receives each gate’s microstep in order, before check() returns', () => {
    const events: InspectionEvent[] = [];
    const result = check(scripted([envelope('a', 0.2), envelope('a', 0.9)]).sync, 'q', {
      validator: () => true,
      inspect: (event) => events.push(event),
    });
    const steps = events
      .filter((e) => e.type === '@xstate.microstep')
      .map((e) => String((e.snapshot as unknown as { value: unknown }).value));
    expect(steps).toEqual([
      'calling', // from asking, the initial state
      'parsing',
      'ambiguityGate',
      'validationGate',
      'validationGate', // the verdict arrives: recorded without leaving the gate
      'confidenceGate',
      'reconsidering',
      'asking', // routes to one call or to samples; the trace leaves it out
      'calling',
      'parsing',
      'ambiguityGate',
      'validationGate',
      'validationGate',
      'confidenceGate',
      'repaired',
    ]);
    // The trace and the inspected microsteps tell the same story.
    const entered = steps.filter((state, i) => state !== steps[i - 1] && state !== 'asking');
    expect(entered).toEqual(result.trace.map((s) => s.state));
    expect(events.filter((e) => e.type === '@xstate.event').map((e) => e.event.type)).toEqual([
      'xstate.init',
      'model.replied',
      'validator.returned',
      'model.replied',
      'validator.returned',
    ]);
  });

  it('accepts an observer object, and works with acheck()', async () => {
    const types = new Set<string>();
    await acheck(scripted([envelope('a', 0.9)]).async, 'q', { inspect: { next: (event) => types.add(event.type) } });
    expect([...types]).toEqual(expect.arrayContaining(['@xstate.actor', '@xstate.event', '@xstate.microstep', '@xstate.snapshot']));
  });

  it('anything else is a TypeError naming `inspect`', () => {
    for (const inspect of ['yes', 1, {}, { next: 1 }]) {
      expect(() => check(() => envelope('a', 0.9), 'q', { inspect } as unknown as CheckOptions)).toThrow(/`inspect`/);
    }
  });

  it('an observer with only error or complete is accepted, and null means no inspection', () => {
    const model = () => envelope('a', 0.9);
    expect(check(model, 'q', { inspect: { error: () => {} } }).status).toBe('VERIFIED');
    expect(check(model, 'q', { inspect: { complete: () => {} } }).status).toBe('VERIFIED');
    expect(check(model, 'q', { inspect: null }).status).toBe('VERIFIED');
  });
});
