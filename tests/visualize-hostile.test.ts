import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { check } from '../src/index.js';
import { dotToSvg, machineToDot, machineToMermaid, toSequence } from '../src/visualize/index.js';
import { runDot, runFlowchart } from '../src/visualize/run.js';
import { sequence } from '../src/visualize/sequence.js';
import { everyFieldRuns } from './fixtures/every-field-runs.js';
import { hostileCopy, XSS_PAYLOADS } from './fixtures/hostile-results.js';
import { envelope, scripted } from './helpers.js';

const runs = await everyFieldRuns();

/** A Mermaid sequence line as Booth writes it: a fixed statement, then label text only — no `;#"<>%{}` but in entities, no line break. */
const SEQUENCE_LINE =
  /^(?:sequenceDiagram|  participant (?:App|Booth|Model)|  (?:App->>Booth|Booth->>Model|Model-->>Booth|Model--xBooth|Booth-->>App|Note over Booth): (?:[^;#"<>%{}\r\n\u2028\u2029\u0085]|#\w+;)*|)$/;

describe('diagrams of runs with a hostile value in every field', () => {
  it('the walk replaces every leaf, the fields the review found unescaped among them', () => {
    const { leaves } = hostileCopy(runs['sampled']!, 'x');
    for (const field of ['attempts.0.confidence', 'trace.0.attempt', 'attempts.0.clusters.0.count', 'attempts.0.clusters.0.samples.0']) {
      expect(leaves).toContain(field);
    }
    expect(leaves).toContain('attempts.0.samples.0.rawText');
    expect(leaves).toContain('settings.callRetries.minDelayMs');
    expect(leaves.length).toBeGreaterThan(100);
  });

  it('the sequence diagram keeps each value inside its one-line label', () => {
    for (const [name, run] of Object.entries(runs)) {
      const lines = sequence(hostileCopy(run, 'benign').result).split('\n');
      for (const payload of XSS_PAYLOADS) {
        const hostile = sequence(hostileCopy(run, payload).result).split('\n');
        expect(hostile.length, name).toBe(lines.length);
        for (const line of hostile) expect(line, name).toMatch(SEQUENCE_LINE);
      }
    }
  });

  it('the flowchart and DOT of a run carry none of its values: only counts, which are computed', () => {
    for (const run of Object.values(runs)) {
      for (const payload of XSS_PAYLOADS) {
        const { result } = hostileCopy(run, payload);
        for (const text of [runFlowchart(result), runDot(result)]) {
          expect(text).not.toMatch(/<img|<script|onerror|onload|%%|themeCSS/);
        }
      }
    }
  });

  it('a machine with hostile names: DOT strings stay closed, Mermaid ids one word, labels text', async () => {
    const name = `"];<img src=x onerror=alert(1)>\n%%{init:{}}%% end`;
    const machine = createMachine({
      id: `id${name}`,
      initial: `a${name}`,
      states: {
        [`a${name}`]: { on: { [`go\\N${name}`]: { target: `b ${name}`, guard: `g\\G${name}` } } },
        [`b ${name}`]: { type: 'final' },
      },
    });
    const dot = machineToDot(machine);
    // Each statement still ends its own line: no quote closed early, no statement added.
    expect(dot.split('\n').filter((line) => line.startsWith('  "'))).toHaveLength(3);
    const svg = await dotToSvg(dot);
    expect(svg).not.toMatch(/<img|<\/?script/);
    // \N and \G stay as written: the backslash is escaped, so Graphviz does not substitute names.
    expect(svg).toContain('go\\N&quot;];&lt;img src=x onerror=alert(1)&gt;');
    const mermaid = machineToMermaid(machine);
    for (const line of mermaid.trim().split('\n').slice(1)) {
      expect(line).toMatch(/^  (?:\[\*\]|\w+) --> (?:\[\*\]|\w+)(?: : (?:[^;#"<>%{}\n]|#\w+;)*)?$/);
    }
  });

  it('a Mermaid directive in an answer is written as entities: no %%, no braces', () => {
    const directive = `%%{init:{'themeCSS':'svg{opacity:0.31}'}}%%`;
    const diagram = toSequence(check(scripted([envelope(directive, 0.9)]).sync, 'q'));
    expect(diagram).not.toMatch(/[%{}]/);
    expect(diagram).toContain("#37;#37;#123;init:#123;'themeCSS':'svg#123;opacity:0.31#125;'#125;#125;#37;#37;");
  });
});
