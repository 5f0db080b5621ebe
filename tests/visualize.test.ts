import { describe, expect, it } from 'vitest';
import { checkpointMachine } from '../machines/checkpoint.js';
import { evidenceMachine } from '../machines/evidence.js';
import { check, checkWithEvidence } from '../src/index.js';
import {
  machineGraph,
  machineToDot,
  machineToMermaid,
  machineToSvg,
  toDot,
  toHtml,
  toMermaid,
  toSequence,
  toSvg,
} from '../src/visualize/index.js';
import { envelope, scripted } from './helpers.js';

const CHECKPOINT_STATES = [
  'calling',
  'backingOff',
  'parsing',
  'ambiguityGate',
  'validationGate',
  'confidenceGate',
  'reconsidering',
  'verified',
  'repaired',
  'ambiguous',
  'uncertain',
];

/** Every transition the machine defines, counted straight from its state nodes. */
function transitionCount(machine: typeof checkpointMachine | typeof evidenceMachine): number {
  return Object.values(machine.root.states).reduce(
    (sum, node) => sum + [...node.transitions.values()].flat().length + (node.always?.length ?? 0),
    0,
  );
}

const repaired = () => check(scripted([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).sync, 'Capital of France?');

describe('machine graphs', () => {
  it('have every state of the checkpoint machine, finals marked', () => {
    const graph = machineGraph(checkpointMachine);
    expect(graph.states.map((s) => s.name)).toEqual(CHECKPOINT_STATES);
    expect(graph.states.filter((s) => s.final).map((s) => s.name)).toEqual(['verified', 'repaired', 'ambiguous', 'uncertain']);
    expect(graph.initial).toBe('calling');
  });

  it('have every transition, always transitions and guards included', () => {
    for (const machine of [checkpointMachine, evidenceMachine]) {
      const graph = machineGraph(machine);
      expect(graph.edges.flatMap((e) => e.labels)).toHaveLength(transitionCount(machine));
    }
    const labels = (from: string, to: string) =>
      machineGraph(checkpointMachine).edges.find((e) => e.from === from && e.to === to)?.labels;
    expect(labels('calling', 'parsing')).toEqual(['model.replied [isText]']);
    expect(labels('calling', 'backingOff')).toEqual(['model.failed [canRetryCall]']);
    expect(labels('backingOff', 'calling')).toEqual(['after backoff']);
    expect(labels('calling', 'uncertain')).toEqual(['model.replied [else]', 'model.failed [else]', 'run.deadline']);
    expect(labels('backingOff', 'uncertain')).toEqual(['run.deadline']);
    expect(labels('parsing', 'reconsidering')).toEqual(['[parseFailed and canRetry]']);
    expect(labels('confidenceGate', 'verified')).toEqual(['[isConfident and isFirstAttempt]']);
    expect(labels('reconsidering', 'calling')).toEqual(['[callFailed]', '[parseFailed]', '[failedValidation]', '[else]']);
    expect(labels('validationGate', 'validationGate')).toEqual([
      'validator.returned',
      'validator.threw',
      'done: validate',
      'error: validate',
    ]);
    expect(labels('calling', 'calling')).toEqual(['model.timedOut', 'booth.resumed', 'done: callModel', 'error: callModel']);
  });

  it('Mermaid stateDiagram-v2 and DOT name every state and edge', () => {
    const mermaid = machineToMermaid(checkpointMachine);
    const dotSource = machineToDot(checkpointMachine);
    expect(mermaid.startsWith('stateDiagram-v2\n  [*] --> calling\n')).toBe(true);
    for (const edge of machineGraph(checkpointMachine).edges) {
      expect(mermaid).toContain(`${edge.from} --> ${edge.to} : `);
      expect(dotSource).toContain(`"${edge.from}" -> "${edge.to}"`);
    }
    for (const final of ['verified', 'repaired', 'ambiguous', 'uncertain']) expect(mermaid).toContain(`${final} --> [*]`);
    expect(machineToMermaid(evidenceMachine)).toContain('comparing --> scoreGate : comparator.returned');
  });

  it('SVG is rendered without a browser and names every state', async () => {
    const svg = await machineToSvg(checkpointMachine);
    expect(svg).toMatch(/^<\?xml[\s\S]*<svg[\s\S]*<\/svg>\s*$/);
    for (const state of CHECKPOINT_STATES) expect(svg).toContain(`>${state}</text>`);
  });
});

describe('a single run, drawn', () => {
  it('toDot highlights exactly the edges of the trace, with how many times', () => {
    const result = repaired();
    const source = toDot(result);
    const taken = [...source.matchAll(/"(\w+)" -> "(\w+)" \[label="([^"]*)"[^\]]*class="taken"/g)].map(
      ([, from, to, label]) => `${from}->${to} ${/×(\d+)/.exec(label ?? '')?.[1]}`,
    );
    const fromTrace = new Map<string, number>();
    result.trace.slice(1).forEach((step, i) => {
      const key = `${result.trace[i]?.state}->${step.state}`;
      fromTrace.set(key, (fromTrace.get(key) ?? 0) + 1);
    });
    expect(taken.sort()).toEqual([...fromTrace].map(([key, n]) => `${key} ${n}`).sort());
    expect(taken).toContain('calling->parsing 2');
  });

  it('toMermaid styles the taken links and the visited states', () => {
    const flowchart = toMermaid(repaired());
    expect(flowchart).toContain('calling -->|"model.replied [isText] ×2"| parsing');
    expect(flowchart).toMatch(/class calling,parsing,ambiguityGate,confidenceGate,reconsidering,repaired visited/);
    const linkStyle = /linkStyle ([\d,]+) /.exec(flowchart)?.[1]?.split(',');
    expect(linkStyle).toHaveLength(6);
  });

  it('toSvg draws the evidence machine for an evidence result', async () => {
    const svg = await toSvg(checkWithEvidence('Sydney', ['Canberra is the capital.'], () => false));
    expect(svg).toContain('>scoreGate</text>');
    expect(svg).toContain('class="edge taken"');
  });

  it('toSequence tells the conversation attempt by attempt', () => {
    const result = check(scripted([{ throws: new Error('timeout') }, 'junk', envelope('Paris', 0.9)]).sync, 'q', { maxRetries: 2 });
    const diagram = toSequence(result);
    expect(diagram.split('\n').slice(0, 5)).toEqual(['sequenceDiagram', '  participant App', '  participant Booth', '  participant Model', '  App->>Booth: prompt']);
    expect(diagram).toContain('Booth->>Model: attempt 0, first prompt');
    expect(diagram).toContain('Model--xBooth: call failed: timeout');
    expect(diagram).toContain('Booth->>Model: attempt 1, the first prompt again');
    expect(diagram).toContain('Model-->>Booth: unparseable: no JSON object was found in the reply');
    expect(diagram).toContain('Booth->>Model: attempt 2, parse retry');
    expect(diagram).toContain('Note over Booth: parsing → ambiguityGate → confidenceGate → repaired');
    expect(diagram.trimEnd().endsWith('Booth-->>App: REPAIRED #quot;Paris#quot;')).toBe(true);
  });

  it('toSequence keeps model text from breaking the diagram', () => {
    const result = check(() => envelope('a;b#c\n"d"<e>', 0.9), 'q');
    const line = toSequence(result).split('\n').find((l) => l.startsWith('  Model-->>Booth'));
    expect(line).toBe('  Model-->>Booth: #quot;a#59;b#35;c\\n\\#quot;d\\#quot;#lt;e#gt;#quot; at confidence 0.9');
  });

  it('toHtml is one self-contained page: inline SVG and CSS, no script, nothing to fetch', async () => {
    const html = await toHtml(repaired());
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<svg');
    expect(html).not.toContain('<?xml');
    expect(html).not.toMatch(/<script|<link|@import|url\(|src=/i);
    expect(html).toContain('<h1 id="status" class="status-REPAIRED">REPAIRED</h1>');
    expect(html.match(/<tr data-attempt=/g)).toHaveLength(2);
    expect(html).toContain('attempt 1: confidence retry');
  });

  it('toHtml escapes whatever the model wrote', async () => {
    const result = check(() => `<script>alert(1)</script> ${envelope('<img src=x onerror=alert(1)>', 0.9)}`, 'q');
    const html = await toHtml(result);
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});
