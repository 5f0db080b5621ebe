import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { check } from 'boothjs';
import { checkpointMachine } from 'boothjs/machine';
import { envelope } from 'boothjs/testing';

/**
 * Run by tests/config/vitest.edge.config.ts only: that the portable tests beside it ran in
 * the edge VM and not on Node under another name.
 */

const global = globalThis as Record<PropertyKey, unknown>;

describe('the edge run', () => {
  it('is the Edge Runtime, without the Node globals', () => {
    expect(global['EdgeRuntime']).toBe('edge-runtime');
    for (const name of ['process', 'Buffer', 'setImmediate', 'clearImmediate', 'require', 'global', '__dirname']) {
      expect(typeof global[name]).toBe('undefined');
    }
  });

  it('refuses code made from strings, as the Edge Runtime does, so a Booth module using eval would fail here', () => {
    expect(() => new Function('return 1')).toThrow(EvalError);
    expect(() => (0, eval)('1')).toThrow(EvalError);
  });

  it('evaluates Booth and XState in the edge VM\'s own realm, not in Node\'s', () => {
    // @edge-runtime/vm keeps Node's Object under this symbol, to make instanceof work across the two realms.
    const nodeObject = global[Symbol.for('node:Object')] as ObjectConstructor | undefined;
    expect(typeof nodeObject).toBe('function');
    const nodeFunctionPrototype = Object.getPrototypeOf(nodeObject) as object;
    expect(nodeFunctionPrototype === Function.prototype).toBe(false);
    // Functions and objects Booth's and XState's modules make belong to the VM's realm.
    for (const made of [check, createActor, checkpointMachine.transition]) {
      expect(Object.getPrototypeOf(made) === Function.prototype).toBe(true);
    }
    const result = check(() => envelope('Paris', 0.9), 'q');
    expect(Object.getPrototypeOf(result.attempts) === Array.prototype).toBe(true);
    expect(Object.getPrototypeOf(createActor(checkpointMachine, { input: { prompt: 'q', effects: 'events' } }).getSnapshot().context) === Object.prototype).toBe(true);
  });
});
