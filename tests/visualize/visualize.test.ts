import { describe, expect, expectTypeOf, it } from 'vitest';
import { and, not, or, setup } from 'xstate';
import { z } from 'zod';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { evidenceMachine } from '../../machines/evidence.js';
import { acheck, type CallInfo, check, checkWithEvidence } from '../../src/index.js';
import { durationText, nextStep, settingsRows, usageText, verdictOf } from '../../src/visualize/explain.js';
import { CLARIFY_EVENTS, RETRY_GUARDS, retryReasons, WAITING } from '../../src/visualize/retries.js';
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
} from '../../src/visualize/index.js';
import { envelope, scripted } from '../fixtures/helpers.js';
import { ambiguousReply, clarifiedRun, waitedRun } from '../fixtures/clarified-runs.js';

const CHECKPOINT_STATES = [
  'asking',
  'calling',
  'backingOff',
  'sampling',
  'agreementGate',
  'parsing',
  'ambiguityGate',
  'schemaGate',
  'validationGate',
  'confidenceGate',
  'awaitingClarification',
  'reconsidering',
  'answerRefused',
  'escalating',
  'verified',
  'repaired',
  'ambiguous',
  'uncertain',
  'overBudget',
];

/** Every transition the machine defines, counted straight from its state nodes. */
function transitionCount(machine: typeof checkpointMachine | typeof evidenceMachine): number {
  return Object.values(machine.root.states).reduce(
    (sum, node) => sum + [...node.transitions.values()].flat().length + (node.always?.length ?? 0),
    0,
  );
}

/** A run that retried once for each gate: unparseable, then rejected by the validator, then not confident. */
const retriedThrice = () =>
  check(
    scripted(['junk', envelope('Lyon', 0.9), envelope('Paris', 0.4), envelope('Paris', 0.9)]).sync,
    'Capital of France?',
    { maxRetries: 3, validator: (answer) => (answer === 'Lyon' ? [false, 'Lyon is not a capital'] : true) },
  );

const repaired = () => check(scripted([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).sync, 'Capital of France?');

describe('machine graphs', () => {
  it('have every state of the checkpoint machine, finals marked', () => {
    const graph = machineGraph(checkpointMachine);
    expect(graph.states.map((s) => s.name)).toEqual(CHECKPOINT_STATES);
    expect(graph.states.filter((s) => s.final).map((s) => s.name)).toEqual(['verified', 'repaired', 'ambiguous', 'uncertain', 'overBudget']);
    expect(graph.initial).toBe('asking');
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
    // A streamed reply decides before it ends: its readings, or a member the schema refuses.
    expect(labels('calling', 'ambiguityGate')).toEqual(['reply.ambiguityKnown [readsAmbiguous]', 'reply.readingsComplete [readsAmbiguous]']);
    expect(labels('calling', 'answerRefused')).toEqual(['reply.memberFailed [refusesMember]']);
    expect(labels('backingOff', 'calling')).toEqual(['backoff.elapsed [else]']);
    expect(labels('calling', 'uncertain')).toEqual(['model.replied [else]', 'model.failed [isPermanentFailure]', 'model.failed [else]', 'run.deadline']);
    expect(labels('sampling', 'uncertain')).toEqual(['sample.failed [isPermanentSampleFailure]', 'run.deadline']);
    expect(labels('backingOff', 'uncertain')).toEqual(['run.deadline']);
    expect(labels('parsing', 'reconsidering')).toEqual(['[parseFailed and canRetry]']);
    expect(labels('confidenceGate', 'verified')).toEqual(['[isConfident and isFirstAttempt]']);
    expect(labels('asking', 'sampling')).toEqual(['[isSampling]']);
    expect(labels('asking', 'calling')).toEqual(['[else]']);
    expect(labels('sampling', 'agreementGate')).toEqual(['[allSampled]', '[isVoteSettled]']);
    expect(labels('agreementGate', 'reconsidering')).toEqual(['[parseFailed and canRetry]']);
    expect(labels('reconsidering', 'asking')).toEqual(['[callFailed]', '[parseFailed]', '[failedValidation]', '[isSplit]', '[else]']);
    expect(labels('validationGate', 'validationGate')).toEqual([
      'validator.returned',
      'validator.threw',
      'done: validate',
      'error: validate',
    ]);
    expect(labels('calling', 'calling')).toEqual(['model.timedOut', 'booth.resumed', 'done: callModel', 'error: callModel']);
    // An ambiguous question waits for the person who asked only when the run may wait; then a chosen reading or a rephrasing starts a round.
    expect(labels('ambiguityGate', 'awaitingClarification')).toEqual(['[isAmbiguous and canAwaitClarification]']);
    expect(labels('ambiguityGate', 'ambiguous')).toEqual(['[isAmbiguous]']);
    expect(labels('awaitingClarification', 'asking')).toEqual(['clarify.chose [isOfferedReading]', 'clarify.rephrased [isRephrasing]']);
    expect(labels('awaitingClarification', 'ambiguous')).toEqual(['clarify.cancelled']);
    // Nothing runs while a person decides: a resume there re-arms no clock, and a late usage report is the run's.
    expect(labels('awaitingClarification', 'awaitingClarification')).toEqual(['booth.resumed', 'model.usage']);
  });

  it("name XState's and/or/not guards by what they are, not by a function name a bundler renames", () => {
    const renamed = <T extends object>(guard: T, name: string): T => Object.defineProperty(guard, 'name', { value: name });
    const machine = setup({ guards: { a: () => true, b: () => false } }).createMachine({
      initial: 'start',
      states: {
        start: { on: { go: [{ target: 'one', guard: renamed(and(['a', renamed(not('b'), 't')]), 'and2') }, { target: 'two', guard: renamed(or(['a', 'b']), 'e') }] } },
        one: {},
        two: {},
      },
    });
    expect(machineGraph(machine).edges.flatMap((edge) => edge.labels)).toEqual(['go [a and not b]', 'go [a or b]']);
  });

  it('draw what the machine does in any state as a note: usage reports and resumes', () => {
    expect(machineGraph(checkpointMachine).anyState).toEqual(['booth.resumed', 'model.usage [isCurrentAttempt]', 'model.usage [else]']);
    const note = 'in any state — booth.resumed / model.usage [isCurrentAttempt] / model.usage [else]';
    expect(machineToMermaid(checkpointMachine)).toContain(`  note right of asking : ${note}\n`);
    expect(machineToDot(checkpointMachine)).toContain(`label="${note}"`);
    expect(machineGraph(evidenceMachine).anyState).toEqual([]);
    expect(machineToMermaid(evidenceMachine)).not.toContain('note');
  });

  it('Mermaid stateDiagram-v2 and DOT name every state and edge', () => {
    const mermaid = machineToMermaid(checkpointMachine);
    const dotSource = machineToDot(checkpointMachine);
    expect(mermaid.startsWith('stateDiagram-v2\n  [*] --> asking\n')).toBe(true);
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
  it("a result made by another copy of Booth (its ESM build beside the CommonJS one) draws as this copy's own does", async () => {
    const result = check(scripted([envelope('Paris', 0.9)]).sync, 'Capital of France?');
    // Another copy's class: the same own fields, another prototype.
    const foreign = Object.setPrototypeOf({ ...result }, class ForeignResult {}.prototype) as typeof result;
    expect(foreign).not.toBeInstanceOf(result.constructor);
    expect(await toHtml(foreign)).toBe(await toHtml(result));
    expect(toMermaid(foreign)).toBe(toMermaid(result));
    // Still read as untrusted: a wrong field is named, with no value quoted.
    const forged = Object.setPrototypeOf({ ...result, confidence: '<b>0.9</b>' }, class ForeignResult {}.prototype) as typeof result;
    await expect(toHtml(forged)).rejects.toThrow(/its confidence is a string, expected/);
  });

  it('toDot highlights exactly the edges of the trace, with how many times', () => {
    const result = repaired();
    const source = toDot(result);
    const taken = [...source.matchAll(/"(\w+)" -> "(\w+)" \[label="([^"]*)"[^\]]*class="taken"/g)].map(
      ([, from, to, label]) => `${from}->${to} ${/×(\d+)/.exec(label ?? '')?.[1]}`,
    );
    // The trace leaves out asking, which only routes: the run starts there, and a retry's step goes through it.
    const states = ['asking', ...result.trace.map((step) => step.state)];
    const fromTrace = new Map<string, number>();
    states.slice(1).forEach((to, i) => {
      const from = states[i];
      const keys = from === 'reconsidering' ? [`${from}->asking`, `asking->${to}`] : [`${from}->${to}`];
      for (const key of keys) fromTrace.set(key, (fromTrace.get(key) ?? 0) + 1);
    });
    expect(taken.sort()).toEqual([...fromTrace].map(([key, n]) => `${key} ${n}`).sort());
    expect(taken).toContain('calling->parsing 2');
    expect(taken).toContain('asking->calling 2');
  });

  it('the path starts in the initial state: asking → calling is taken once per attempt, asking is filled', () => {
    const verified = check(scripted([envelope('Paris', 0.9)]).sync, 'q');
    expect(verified.status).toBe('VERIFIED');
    expect(toDot(verified)).toContain('"asking" -> "calling" [label="[else]\\n×1", color="#c0392b"');
    expect(toDot(verified)).toMatch(/"asking" \[[^\]]*class="visited"/);
    const flowchart = toMermaid(verified);
    expect(flowchart).toContain('asking -->|"[else] ×1"| calling');
    expect(flowchart).toMatch(/class asking,calling,/);
    const links = flowchart.split('\n').filter((line) => line.includes('-->'));
    const askingToCalling = links.findIndex((line) => line.startsWith('  asking -->|"[else]'));
    expect(/linkStyle ([\d,]+) /.exec(flowchart)?.[1]?.split(',')).toContain(String(askingToCalling));
    // Two and three attempts: two and three moves out of asking, not one and two.
    const counts = [repaired(), check(scripted(['junk', 'junk', envelope('Paris', 0.9)]).sync, 'q', { maxRetries: 2 })].map(
      (result) => /"asking" -> "calling" \[label="\[else\]\\n×(\d+)"/.exec(toDot(result))?.[1],
    );
    expect(counts).toEqual(['2', '3']);
    // A sampled run leaves asking for sampling instead.
    const sampled = check(scripted(Array(3).fill(envelope('Paris', 0.9))).sync, 'q', { samples: 3 });
    expect(toMermaid(sampled)).toContain('asking -->|"[isSampling] ×1"| sampling');
  });

  it('toMermaid styles the taken links and the visited states', () => {
    const flowchart = toMermaid(repaired());
    expect(flowchart).toContain('calling -->|"model.replied [isText] ×2"| parsing');
    expect(flowchart).toMatch(/class asking,calling,parsing,ambiguityGate,confidenceGate,reconsidering,repaired visited/);
    const linkStyle = /linkStyle ([\d,]+) /.exec(flowchart)?.[1]?.split(',');
    expect(linkStyle).toHaveLength(7);
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

  it('toHtml shows each attempt\'s duration and usage, and the run\'s totals', async () => {
    // A call that fails before its reply reports nothing; the next two report usage, the last a cost too.
    const reports = [null, { inputTokens: 100, outputTokens: 20 }, { inputTokens: 1_200, outputTokens: 30, costUsd: 0.0125 }];
    const replies = [null, envelope('Lyon', 0.3), envelope('Paris', 0.9)];
    const result = check(
      (_p: string, info: CallInfo) => {
        const report = reports[info.attempt];
        const reply = replies[info.attempt];
        if (!report || !reply) throw new Error('503');
        info.reportUsage?.(report);
        return reply;
      },
      'q',
      { maxRetries: 2 },
    );
    const html = await toHtml(result);
    expect(html).toContain('<th>duration</th><th>tokens</th><th>raw reply</th>');
    expect([...html.matchAll(/<td class="tokens">([^<]*)<\/td>/g)].map((m) => m[1])).toEqual([
      '—',
      '100 in / 20 out / 120 total',
      '1,200 in / 30 out / 1,230 total, cost $0.0125',
    ]);
    expect([...html.matchAll(/<td class="duration">([^<]*)<\/td>/g)].map((m) => m[1])).toEqual(result.attempts.map((a) => durationText(a.durationMs)));
    expect(html).toContain('<span data-name="tokens">tokens <b>1,300 in / 50 out / 1,350 total, cost $0.0125</b></span>');
    expect(html).toContain(`<span data-name="duration">duration <b>${durationText(result.durationMs)}</b></span>`);
  });

  it('toHtml lists every call try of an attempt with its error, escaped and with URLs redacted', async () => {
    const failing = () => Object.assign(new Error('POST http://user:sk-1@host/v1?key=sk-2 failed: 500 <b>Internal</b>'), { status: 500 });
    const model = scripted([{ throws: failing() }, { throws: failing() }, envelope('Paris', 0.9)]);
    const result = await acheck(model.async, 'q', { callRetries: { retries: 3, minDelayMs: 1, maxDelayMs: 1 } });
    expect(result.attempts[0]!.callTries.map((t) => t.error === null)).toEqual([false, false, true]);
    const html = await toHtml(result);
    const shown = 'failed: POST http://***:***@host/v1?key=*** failed: 500 &lt;b&gt;Internal&lt;/b&gt;; then waited 1 ms';
    expect(html).toContain(
      `accepted (confidence 0.9 ≥ 0.7)<ol class="tries"><li class="failed">try 1 ${shown}</li><li class="failed">try 2 ${shown}</li><li class="replied">try 3 replied</li></ol></td>`,
    );
    // Every try failing: the verdict and the raw text redacted alike, so no key is on the page.
    const spent = await acheck(scripted(Array(8).fill({ throws: failing() })).async, 'q', { callRetries: { retries: 3, minDelayMs: 1, maxDelayMs: 1 } });
    const spentHtml = await toHtml(spent);
    expect(spentHtml.match(/<li class="failed">/g)).toHaveLength(8);
    expect(spentHtml).toContain('<li class="failed">try 4 failed: POST http://***:***@host/v1?key=*** failed: 500 &lt;b&gt;Internal&lt;/b&gt;</li></ol>');
    expect(spentHtml).not.toContain('sk-');
    expect(toSequence(spent)).toContain('Model--xBooth: call failed: POST http://***:***@host/v1?key=*** failed: 500 #lt;b#gt;Internal#lt;/b#gt;');
    // A single failed call: the verdict quotes it, with no list.
    expect(await toHtml(check(scripted([{ throws: failing() }, envelope('Paris', 0.9)]).sync, 'q'))).not.toContain('class="tries"');
  });

  it('toHtml lists the call tries of a sampled attempt sample by sample', async () => {
    const model = scripted([envelope('Paris', 0.9), { throws: Object.assign(new Error('503'), { status: 503 }) }, envelope('Paris', 0.8)]);
    const result = await acheck(model.async, 'q', { samples: 2, sampleConcurrency: 1, callRetries: { retries: 1, minDelayMs: 1, maxDelayMs: 1 } });
    expect(await toHtml(result)).toContain(
      '<ol class="tries"><li class="replied">sample 0, try 1 replied</li><li class="failed">sample 1, try 1 failed: 503; then waited 1 ms</li><li class="replied">sample 1, try 2 replied</li></ol>',
    );
  });

  it('toHtml shows no tokens, not zeros, when no call reported usage; the duration still', async () => {
    for (const result of [repaired(), checkWithEvidence('Sydney', ['Canberra is the capital.'], () => false)]) {
      const html = await toHtml(result);
      expect(html).not.toMatch(/data-name="tokens"|<th>tokens|class="tokens"/);
      expect(html).toContain(`<span data-name="duration">duration <b>${durationText(result.durationMs)}</b></span>`);
    }
  });

  it('the to… functions take a typed result (a schema\'s answer), showing the answer as JSON', async () => {
    const City = z.object({ city: z.string(), population: z.number() });
    const result = check(() => envelope({ city: 'Tokyo', population: 37_400_000 }, 0.9), 'q', { schema: City });
    expectTypeOf(toHtml).toBeCallableWith(result);
    const html = await toHtml(result);
    expect(html).toContain('{&quot;city&quot;:&quot;Tokyo&quot;,&quot;population&quot;:37400000}');
    expect(toSequence(result)).toContain('VERIFIED');
  });
});

describe('a run, explained', () => {
  it('each attempt says why it was turned down, gate by gate, or that it was accepted', () => {
    const result = retriedThrice();
    expect(result.attempts.map((a) => verdictOf(a, result.settings))).toEqual([
      'could not parse: no JSON object was found in the reply',
      'validator: Lyon is not a capital',
      'confidence 0.4 below the threshold 0.7',
      'accepted (validator passed, confidence 0.9 ≥ 0.7)',
    ]);
  });

  it('figures are rounded, but never so far that a confidence below the threshold reads as equal to it', () => {
    const result = check(() => envelope('Paris', 0.9), 'q');
    const attempt = result.attempts[0]!;
    expect(verdictOf({ ...attempt, confidence: 0.8500000000000001 }, result.settings)).toBe('accepted (confidence 0.85 ≥ 0.7)');
    expect(verdictOf({ ...attempt, confidence: 0.6999999999999998 }, result.settings)).toBe('confidence 0.6999999999999998 below the threshold 0.7');
    expect(verdictOf({ ...attempt, confidence: 0.7000000000000001 }, result.settings)).toBe('accepted (confidence 0.7000000000000001 ≥ 0.7)');
    expect(verdictOf({ ...attempt, confidence: 0.7 }, result.settings)).toBe('accepted (confidence 0.7 ≥ 0.7)');
    expect(settingsRows({ ...result.settings!, threshold: 0.1 + 0.2 })[0]).toEqual(['threshold', '0.3']);
  });

  it('a failed call, an ambiguous question and a validator without a message are each named', () => {
    const failed = check(scripted([{ throws: new Error('ECONNREFUSED') }, envelope('Paris', 0.95)]).sync, 'q', { threshold: 0.8 });
    expect(failed.attempts.map((a) => verdictOf(a, failed.settings))).toEqual([
      'call failed: ECONNREFUSED',
      'accepted (confidence 0.95 ≥ 0.8)',
    ]);
    const ambiguous = check(() => envelope('Paris', 0.9, { ambiguous: true, interpretations: ['France', 'Texas'] }), 'q');
    expect(verdictOf(ambiguous.attempts[0]!, ambiguous.settings)).toBe('ambiguous: returned at once');
    const silent = check(() => envelope('Paris', 0.9), 'q', { maxRetries: 0, validator: () => [false, ''] });
    expect(verdictOf(silent.attempts[0]!, silent.settings)).toBe('validator: rejected, without a message');
    expect(verdictOf(silent.attempts[0]!, null)).toBe('validator: rejected, without a message');
    expect(verdictOf(failed.attempts[1]!, null)).toBe('confidence 0.95');
  });

  it('after each attempt comes the retry prompt it caused, and after the last how the run ended', async () => {
    const result = retriedThrice();
    expect(result.attempts.map((_, i) => nextStep(result, i))).toEqual(['parse retry', 'validation retry', 'confidence retry', 'REPAIRED']);
    const spent = check(scripted([envelope('Lyon', 0.3), envelope('Lyon', 0.3)]).sync, 'q');
    expect(nextStep(spent, 1)).toBe('UNCERTAIN: no retries left');
    const slow = scripted([{ delayMs: 200, then: envelope('Paris', 0.9) }]);
    const late = await acheck(slow.async, 'q', { maxRetries: 3, deadlineMs: 20 });
    expect(nextStep(late, 0)).toBe('UNCERTAIN: out of time');
  });

  it('durations read in milliseconds, and in seconds once they are long', () => {
    expect([0, 7, 1_234.4, 9_999, 12_345].map(durationText)).toEqual(['0 ms', '7 ms', '1234 ms', '9999 ms', '12.3 s']);
  });

  it('usage reads as tokens in, out and total with separators, and the cost when one was reported', () => {
    expect(usageText({ inputTokens: 12_345, outputTokens: 678, totalTokens: 13_023, costUsd: null })).toBe('12,345 in / 678 out / 13,023 total');
    const costs = [0, 0.5, 0.0123, 0.000042, 1_234.5].map((costUsd) => usageText({ inputTokens: 1, outputTokens: 1, totalTokens: 2, costUsd }));
    expect(costs.map((text) => text.split(', cost ')[1])).toEqual(['$0.00', '$0.50', '$0.0123', '$0.000042', '$1,234.50']);
  });

  it('the settings name every option of the run, none for timers not set', async () => {
    expect(settingsRows(check(() => envelope('Paris', 0.9), 'q').settings!)).toEqual([
      ['threshold', '0.7'],
      ['maxRetries', '1 (at most 2 attempts)'],
      ['validator', 'none'],
      ['timeoutMs', 'none'],
      ['deadlineMs', 'none'],
      ['callRetries', 'none'],
    ]);
    const timed = await acheck(async () => envelope('Paris', 0.9), 'q', {
      threshold: 0.5,
      validator: () => true,
      timeoutMs: 2_000,
      deadlineMs: 9_000,
      callRetries: { retries: 2, minDelayMs: 100 },
    });
    expect(Object.fromEntries(settingsRows(timed.settings!))).toMatchObject({
      threshold: '0.5',
      validator: 'yes',
      timeoutMs: '2000 ms',
      deadlineMs: '9000 ms',
      callRetries: '2 per attempt (minDelayMs 100)',
    });
  });

  it('the retry reasons are named when they differ from the method, with how many of each', () => {
    const thrice = retriedThrice();
    expect(thrice.method).toBe('confidence');
    expect(retryReasons(thrice.prompts, thrice.method)).toBe('parse ×1, validation ×1, confidence ×1');
    const afterFailure = check(scripted([{ throws: new Error('503') }, envelope('Paris', 0.9)]).sync, 'q');
    expect(retryReasons(afterFailure.prompts, afterFailure.method)).toBe('call failure ×1');
    // Retried only for confidence, and decided by confidence: the method already says it.
    expect(retryReasons(repaired().prompts, 'confidence')).toBeNull();
    expect(retryReasons(check(() => envelope('Paris', 0.9), 'q').prompts, 'confidence')).toBeNull();
  });

  it('each retry kind is the guard the machine takes from reconsidering to asking', () => {
    const node = checkpointMachine.root.states['reconsidering'];
    // The budget's way out comes first and makes no retry.
    const retries = (node?.always ?? []).filter((t) => t.target?.[0]?.key === 'asking');
    const kinds = retries.map((t) => (t.actions[0] as { params: { kind: keyof typeof RETRY_GUARDS } }).params.kind);
    expect(kinds.sort()).toEqual(Object.keys(RETRY_GUARDS).sort());
    const labels = machineGraph(checkpointMachine).edges.find((e) => e.from === 'reconsidering' && e.to === 'asking')?.labels;
    expect(retries.map((t) => RETRY_GUARDS[(t.actions[0] as { params: { kind: keyof typeof RETRY_GUARDS } }).params.kind])).toEqual(labels);
  });

  it('the retry edge counts each kind of retry beside its guard, in DOT and Mermaid alike', () => {
    const result = retriedThrice();
    expect(toDot(result)).toContain('"reconsidering" -> "asking" [label="[callFailed]\\n[parseFailed] ×1\\n[failedValidation] ×1\\n[isSplit]\\n[else] ×1"');
    expect(toMermaid(result)).toContain('reconsidering -->|"[callFailed] / [parseFailed] ×1 / [failedValidation] ×1 / [isSplit] / [else] ×1"| asking');
    // Every attempt leaves asking, the first included, which the trace leaves out: four attempts, four moves.
    expect(toDot(result)).toContain('"asking" -> "calling" [label="[else]\\n×4"');
    const twice = check(scripted(['junk', 'junk', envelope('Paris', 0.9)]).sync, 'q', { maxRetries: 2 });
    expect(toDot(twice)).toContain('[label="[callFailed]\\n[parseFailed] ×2\\n[failedValidation]\\n[isSplit]\\n[else]"');
    // The machine's own diagram has no counts.
    expect(machineToDot(checkpointMachine)).toContain('"reconsidering" -> "asking" [label="[callFailed]\\n[parseFailed]\\n[failedValidation]\\n[isSplit]\\n[else]"];');
  });

  it('toSequence names the kind of each retry prompt', () => {
    const diagram = toSequence(retriedThrice());
    for (const [i, kind] of ['first prompt', 'parse retry', 'validation retry', 'confidence retry'].entries()) {
      expect(diagram).toContain(`Booth->>Model: attempt ${i}, ${kind}`);
    }
  });

  it('toHtml shows the settings of a check, and says an evidence check has none', async () => {
    const html = await toHtml(retriedThrice());
    expect(html).toContain('<span data-name="maxRetries">maxRetries <b>3 (at most 4 attempts)</b></span>');
    expect(html).toContain('<span data-name="retried for">retried for <b>parse ×1, validation ×1, confidence ×1</b></span>');
    const evidence = await toHtml(checkWithEvidence('Sydney', ['Canberra is the capital.'], () => false));
    expect(evidence).toMatch(/id="settings">An evidence check: [^<]*no model call/);
    expect(evidence).not.toContain('retried for');
  });
});

describe('a clarified run, drawn', () => {
  /** The edges DOT draws taken, as `from->to label`, the label's lines joined by ` / `. */
  const takenEdges = (source: string) =>
    [...source.matchAll(/"(\w+)" -> "(\w+)" \[label="([^"]*)"[^\]]*class="taken"/g)].map(([, from, to, label]) => `${from}->${to} ${label!.split('\\n').join(' / ')}`);

  it('the clarification edge is the transition the machine takes out of awaitingClarification, one label per kind of answer', () => {
    expect(WAITING).toBe('awaitingClarification');
    expect(Object.keys(checkpointMachine.root.states)).toContain(WAITING);
    const labels = machineGraph(checkpointMachine).edges.find((e) => e.from === WAITING && e.to === 'asking')?.labels;
    expect(labels).toEqual([CLARIFY_EVENTS.chose, CLARIFY_EVENTS.rephrased]);
  });

  it("clarify(): the first call's path to awaitingClarification, then the new round out of it, with the choice counted", async () => {
    const { result } = await clarifiedRun(0);
    expect(result.status).toBe('REPAIRED');
    // clarify() reads the first call's end as the wait it was: the path the machine takes.
    expect(result.trace.map((step) => step.state).slice(0, 5)).toEqual(['calling', 'parsing', 'ambiguityGate', 'awaitingClarification', 'calling']);
    const taken = takenEdges(toDot(result));
    expect(taken).toContain('ambiguityGate->awaitingClarification [isAmbiguous and canAwaitClarification] / ×1');
    expect(taken.some((edge) => edge.startsWith('ambiguityGate->ambiguous'))).toBe(false);
    expect(taken).toContain('awaitingClarification->asking clarify.chose [isOfferedReading] ×1 / clarify.rephrased [isRephrasing]');
    // Three attempts, three moves out of asking: the clarified round's first included.
    expect(taken).toContain('asking->calling [else] / ×3');
    expect(taken).toContain('reconsidering->asking [callFailed] / [parseFailed] / [failedValidation] / [isSplit] / [else] ×1');
    expect(taken).toHaveLength(9);
    expect(toDot(result)).toMatch(/"awaitingClarification" \[[^\]]*class="visited"/);
    expect(toMermaid(result)).toContain('awaitingClarification -->|"clarify.chose [isOfferedReading] ×1 / clarify.rephrased [isRephrasing]"| asking');
    expect(toMermaid(result)).toMatch(/class asking,calling,parsing,ambiguityGate,confidenceGate,awaitingClarification,reconsidering,repaired visited/);
  });

  it('a run that waited in a store: ambiguityGate → awaitingClarification → asking, in one unbroken path, twice', async () => {
    const result = await waitedRun([ambiguousReply(['a', 'b']), ambiguousReply(['c', 'd']), envelope('x', 0.95)], [{ rephrased: 'Q, said again' }, 'd']);
    expect(result.status).toBe('VERIFIED');
    expect(result.trace.map((step) => step.state).filter((state) => state === WAITING)).toHaveLength(2);
    const taken = takenEdges(toDot(result));
    expect(taken).toContain('ambiguityGate->awaitingClarification [isAmbiguous and canAwaitClarification] / ×2');
    expect(taken).toContain('awaitingClarification->asking clarify.chose [isOfferedReading] ×1 / clarify.rephrased [isRephrasing] ×1');
    expect(taken).toContain('asking->calling [else] / ×3');
    expect(taken.some((edge) => edge.startsWith('ambiguityGate->ambiguous'))).toBe(false);
    // The first round's clarified attempt is accepted at once: VERIFIED, as the first attempt of its round.
    expect(taken).toContain('confidenceGate->verified [isConfident and isFirstAttempt] / ×1');
  });

  it('toSequence: between the rounds, the readings go back to the app and the person\'s answer comes in', async () => {
    const { result } = await clarifiedRun(0);
    const lines = toSequence(result).split('\n');
    const boundary = lines.indexOf('  Booth->>Model: attempt 1, the clarified question');
    expect(lines.slice(boundary - 3, boundary + 1)).toEqual([
      '  Note over Booth: parsing → ambiguityGate → awaitingClarification',
      '  Booth-->>App: AMBIGUOUS, 2 readings: #quot;the planet#quot;, #quot;the element#quot;',
      '  App->>Booth: the person chose #quot;the planet#quot;',
      '  Booth->>Model: attempt 1, the clarified question',
    ]);
    expect(lines.filter((line) => line.startsWith('  App->>Booth: the person'))).toHaveLength(1);
    expect(lines.at(-2)).toBe('  Booth-->>App: REPAIRED #quot;0.39 AU#quot;');

    const waited = await waitedRun([ambiguousReply(['a', 'b']), ambiguousReply(['c', 'd'])], [{ rephrased: 'Q, said\nagain' }]);
    const diagram = toSequence(waited);
    expect(diagram).toContain('  Note over Booth: parsing → ambiguityGate → awaitingClarification\n  Booth-->>App: AMBIGUOUS, 2 readings: #quot;a#quot;, #quot;b#quot;\n');
    // A rephrasing stays on its line: its newline is written as JSON writes it.
    expect(diagram).toContain('  App->>Booth: the person rephrased the question as #quot;Q, said\\nagain#quot;\n  Booth->>Model: attempt 1, the clarified question\n');
  });

  it('a long rephrasing or many readings are cut to a label, as a long answer is', async () => {
    const readings = Array.from({ length: 30 }, (_, i) => `reading number ${i}`);
    const { result } = await clarifiedRun({ rephrased: 'x'.repeat(5_000) }, { readings, then: [envelope('y', 0.95)] });
    const lines = toSequence(result).split('\n');
    const offered = lines.find((line) => line.startsWith('  Booth-->>App: AMBIGUOUS, 30 readings: '));
    const said = lines.find((line) => line.startsWith('  App->>Booth: the person rephrased the question as '));
    for (const line of [offered, said]) expect(line?.endsWith('…')).toBe(true);
    // 80 code points in all, as any label: the words, the quote, 41 x and the ellipsis.
    expect(said).toBe(`  App->>Booth: the person rephrased the question as #quot;${'x'.repeat(41)}…`);
  });

  it('each attempt says its readings went to the person who asked, and what followed: the clarified question, or waiting', async () => {
    const { result } = await clarifiedRun(1);
    expect(verdictOf(result.attempts[0]!, result.settings, true)).toBe('ambiguous: its readings went to the person who asked');
    expect(result.attempts.map((_, i) => nextStep(result, i))).toEqual(['the clarified question', 'confidence retry', 'REPAIRED']);
    // Known from the clarifications alone, as on a batch line that did not keep its prompts.
    expect(nextStep(Object.assign(Object.create(Object.getPrototypeOf(result) as object) as object, { ...result, prompts: [] }) as typeof result, 0)).toBe(
      'the clarified question',
    );
    const waiting = await waitedRun([ambiguousReply(['a', 'b'])], []);
    expect(waiting.trace.at(-1)?.state).toBe('awaitingClarification');
    expect(nextStep(waiting, 0)).toBe('AMBIGUOUS: waiting for the person who asked');
  });

  it('toHtml: the readings offered, the one chosen, a row where the new round begins, and the round marked in the trace', async () => {
    const { result } = await clarifiedRun(0);
    const page = await toHtml(result);
    expect(page).toContain('<span data-name="clarified">clarified <b>the person chose &quot;the planet&quot;</b></span>');
    expect(page).toContain(`<h2>Clarifications</h2>
<div id="clarifications"><section class="clarification" data-clarification="0">
<h3>round 2, from attempt 1</h3>
<p>The question was ambiguous; the model offered 2 readings:</p>
<ol class="readings"><li class="chosen">the planet <small>(chosen)</small></li><li>the element</li></ol>
<p class="said">the person chose &quot;the planet&quot;</p>
<details><summary>the question as it stood</summary><pre>How far is Mercury from the Sun?</pre></details>
</section></div>`);
    // The round's row comes just before its first attempt, across every column.
    expect(page).toContain(
      '<tr class="round" data-round="2"><td colspan="7">round 2, from attempt 1: the person chose &quot;the planet&quot;</td></tr>\n<tr data-attempt="1">',
    );
    expect(page).toContain('<td class="why ambiguous">ambiguous: its readings went to the person who asked</td>\n<td class="next">the clarified question</td>');
    expect(page).toContain('<li class="round-start">calling <small>(attempt 1)</small> <small class="round">round 2</small></li>');
    expect(page).toContain('attempt 1: the clarified question');
    expect(page).toContain('section.clarification {');
  });

  it('toHtml: a rephrasing, and two rounds, each under its own heading', async () => {
    const result = await waitedRun([ambiguousReply(['a', 'b']), ambiguousReply(['c', 'd']), envelope('x', 0.95)], [{ rephrased: 'Q, said again' }, 'd']);
    const page = await toHtml(result);
    expect(page).toContain('clarified <b>the person rephrased the question as &quot;Q, said again&quot;; then the person chose &quot;d&quot;</b>');
    expect([...page.matchAll(/<h3>(round [^<]*)<\/h3>/g)].map(([, heading]) => heading)).toEqual(['round 2, from attempt 1', 'round 3, from attempt 2']);
    expect([...page.matchAll(/<tr class="round" data-round="(\d)">/g)].map(([, round]) => round)).toEqual(['2', '3']);
    // No reading is marked chosen when the question was rephrased; the second round's question holds the rephrasing.
    expect(page).toContain('<ol class="readings"><li>a</li><li>b</li></ol>');
    expect(page).toContain('<ol class="readings"><li>c</li><li class="chosen">d <small>(chosen)</small></li></ol>');
    expect(page).toContain('The person who asked has clarified the question, rephrasing it as &quot;Q, said again&quot;.');
  });

  it('toHtml of a run never clarified has no clarification section, style or row', async () => {
    for (const result of [repaired(), check(scripted([ambiguousReply()]).sync, 'q')]) {
      const page = await toHtml(result);
      for (const absent of ['Clarifications', 'section.clarification', 'class="round', 'data-name="clarified"']) expect(page).not.toContain(absent);
    }
  });
});
