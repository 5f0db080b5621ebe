// A core test for every runtime: vitest, xstate and the built package only (see tests/portable/README.md).
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { check } from 'boothjs';
import { checkpointMachine } from 'boothjs/machine';
import { envelope, scriptedModel } from 'boothjs/testing';
import { dotToSvg, machineGraph, machineToDot, machineToMermaid, machineToSvg, toDot, toHtml, toMermaid, toSequence, toSvg } from 'boothjs/visualize';

const repaired = () => check(scriptedModel([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).sync, 'Capital of France?');

describe('pictures of a run', () => {
  it('toHtml() is one self-contained page with the status, the answer and the diagram as <svg>', async () => {
    const html = await toHtml(repaired());
    expect(html.startsWith('<!DOCTYPE html>') || html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('REPAIRED');
    expect(html).toContain('Paris');
    expect(html).toContain('<svg');
    expect(html).toContain('</svg>');
    expect(html).toContain('reconsidering');
    // It opens offline: no script and no stylesheet or font fetched from elsewhere.
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<link');
  });

  it('toHtml() escapes what the model wrote', async () => {
    const result = check(() => envelope('<img src=x onerror=alert(1)>', 0.9), 'q');
    const html = await toHtml(result);
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;img');
  });

  it('toMermaid() draws every state of the machine and marks the path the run took', () => {
    const mermaid = toMermaid(repaired());
    expect(mermaid.startsWith('flowchart LR')).toBe(true);
    for (const state of ['asking', 'calling', 'parsing', 'ambiguityGate', 'confidenceGate', 'reconsidering', 'verified', 'repaired', 'ambiguous', 'uncertain']) {
      expect(mermaid).toContain(`${state}(`);
    }
    expect(mermaid).toContain('class asking,calling,parsing,ambiguityGate,confidenceGate,reconsidering,repaired visited');
  });

  it('toSequence() tells the conversation attempt by attempt', () => {
    const sequence = toSequence(repaired());
    expect(sequence.startsWith('sequenceDiagram')).toBe(true);
    expect(sequence).toContain('attempt 0, first prompt');
    expect(sequence).toContain('attempt 1, confidence retry');
    expect(sequence).toContain('REPAIRED');
  });

  it('toDot() and machineToDot() write Graphviz source, with no Graphviz needed', () => {
    const dot = toDot(repaired());
    expect(dot.startsWith('digraph')).toBe(true);
    expect(dot).toContain('reconsidering');
    const machine = machineToDot(checkpointMachine);
    expect(machine.startsWith('digraph')).toBe(true);
    expect(machine).toContain('confidenceGate');
  });

  it('toSvg(), machineToSvg() and dotToSvg() draw with Graphviz', async () => {
    const svg = await toSvg(repaired());
    expect(svg).toContain('<svg');
    expect(svg).toContain('reconsidering');
    expect(await machineToSvg(checkpointMachine)).toContain('confidenceGate');
    expect(await dotToSvg('digraph { a -> b }')).toContain('<svg');
  });

  it('a parent workflow\'s output draws as the result does', async () => {
    const actor = createActor(checkpointMachine, { input: { prompt: 'Capital of France?', effects: 'events' } }).start();
    actor.send({ type: 'model.replied', reply: envelope('Lyon', 0.3) });
    actor.send({ type: 'model.replied', reply: envelope('Paris', 0.9) });
    const output = actor.getSnapshot().output!;
    expect(toMermaid(output)).toBe(toMermaid(repaired()));
    expect(await toHtml(output)).toContain('REPAIRED');
  });
});

describe('pictures of the machine', () => {
  it('machineToMermaid() and machineGraph() have every state, the finals marked', () => {
    const mermaid = machineToMermaid(checkpointMachine);
    expect(mermaid.startsWith('stateDiagram-v2')).toBe(true);
    expect(mermaid).toContain('[*] --> asking');
    expect(mermaid).toContain('confidenceGate --> verified : [isConfident and isFirstAttempt]');
    const graph = machineGraph(checkpointMachine);
    expect(graph.initial).toBe('asking');
    expect(graph.states.filter((state) => state.final).map((state) => state.name)).toEqual(['verified', 'repaired', 'ambiguous', 'uncertain', 'overBudget']);
    expect(graph.states).toHaveLength(19);
    expect(mermaid).toContain('ambiguityGate --> awaitingClarification : [isAmbiguous and canAwaitClarification]');
  });
});
