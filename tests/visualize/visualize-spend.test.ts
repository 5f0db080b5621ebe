import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readResultLines, reportModel } from '../../src/cli/report/model.js';
import { renderReport } from '../../src/cli/report/page.js';
import { resultRow } from '../../src/cli/batch/output.js';
import type { RunRecord } from '../../src/cli/batch/run-record.js';
import { tallyOf } from '../../src/cli/batch/summary.js';
import type { CheckpointOutput } from '../../machines/checkpoint/types.js';
import { acheck, type CallInfo, check, clarify, resultFrom } from '../../src/index.js';
import { nextStep } from '../../src/visualize/explain.js';
import { toDot, toHtml, toMermaid, toSequence } from '../../src/visualize/index.js';
import { envelope } from '../fixtures/helpers.js';
import { spendRuns } from '../fixtures/spend-runs.js';

/**
 * The pictures of a run that spent only what it needed: which model made each attempt and
 * where each escalation began, what each model spent, which samples were skipped and how many
 * of `max` were asked, and a budget stop shown as such — on the trace page, in the path and
 * sequence diagrams, and in the report.
 */

const runs = await spendRuns();
const OUTPUT = new URL('../../test-output/spend/', import.meta.url);
mkdirSync(OUTPUT, { recursive: true });

/** The edges DOT draws as taken, each with its count: `from->to n`. */
const taken = (dot: string) => [...dot.matchAll(/"(\w+)" -> "(\w+)" \[label="([^"]*)"[^\]]*class="taken"/g)].map(([, from, to, label]) => `${from}->${to} ${/×(\d+)/.exec(label ?? '')?.[1]}`);

/** The text of an HTML fragment's cells, tags dropped and entities read. */
const cells = (row: string) =>
  [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(([, inner]) =>
    (inner ?? '').replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').trim(),
  );

describe('a cascade, drawn', () => {
  const { cascade } = runs;

  it('the run: three models, two escalations, the last one answered', () => {
    expect(cascade.status).toBe('VERIFIED');
    expect(cascade.attempts.map((a) => a.model)).toEqual(['cheap', 'cheap', 'strong', 'strong', 'best']);
    expect(cascade.escalations).toEqual([
      { attempt: 2, model: 'strong' },
      { attempt: 4, model: 'best' },
    ]);
  });

  it('toHtml: the model that answered and the models tried in the header, a Models table, the model of each attempt, a row where each escalation began', async () => {
    const page = await toHtml(cascade);
    writeFileSync(new URL('cascade.html', OUTPUT), page);
    expect(page).toContain('<span data-name="model">model <b>best</b></span>');
    expect(page).toContain('<span data-name="models tried">models tried <b>cheap → strong → best</b></span>');
    const models = /<table id="models" class="models">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
    expect([...models.matchAll(/<tr data-model="\d">([\s\S]*?)<\/tr>/g)].map(([row]) => cells(row))).toEqual([
      ['cheap', '2', '2', '20 in / 10 out / 30 total, cost $0.002'],
      ['strong', '2', '2', '200 in / 10 out / 210 total, cost $0.02'],
      ['best', '1', '1', '1,000 in / 5 out / 1,005 total, cost $0.10'],
    ]);
    const attempts = /<table id="attempts">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
    const headings = [...attempts.matchAll(/<th>([^<]*)<\/th>/g)].map(([, h]) => h);
    expect(headings).toEqual(['#', 'answer', 'confidence', 'model', 'why', 'then', 'duration', 'tokens', 'raw reply']);
    const rows = [...attempts.matchAll(/<tr (?:data-attempt|class="escalation")[^>]*>[\s\S]*?<\/tr>/g)].map(([row]) => row);
    expect(rows.map((row) => (row.startsWith('<tr class="escalation"') ? cells(row) : cells(row).slice(3, 4)))).toEqual([
      ['cheap'],
      ['cheap'],
      ['escalated to strong, from attempt 2'],
      ['strong'],
      ['strong'],
      ['escalated to best, from attempt 4'],
      ['best'],
    ]);
    // The escalation's row runs across every column.
    expect(rows[2]).toContain(`colspan="${headings.length}"`);
    // What followed each attempt: the next model is named where the run moved on.
    expect([...attempts.matchAll(/<td class="next">([^<]*)<\/td>/g)].map(([, next]) => next)).toEqual([
      'confidence retry',
      'escalated to strong',
      'parse retry',
      'escalated to best',
      'VERIFIED',
    ]);
    // Under the diagram, which model made which attempts; in the trace, where each model began.
    expect(page).toContain('<p class="summary" id="model-path">models: <b>cheap: attempts 0–1 → strong: attempts 2–3 → best: attempt 4</b></p>');
    expect([...page.matchAll(/<li class="escalation-start">(.*?)<\/li>/g)].map(([, li]) => li)).toEqual([
      'calling <small>(attempt 2)</small> <small class="escalation">escalated to strong</small>',
      'calling <small>(attempt 4)</small> <small class="escalation">escalated to best</small>',
    ]);
    expect(page).toContain('<summary>attempt 2: first prompt, to the next model</summary>');
  });

  it('the path: escalating entered twice, each time from the gate that gave up, and left for asking', () => {
    const edges = taken(toDot(cascade));
    expect(edges).toContain('confidenceGate->escalating 1');
    expect(edges).toContain('parsing->escalating 1');
    expect(edges).toContain('escalating->asking 2');
    expect(edges).toContain('asking->calling 5');
    expect(toDot(cascade)).toMatch(/"escalating" \[[^\]]*class="visited"/);
    expect(toMermaid(cascade)).toContain('escalating -->|"[else] ×2"| asking');
  });

  it('toSequence: a lifeline per model, named in a note over it; each escalation a note where it began', () => {
    const lines = toSequence(cascade).split('\n');
    expect(lines.slice(0, 9)).toEqual([
      'sequenceDiagram',
      '  participant App',
      '  participant Booth',
      '  participant Model1',
      '  participant Model2',
      '  participant Model3',
      '  Note over Model1: cheap',
      '  Note over Model2: strong',
      '  Note over Model3: best',
    ]);
    expect(lines.filter((line) => line.startsWith('  Booth->>'))).toEqual([
      '  Booth->>Model1: attempt 0, first prompt',
      '  Booth->>Model1: attempt 1, confidence retry',
      '  Booth->>Model2: attempt 2, first prompt, to the next model',
      '  Booth->>Model2: attempt 3, parse retry',
      '  Booth->>Model3: attempt 4, first prompt, to the next model',
    ]);
    const escalation = lines.indexOf('  Note over Booth: escalated to strong, from attempt 2');
    expect(lines[escalation - 1]).toBe('  Note over Booth: parsing → ambiguityGate → confidenceGate → escalating');
    expect(lines[escalation + 1]).toBe('  Booth->>Model2: attempt 2, first prompt, to the next model');
    expect(lines).toContain('  Model2-->>Booth: unparseable: no JSON object was found in the reply');
  });

  it('a run of one named model: the name in the header and over its one lifeline, no Models table or escalation row', async () => {
    const solo = check(() => envelope('Paris', 0.9), 'q', { modelName: 'gpt-4o-mini' });
    const page = await toHtml(solo);
    expect(page).toContain('<span data-name="model">model <b>gpt-4o-mini</b></span>');
    expect(page).not.toContain('models tried');
    expect(page).not.toContain('<table id="models"');
    expect(page).not.toContain('class="escalation"');
    expect(page).toContain('<th>model</th>');
    expect(toSequence(solo).split('\n').slice(3, 5)).toEqual(['  participant Model', '  Note over Model: gpt-4o-mini']);
  });

  it('a run that names no model looks as it always did: no model column, entry, lifeline note or style', async () => {
    const plain = check(() => envelope('Paris', 0.9), 'q');
    const page = await toHtml(plain);
    for (const absent of ['data-name="model"', '<th>model</th>', 'id="models"', 'id="model-path"', 'tr.escalation', 'p.budget', 'class="escalation']) expect(page).not.toContain(absent);
    expect(toSequence(plain)).not.toContain('Note over Model');
  });

  it('a clarified question asks the first model again: the models line starts it anew, the escalation row is where the next model began', async () => {
    const ambiguous = envelope('?', 0.8, { ambiguous: true, interpretations: ['the planet', 'the element'] });
    const cheap = async (_p: string, { attempt }: CallInfo) => (attempt === 0 ? ambiguous : envelope('far', 0.2));
    const options = { maxRetries: 0, modelName: 'cheap', escalate: [{ call: async () => envelope('0.39 AU', 0.95), name: 'strong' }] };
    const result = await clarify(await acheck(cheap, 'How far is Mercury?', options), 'the planet', cheap, options);
    expect(result.attempts.map((a) => a.model)).toEqual(['cheap', 'cheap', 'strong']);
    const page = await toHtml(result);
    expect(page).toContain('<p class="summary" id="model-path">models: <b>cheap: attempt 0 → cheap: attempt 1 → strong: attempt 2</b></p>');
    expect(page).toContain('<tr class="escalation" data-escalation="0"><td colspan="8">escalated to strong, from attempt 2</td></tr>');
    expect(nextStep(result, 0)).toBe('the clarified question');
    expect(nextStep(result, 1)).toBe('escalated to strong');
  });

  it('an outage at the first provider, then the next: its failed attempt named with its model', async () => {
    const result = check(
      () => {
        throw Object.assign(new Error('HTTP 401'), { status: 401 });
      },
      'q',
      { escalate: [() => envelope('Paris', 0.9)] },
    );
    const page = await toHtml(result);
    expect(page).toContain('<tr class="escalation" data-escalation="0"><td colspan="8">escalated to model 2, from attempt 1</td></tr>');
    expect(nextStep(result, 0)).toBe('escalated to model 2');
    expect(toSequence(result)).toContain('  Model1--xBooth: call failed: HTTP 401');
  });
});

describe('adaptive samples, drawn', () => {
  const { skipped } = runs;

  it('toHtml: how many of max were asked, and the skipped sample as skipped, never as a failed call', async () => {
    const page = await toHtml(skipped);
    writeFileSync(new URL('skipped.html', OUTPUT), page);
    expect(page).toContain('<h3>attempt 0: first prompt, 3 of at most 4 samples asked, 1 skipped when the vote was settled</h3>');
    const sample = /<tr data-sample="2" class="skipped">[\s\S]*?<\/tr>/.exec(page)?.[0] ?? '';
    expect(cells(sample)).toEqual(['2', '—', '—', 'skipped', 'the vote was settled before it replied', '—', '']);
    // Its aborted call is no failed try: no list of tries under the verdict.
    expect(page).not.toContain('<ol class="tries">');
    expect(page).not.toContain('failed: skipped');
  });

  it('toSequence: the call, then Booth calling it off; how many were asked under the vote', () => {
    const lines = toSequence(skipped).split('\n');
    const call = lines.indexOf('  Booth->>Model: attempt 0, first prompt, sample 2');
    expect(lines[call + 1]).toBe('  Booth-)Model: sample 2 aborted, the vote was settled');
    expect(lines).toContain('  Note over Booth: 3 of at most 4 samples asked, 1 skipped when the vote was settled');
  });

  it('a fixed vote reads as it always did', async () => {
    const fixed = check(() => envelope('Paris', 0.9), 'q', { samples: 3 });
    expect(await toHtml(fixed)).toContain('<h3>attempt 0: first prompt, 3 samples</h3>');
    expect(toSequence(fixed)).not.toContain('samples asked');
  });

  it('a vote settled by its first wave, nothing skipped: the samples asked of max', () => {
    const settled = check(() => envelope('Paris', 0.9), 'q', { samples: { max: 5 } });
    expect(toSequence(settled)).toContain('  Note over Booth: 3 of at most 5 samples asked');
  });

  it('a later model of a cascade with samples of its own: how many it could ask is not in the result, so not claimed', async () => {
    const result = check(() => envelope('Lyon', 0.2), 'q', { maxRetries: 0, escalate: [{ call: () => envelope('Paris', 0.9), samples: { max: 7 } }] });
    expect(result.attempts[1]!.samples).toHaveLength(4);
    const page = await toHtml(result);
    expect(page).toContain('<h3>attempt 1: first prompt, to the next model, 4 samples</h3>');
  });

  it('the batch summary counts a skipped sample as neither a failed call nor an unparseable reply', () => {
    const tally = tallyOf(JSON.parse(JSON.stringify(skipped)) as Record<string, unknown>);
    expect(tally).toMatchObject({ failedCalls: 0, unparseable: 0, everyCallFailed: false });
  });
});

describe('a budget stop, drawn', () => {
  const { budget } = runs;

  it('toHtml says the budget stopped the run, in its words, and what the last attempt was followed by', async () => {
    const page = await toHtml(budget);
    writeFileSync(new URL('budget.html', OUTPUT), page);
    expect(page).toContain('<span data-name="method">method <b>budget</b></span>');
    expect(page).toContain(
      '<p class="budget" id="budget">Stopped by the budget: the budget of 2 calls is spent. No call was started that the budget could not afford; the attempts are those made before.</p>',
    );
    expect(nextStep(budget, 1)).toBe('UNCERTAIN: stopped by the budget');
    expect(nextStep(budget, 0)).toBe('confidence retry');
  });

  it('the path ends in overBudget, straight from reconsidering; the sequence says why', () => {
    expect(taken(toDot(budget))).toContain('reconsidering->overBudget 1');
    expect(toDot(budget)).toMatch(/"overBudget" \[[^\]]*class="visited"/);
    const lines = toSequence(budget).trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual(['  Note over Booth: stopped by the budget: the budget of 2 calls is spent', '  Booth-->>App: UNCERTAIN #quot;Lyon#quot; BUDGET_SPENT']);
  });

  it("read back from its JSON, as a batch line or a stored result holds it, the run is still one the budget stopped", async () => {
    const back = resultFrom(JSON.parse(JSON.stringify(budget)) as CheckpointOutput);
    expect([back.method, back.reason, back.detail]).toEqual(['budget', 'BUDGET_SPENT', 'the budget of 2 calls is spent']);
    expect(await toHtml(back)).toContain('<p class="budget" id="budget">Stopped by the budget: the budget of 2 calls is spent.');
  });

  it('a budget that cuts a wave short: the samples it allowed, of max', async () => {
    const cut = await acheck(async () => envelope('Paris', 0.9), 'q', { samples: 5, budget: { maxCalls: 3 } });
    expect(cut.method).toBe('budget');
    expect(cut.attempts[0]!.samples).toHaveLength(3);
    expect(await toHtml(cut)).toContain('<h3>attempt 0: first prompt, 3 of at most 5 samples asked</h3>');
  });
});

/** What `booth batch --base-url http://127.0.0.1:8080/v1 --model cheap` records in each line's `run`. */
const RUN: RunRecord = { booth: '0.1.0', model: 'cheap', host: '127.0.0.1:8080', schema: null, system: null, temperature: null, seed: null };

describe('the report of runs that spent', () => {
  const line = (id: string, result: Parameters<typeof resultRow>[2], withPrompts = false) => JSON.stringify(resultRow({ id, prompt: 'Capital of France?' }, 12, result, withPrompts, RUN));

  function model(lines: readonly string[]) {
    const file = new URL('report.jsonl', OUTPUT).pathname;
    writeFileSync(file, `${lines.join('\n')}\n`);
    const warnings: string[] = [];
    const read = readResultLines(file, (m) => warnings.push(m));
    expect(warnings).toEqual([]);
    return reportModel(file, read, new Map());
  }

  it('the summary counts the questions the budget stopped, and what each model spent over the file', () => {
    const cheapOnly = check(
      (_p: string, info: CallInfo) => (info.reportUsage?.({ inputTokens: 10, outputTokens: 5, costUsd: 0.001 }), envelope('Paris', 0.9)),
      'q',
      { modelName: 'cheap', escalate: [{ call: () => envelope('x', 0.9), name: 'strong' }] },
    );
    const report = model([line('cascade', runs.cascade), line('cheap', cheapOnly), line('budget', runs.budget), line('skipped', runs.skipped)]);
    expect(report.summary.byMethod).toEqual({ confidence: 3, budget: 1 });
    expect(report.models).toEqual([
      { model: 'cheap', questions: 2, accepted: 1, attempts: 3, calls: 3, usage: { inputTokens: 30, outputTokens: 15, totalTokens: 45, costUsd: 0.003 } },
      { model: 'strong', questions: 1, accepted: 0, attempts: 2, calls: 2, usage: { inputTokens: 200, outputTokens: 10, totalTokens: 210, costUsd: 0.02 } },
      { model: 'best', questions: 1, accepted: 1, attempts: 1, calls: 1, usage: { inputTokens: 1_000, outputTokens: 5, totalTokens: 1_005, costUsd: 0.1 } },
    ]);
    // The strong model's two unreadable replies; the skipped sample is none.
    expect(report.summary.unparseable).toBe(2);
    expect(report.summary.failedCalls).toBe(0);
    const page = renderReport(report, report.paths.map(() => '<svg></svg>'));
    writeFileSync(new URL('report.html', OUTPUT), page);
    const card = /<div class="card" id="models">([\s\S]*?)\n<\/div>\n/.exec(page)?.[1] ?? '';
    expect(card).toContain('<div><b class="num">1</b> question stopped by the budget <span class="flag small">budget</span></div>');
    expect([...card.matchAll(/<tr><td>[\s\S]*?<\/tr>/g)].map(([row]) => cells(row))).toEqual([
      ['cheap', '2', '1', '3', '3', '45', '$0.003'],
      ['strong', '1', '0', '2', '2', '210', '$0.02'],
      ['best', '1', '1', '1', '1', '1,005', '$0.10'],
    ]);
    // The method filter offers budget, and the methods card marks it.
    expect(page).toContain('<option value="budget">budget (1)</option>');
    expect(page).toContain('<tr><td>budget <span class="flag small">stopped by the budget</span></td>');
  });

  it('a file whose lines name no model and none stopped by a budget has no such card', () => {
    const report = model([line('plain', check(() => envelope('Paris', 0.9), 'q'))]);
    expect(report.models).toEqual([]);
    expect(renderReport(report, report.paths.map(() => '<svg></svg>'))).not.toContain('id="models"');
  });

  it('each trace: the models tried, the model of each attempt, the escalations, the skipped samples and the budget stop, worded as on the trace page', () => {
    const report = model([line('cascade', runs.cascade), line('skipped', runs.skipped), line('budget', runs.budget, true)]);
    const [cascade, skipped, budget] = report.traces;
    expect(cascade?.pairs).toContainEqual(['model', 'best']);
    expect(cascade?.pairs).toContainEqual(['models tried', 'cheap → strong → best']);
    expect(cascade?.attempts.map((a) => a[9])).toEqual(['cheap', 'cheap', 'strong', 'strong', 'best']);
    // Without the prompts, the escalations still name what followed.
    expect(cascade?.attempts.map((a) => a[5])).toEqual(['asked again (the line did not keep its prompts)', 'escalated to strong', 'asked again (the line did not keep its prompts)', 'escalated to best', 'VERIFIED']);
    expect(cascade?.escalations).toEqual([
      [2, 'escalated to strong, from attempt 2'],
      [4, 'escalated to best, from attempt 4'],
    ]);
    expect(cascade?.models).toEqual([
      ['cheap', 2, 2, '20 in / 10 out / 30 total, cost $0.002'],
      ['strong', 2, 2, '200 in / 10 out / 210 total, cost $0.02'],
      ['best', 1, 1, '1,000 in / 5 out / 1,005 total, cost $0.10'],
    ]);
    expect(cascade?.modelPath).toBe('cheap: attempts 0–1 → strong: attempts 2–3 → best: attempt 4');
    expect(cascade?.budget).toBeNull();
    expect(skipped?.attempts.map((a) => a[9])).toEqual([null]);
    expect(skipped?.votes[0]?.heading).toBe('attempt 0, 3 of at most 4 samples asked, 1 skipped when the vote was settled');
    expect(skipped?.votes[0]?.samples[2]).toEqual([2, '—', '—', 'skipped', 'the vote was settled before it replied', '—']);
    expect(skipped?.models).toEqual([]);
    expect(skipped?.modelPath).toBeNull();
    expect(budget?.budget).toBe('Stopped by the budget: the budget of 2 calls is spent. No call was started that the budget could not afford; the attempts are those made before.');
    expect(budget?.attempts.map((a) => a[5])).toEqual(['confidence retry', 'UNCERTAIN: stopped by the budget']);
    expect(budget?.trace.at(-1)).toEqual(['overBudget', 1]);
  });
});
