import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { check } from '../../src/index.js';
import { htmlText } from '../../src/visualize/escape.js';
import { renderHtml } from '../../src/visualize/html.js';
import { dotToSvg, machineToDot, machineToMermaid, toSequence } from '../../src/visualize/index.js';
import { runDot, runFlowchart } from '../../src/visualize/run.js';
import { clip, sequence } from '../../src/visualize/sequence.js';
import { everyFieldRuns } from '../fixtures/every-field-runs.js';
import { hostileCopy, XSS_PAYLOADS } from '../fixtures/hostile-results.js';
import { envelope, scripted } from '../fixtures/helpers.js';
import { clarifiedRun, HOSTILE_CLARIFICATIONS } from '../fixtures/clarified-runs.js';
import { spendRuns } from '../fixtures/spend-runs.js';
import type { BoothResult } from '../../src/results/result.js';

const runs = await everyFieldRuns();

/**
 * A Mermaid sequence line as Booth writes it: a fixed statement, then label text only — no `;#"<>%{}` but in entities, no line break.
 * A cascade's models are lifelines `Model1`, `Model2`, … their names only ever in a note's text.
 */
const SEQUENCE_LINE =
  /^(?:sequenceDiagram|  participant (?:App|Booth|Model\d*)|  (?:App->>Booth|Booth->>Model\d*|Booth-\)Model\d*|Model\d*-->>Booth|Model\d*--xBooth|Booth-->>App|Note over (?:Booth|Model\d*)): (?:[^;#"<>%{}\r\n\u2028\u2029\u0085]|#\w+;)*|)$/;

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

  it("a cascade's model names are only ever note text: its lifelines are Booth's own ids, one per model", async () => {
    const names = [XSS_PAYLOADS[0]!, XSS_PAYLOADS[3]!, XSS_PAYLOADS[5]!] as const;
    const lines = sequence((await spendRuns(names)).cascade as unknown as BoothResult).split('\n');
    for (const line of lines) expect(line).toMatch(SEQUENCE_LINE);
    expect(lines.filter((line) => line.startsWith('  participant Model'))).toEqual(['  participant Model1', '  participant Model2', '  participant Model3']);
    expect(lines.filter((line) => line.startsWith('  Note over Model'))).toHaveLength(3);
    // Names are never drawn in the path: its DOT and flowchart hold counts only.
    const { cascade } = await spendRuns(names);
    for (const text of [runFlowchart(cascade as unknown as BoothResult), runDot(cascade as unknown as BoothResult)]) expect(text).not.toMatch(/<img|<script|onerror|%%|themeCSS/);
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

describe('a clarification whose readings and rephrasing are hostile', () => {
  /** Real clarify() runs: each text as a reading chosen, as a reading not chosen, and as the rephrasing. */
  const clarified = async (text: string) => [
    (await clarifiedRun(0, { readings: [text, `other ${text}`] })).result,
    (await clarifiedRun(1, { readings: ['plain', text] })).result,
    (await clarifiedRun({ rephrased: text }, { readings: [`first ${text}`, `second ${text}`] })).result,
  ];

  it('the sequence diagram keeps each reading and rephrasing inside its one-line label, at the round boundary', async () => {
    const benign = sequence((await clarifiedRun(0)).result).split('\n');
    for (const text of HOSTILE_CLARIFICATIONS) {
      for (const result of await clarified(text)) {
        const lines = sequence(result).split('\n');
        expect(lines).toHaveLength(benign.length);
        for (const line of lines) expect(line).toMatch(SEQUENCE_LINE);
        // The boundary is still one offer and one answer, where the benign run has them.
        expect(lines.findIndex((line) => line.startsWith('  App->>Booth: the person'))).toBe(benign.findIndex((line) => line.startsWith('  App->>Booth: the person')));
        expect(lines.filter((line) => line.startsWith('  Booth-->>App: '))).toHaveLength(2);
      }
    }
  });

  it('the flowchart and DOT of a clarified run carry none of its texts', async () => {
    for (const text of HOSTILE_CLARIFICATIONS) {
      for (const result of await clarified(text)) {
        for (const drawn of [runFlowchart(result), runDot(result)]) {
          expect(drawn).not.toMatch(/<img|<script|onerror|onload|%%|themeCSS|forged|quoted/);
        }
      }
    }
  });

  it('the page writes each reading and rephrasing escaped, wherever it shows them', async () => {
    for (const text of HOSTILE_CLARIFICATIONS) {
      for (const result of await clarified(text)) {
        const page = renderHtml(result, '<svg></svg>');
        expect(page).not.toContain(text);
        const clarification = result.clarifications[0]!;
        for (const reading of clarification.readings) expect(page).toContain(`>${htmlText(reading)}`);
        expect(page).toContain(htmlText(JSON.stringify(clarification.rephrased ?? clarification.chosen)));
      }
    }
  });
});

describe('labels of huge answers', () => {
  it('clip cuts at 80 code points as spreading the text into code points did, never inside a pair', () => {
    const spread = (value: string, max: number) => {
      const chars = [...value];
      return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : value;
    };
    const pieces = ['a', '😀', '\ud800', '\udc00', 'é'];
    for (let length = 75; length <= 85; length += 1) {
      for (let seed = 0; seed < 40; seed += 1) {
        let text = '';
        for (let i = 0; i < length; i += 1) text += pieces[(i * 7 + seed * 13 + (i >> 2) * seed) % pieces.length];
        expect(clip(text, 80)).toBe(spread(text, 80));
      }
    }
    expect(clip('', 80)).toBe('');
    expect(clip('😀'.repeat(81), 80)).toBe(`${'😀'.repeat(79)}…`);
  });

  it('a 64 MB answer draws within a 256 MB heap, in well under the 8.7 s spreading it took', () => {
    // Spreading 64 M code points into an array needs over 512 MB by itself, so under a
    // 256 MB heap the old label aborts the process: a failure that does not depend on how
    // busy the machine is. The time bound is a loose second check, far above what cutting costs.
    const child = spawnSync(
      process.execPath,
      ['--max-old-space-size=256', '--import', 'tsx', fileURLToPath(new URL('../fixtures/huge-sequence.ts', import.meta.url)), '64'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.stderr).not.toContain('heap out of memory');
    expect(child.status).toBe(0);
    const [, ms, , line] = /^drawn (\d+) (\d+) (.*)$/m.exec(child.stdout) ?? [];
    expect(line).toBe(`  Booth-->>App: VERIFIED #quot;${'é'.repeat(10)}${'x'.repeat(59)}…`);
    expect(Number(ms)).toBeLessThan(2_000);
  }, 60_000);
});
