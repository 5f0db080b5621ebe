import { describe, expect, it, vi } from 'vitest';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { acheck, CheckpointError, type CheckpointStore, clarify, memoryStore } from '../../src/index.js';
import { edgeCounts, edgeKey, machineGraph } from '../../src/visualize/graph.js';
import { comparable, QUESTION, READINGS, scriptedCall } from '../fixtures/clarify-runs.js';

const graph = machineGraph(checkpointMachine);
const EDGES = new Set(graph.edges.map((edge) => edgeKey(edge.from, edge.to)));
/** The steps of a trace no transition of the machine takes. */
const impossibleSteps = (trace: ReadonlyArray<{ state: string }>) => [...edgeCounts(trace, graph).keys()].filter((key) => !EDGES.has(key)).map((key) => key.replace('\u0000', ' → '));

describe('clarify() of a result that ended AMBIGUOUS', () => {
  it('its trace shows the run waiting for the person, as a run kept in a store does: no step leaves the final `ambiguous`', async () => {
    const call = scriptedCall('clarified');
    const ended = await acheck(call, QUESTION);
    expect(ended.trace.at(-1)?.state).toBe('ambiguous');
    const clarified = await clarify(ended, READINGS[1], call);
    const states = clarified.trace.map((step) => step.state);
    expect(states.slice(0, 5)).toEqual(['calling', 'parsing', 'ambiguityGate', 'awaitingClarification', 'calling']);
    expect(impossibleSteps(clarified.trace)).toEqual([]);
    // Its JSON (a batch line) continues the same.
    expect(comparable(await clarify(JSON.parse(JSON.stringify(ended)), 1, call))).toEqual(comparable(clarified));

    const store = memoryStore();
    await acheck(call, QUESTION, { checkpoint: store, key: 'k', awaitClarification: true });
    const waited = await acheck(call, QUESTION, { checkpoint: store, key: 'k', clarification: 1 });
    expect(comparable(waited)).toEqual(comparable(clarified));
  });
});

describe('a clarified run that ended, its checkpoint not yet deleted', () => {
  it('given the same clarification again (the rerun of a process that died between the last save and the delete), it gives the result and calls nothing', async () => {
    const kept = memoryStore();
    const undeleted: CheckpointStore = { load: kept.load, save: kept.save, delete: () => undefined };
    const call = scriptedCall('clarified');
    await acheck(call, QUESTION, { checkpoint: kept, key: 'k', awaitClarification: true });
    const first = await acheck(call, QUESTION, { checkpoint: undeleted, key: 'k', clarification: 1 });
    expect(first.status).toBe('REPAIRED');
    expect(kept.size).toBe(1);
    const callFn = vi.fn(call);
    const again = await acheck(callFn, QUESTION, { checkpoint: kept, key: 'k', clarification: READINGS[1] });
    expect(comparable(again)).toEqual(comparable(first));
    expect(callFn).not.toHaveBeenCalled();
    expect(kept.size).toBe(0);
  });
});

describe('a waiting run continued with other options', () => {
  it('another maxClarifications is a CheckpointError naming both, as another maxRetries is, and nothing is called: the stored one no longer wins silently', async () => {
    const call = scriptedCall('twice');
    const store = memoryStore();
    await acheck(call, QUESTION, { checkpoint: store, key: 'k', awaitClarification: true, maxClarifications: 1 });
    const saved = JSON.stringify(await store.load('k'));
    const callFn = vi.fn(call);
    for (const [options, message] of [
      [{ maxClarifications: 2 }, 'its maxClarifications is 1, this call\'s is 2.'],
      [{}, 'its maxClarifications is 1, this call\'s is 2.'],
      [{ maxClarifications: 1, maxRetries: 2 }, 'its maxRetries is 1, this call\'s is 2.'],
    ] as const) {
      const run = acheck(callFn, QUESTION, { checkpoint: store, key: 'k', clarification: 1, ...options });
      await expect(run).rejects.toBeInstanceOf(CheckpointError);
      await expect(run).rejects.toThrow(`Booth checkpoint for key "k" belongs to a different run: ${message}`);
    }
    expect(callFn).not.toHaveBeenCalled();
    expect(JSON.stringify(await store.load('k'))).toBe(saved);
    // With its own, it goes on, and ends AMBIGUOUS once its one clarification is spent.
    const done = await acheck(callFn, QUESTION, { checkpoint: store, key: 'k', clarification: 1, maxClarifications: 1 });
    expect(done.status).toBe('AMBIGUOUS');
    expect(done.clarifications).toHaveLength(1);
    expect(store.size).toBe(0);
  });

  it('awaitClarification is not compared: the call that continues a run need not repeat it, and the run waits again as it was started', async () => {
    const call = scriptedCall('twice');
    const store = memoryStore();
    await acheck(call, QUESTION, { checkpoint: store, key: 'k', awaitClarification: true });
    const second = await acheck(call, QUESTION, { checkpoint: store, key: 'k', clarification: 1 });
    expect(second.status).toBe('AMBIGUOUS');
    expect(store.size).toBe(1);
  });
});
