import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { acheck, check } from '../../src/index.js';
import { machineGraph, machineToMermaid, toHtml, toMermaid, toSequence } from '../../src/visualize/index.js';
import { envelope, scripted } from '../fixtures/helpers.js';
import { available, useChromium, watchPage } from '../fixtures/chromium.js';
import { ambiguousReply, clarifiedRun, waitedRun } from '../fixtures/clarified-runs.js';
import { spendRuns } from '../fixtures/spend-runs.js';

/**
 * The HTML trace in a real browser: Debian's Chromium, driven by playwright-core, with
 * every request other than file: and data: blocked. CI installs Chromium; elsewhere the
 * suite runs when /usr/bin/chromium exists.
 */

const OUTPUT = new URL('../../test-output/', import.meta.url);

describe.runIf(available)('in a browser, offline', () => {
  const browser = useChromium(OUTPUT);

  /** Opens a page of Booth's at 1 400 px, every request but file: and data: blocked and recorded. */
  async function open(html: string, name: string) {
    const file = new URL(`${name}.html`, OUTPUT);
    writeFileSync(file, html);
    const page = await browser().newPage({ viewport: { width: 1400, height: 1000 } });
    const { errors: consoleErrors, requests: leaked } = await watchPage(page, (url) => url.startsWith('file:') || url.startsWith('data:'));
    await page.goto(file.href);
    return { page, leaked, consoleErrors };
  }

  it('the HTML trace of a REPAIRED run shows its status, both attempts and the highlighted path', async () => {
    const result = check(scripted([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).sync, 'What is the capital of France?');
    const { page, leaked, consoleErrors } = await open(await toHtml(result), 'repaired');

    await expect.poll(() => page.locator('#status').textContent()).toBe('REPAIRED');
    expect(await page.locator('#attempts tbody tr').count()).toBe(2);
    expect(await page.locator('tr[data-attempt="0"]').isVisible()).toBe(true);
    expect(await page.locator('tr[data-attempt="1"]').isVisible()).toBe(true);
    expect(await page.locator('tr[data-attempt="1"] td').nth(1).textContent()).toBe('"Paris"');

    // The retry goes reconsidering → asking → calling: asking only routes, and is drawn visited.
    const taken = page.locator('#diagram svg g.edge.taken');
    expect(await taken.count()).toBe(7);
    for (const edge of await taken.all()) expect(await edge.isVisible()).toBe(true);
    const stroke = await taken.first().locator('path').first().getAttribute('stroke');
    expect(stroke).toBe('#c0392b');
    expect(await page.locator('#diagram svg g.node.visited').count()).toBe(7);

    // The raw reply is collapsed until asked for.
    const raw = page.locator('tr[data-attempt="0"] details pre');
    expect(await raw.isVisible()).toBe(false);
    await page.locator('tr[data-attempt="0"] details summary').click();
    expect(await raw.isVisible()).toBe(true);

    await page.screenshot({ path: new URL('repaired.png', OUTPUT).pathname, fullPage: true });
    expect(leaked).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }, 30_000);

  it('the HTML trace of a run retried for parse, validation and confidence says why, at a readable size', async () => {
    const model = scripted(['junk', envelope('Lyon', 0.9), envelope('Paris', 0.4), envelope('Paris', 0.9)], { delayMs: 25 });
    const result = await acheck(model.async, 'What is the capital of France?', {
      maxRetries: 3,
      timeoutMs: 5_000,
      validator: (answer) => (answer === 'Lyon' ? [false, 'Lyon is not a capital'] : true),
    });
    expect(result.status).toBe('REPAIRED');
    const { page, leaked, consoleErrors } = await open(await toHtml(result), 'retried');

    const settings = await page.locator('#settings').innerText();
    for (const shown of ['threshold 0.7', 'maxRetries 3', 'validator yes', 'timeoutMs 5000 ms', 'deadlineMs none', 'callRetries none']) {
      expect(settings).toContain(shown);
    }
    expect(await page.locator('#summary [data-name="retried for"]').innerText()).toBe('retried for parse ×1, validation ×1, confidence ×1');
    expect(await page.locator('#summary [data-name="method"]').innerText()).toBe('method confidence');

    expect(await page.locator('#attempts td.why').allInnerTexts()).toEqual([
      'could not parse: no JSON object was found in the reply',
      'validator: Lyon is not a capital',
      'confidence 0.4 below the threshold 0.7',
      'accepted (validator passed, confidence 0.9 ≥ 0.7)',
    ]);
    expect(await page.locator('#attempts td.next').allInnerTexts()).toEqual(['parse retry', 'validation retry', 'confidence retry', 'REPAIRED']);
    // Each reply took at least the model's 25 ms, and the page says how long.
    const durations = await page.locator('#attempts td.duration').allInnerTexts();
    expect(durations).toEqual(result.attempts.map((a) => `${a.durationMs} ms`));
    for (const duration of durations) expect(parseInt(duration, 10)).toBeGreaterThanOrEqual(20);

    const retryEdge = page.locator('#diagram svg g.edge', { has: page.locator('title', { hasText: /^reconsidering->asking$/ }) });
    expect(await retryEdge.locator('text').allTextContents()).toEqual([
      '[callFailed]',
      '[parseFailed] ×1',
      '[failedValidation] ×1',
      '[isSplit]',
      '[else] ×1',
    ]);
    expect(await retryEdge.getAttribute('class')).toBe('edge taken');

    // Edge labels as displayed: the font size times the scale the page draws the SVG at.
    const labelPx = await page.locator('#diagram svg g.edge text').evaluateAll((texts) => {
      const { getComputedStyle } = globalThis as unknown as { getComputedStyle(e: unknown): { fontSize: string } };
      return texts.map((text) => {
        const scale = (text as unknown as { getScreenCTM(): { a: number } | null }).getScreenCTM()?.a ?? 0;
        return parseFloat(getComputedStyle(text).fontSize) * scale;
      });
    });
    expect(labelPx.length).toBeGreaterThan(20);
    expect(Math.min(...labelPx)).toBeGreaterThanOrEqual(11);
    // Since awaitingClarification the machine is wider than the page at that size: its figure scrolls sideways, the page does not.
    const widths = await page.evaluate(() => {
      const { document } = globalThis as unknown as { document: { querySelector(s: string): { scrollWidth: number; clientWidth: number } } };
      const figure = document.querySelector('#diagram');
      const root = document.querySelector('html');
      return { figure: figure.scrollWidth > figure.clientWidth, page: root.scrollWidth > root.clientWidth };
    });
    expect(widths).toEqual({ figure: true, page: false });

    await page.screenshot({ path: new URL('retried.png', OUTPUT).pathname, fullPage: true });
    expect(leaked).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }, 30_000);

  it('the HTML trace of a sampled run shows each vote, and hostile samples stay text', async () => {
    const hostile = ['</script><script>alert(1)</script>', '<img src=x onerror="alert(1)">', `it's "quoted"\n</td></tr></table>`];
    const model = scripted([
      envelope(hostile[0], 0.9),
      envelope(hostile[1], 0.8),
      envelope(hostile[0], 0.9),
      { throws: new Error('<img src=y onerror=alert(2)>') },
      envelope(hostile[2], 0.9),
      envelope(hostile[2], 0.9),
    ]);
    const result = check(model.sync, 'q', { samples: 3 });
    expect(result.prompts.map((p) => p.kind)).toEqual(['first', 'disagreement']);
    const { page, leaked, consoleErrors } = await open(await toHtml(result), 'sampled');
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });

    expect(await page.locator('#votes section.vote').count()).toBe(2);
    const first = page.locator('section[data-vote="0"]');
    expect(await first.locator('table.samples td.answer').allTextContents()).toEqual([hostile[0], hostile[1], hostile[0]].map((a) => JSON.stringify(a)));
    expect(await first.locator('table.samples tr.winner').evaluateAll((rows) => rows.map((r) => (r as unknown as { dataset: { sample: string } }).dataset.sample))).toEqual(['0', '2']);
    expect(await first.locator('table.clusters tbody tr').allInnerTexts()).toEqual([
      `1 (winner)\t${JSON.stringify(hostile[0])}\t2\t0.9\t0, 2`,
      `2\t${JSON.stringify(hostile[1])}\t1\t0.8\t1`,
    ]);
    expect(await first.locator('.summary span').allInnerTexts()).toEqual(['agreement 2 of 3', 'confidence 0.6 (hybrid)']);
    const second = page.locator('section[data-vote="1"]');
    expect(await second.locator('table.samples td.error').allTextContents()).toEqual(['<img src=y onerror=alert(2)>', '', '']);
    expect(await second.locator('table.samples td.answer').nth(1).textContent()).toBe(JSON.stringify(hostile[2]));
    expect(await page.locator('#summary [data-name="agreement"]').innerText()).toBe('agreement 1');

    // Nothing the model wrote became an element or ran.
    expect(await page.locator('script, img').count()).toBe(0);
    expect(await page.locator('table').count()).toBe(5);
    expect(dialogs).toEqual([]);
    await page.screenshot({ path: new URL('sampled.png', OUTPUT).pathname, fullPage: true });
    expect(leaked).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }, 30_000);

  it('the HTML trace of a clarified run shows the readings offered, the one chosen, and both rounds', async () => {
    const { first, result } = await clarifiedRun(0);
    expect([first.status, result.status]).toEqual(['AMBIGUOUS', 'REPAIRED']);
    const { page, leaked, consoleErrors } = await open(await toHtml(result), 'clarified');

    expect(await page.locator('#status').textContent()).toBe('REPAIRED');
    expect(await page.locator('#summary [data-name="clarified"]').innerText()).toBe('clarified the person chose "the planet"');
    const section = page.locator('#clarifications section.clarification');
    expect(await section.count()).toBe(1);
    expect(await section.locator('h3').innerText()).toBe('round 2, from attempt 1');
    expect(await section.locator('ol.readings li').allInnerTexts()).toEqual(['the planet (chosen)', 'the element']);
    // Chosen is said in words and shown in weight.
    expect(await section.locator('ol.readings li.chosen').evaluate((li) => (globalThis as unknown as { getComputedStyle(e: unknown): { fontWeight: string } }).getComputedStyle(li).fontWeight)).toBe('600');
    expect(await section.locator('p.said').innerText()).toBe('the person chose "the planet"');
    expect(await section.locator('details pre').isVisible()).toBe(false);
    await section.locator('details summary').click();
    expect(await section.locator('details pre').innerText()).toBe('How far is Mercury from the Sun?');

    // Both rounds in the attempts table, the boundary a row of its own across every column.
    const rows = page.locator('#attempts tbody tr');
    expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as unknown as { dataset: { attempt?: string; round?: string } }).dataset))).toEqual([
      { attempt: '0' },
      { round: '2' },
      { attempt: '1' },
      { attempt: '2' },
    ]);
    expect(await rows.nth(1).innerText()).toBe('round 2, from attempt 1: the person chose "the planet"');
    expect(await page.locator('tr.round td').getAttribute('colspan')).toBe('7');
    expect(await page.locator('#attempts td.why').allInnerTexts()).toEqual([
      'ambiguous: its readings went to the person who asked',
      'confidence 0.5 below the threshold 0.7',
      'accepted (confidence 0.95 ≥ 0.7)',
    ]);
    expect(await page.locator('#attempts td.next').allInnerTexts()).toEqual(['the clarified question', 'confidence retry', 'REPAIRED']);
    expect(await page.locator('#prompts summary').allInnerTexts()).toEqual(['attempt 0: first prompt', 'attempt 1: the clarified question', 'attempt 2: confidence retry']);
    expect(await page.locator('#trace li.round-start').innerText()).toBe('calling (attempt 1) round 2');

    // The diagram: the first call's path to awaitingClarification, and the new round out of it.
    const edge = (from: string, to: string) => page.locator('#diagram svg g.edge', { has: page.locator('title', { hasText: new RegExp(`^${from}->${to}$`) }) });
    expect(await edge('awaitingClarification', 'asking').getAttribute('class')).toBe('edge taken');
    expect(await edge('awaitingClarification', 'asking').locator('text').allTextContents()).toEqual(['clarify.chose [isOfferedReading] ×1', 'clarify.rephrased [isRephrasing]']);
    expect(await edge('ambiguityGate', 'ambiguous').getAttribute('class')).toBe('edge');
    expect(await edge('ambiguityGate', 'awaitingClarification').getAttribute('class')).toBe('edge taken');
    const visited = await page.locator('#diagram svg g.node.visited title').allTextContents();
    expect(visited.sort()).toEqual(['ambiguityGate', 'asking', 'awaitingClarification', 'calling', 'confidenceGate', 'parsing', 'reconsidering', 'repaired']);

    await page.screenshot({ path: new URL('clarified.png', OUTPUT).pathname, fullPage: true });
    expect(leaked).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await page.close();
  }, 30_000);

  it('the HTML trace of a run that waited in a store, its question rephrased and then a reading chosen, shows three rounds', async () => {
    const result = await waitedRun([ambiguousReply(['a', 'b']), ambiguousReply(['c', 'd']), envelope('x', 0.95)], [{ rephrased: 'Q, said\nagain' }, 'd']);
    expect(result.status).toBe('VERIFIED');
    const { page, leaked, consoleErrors } = await open(await toHtml(result), 'clarified-waited');

    expect(await page.locator('#clarifications h3').allInnerTexts()).toEqual(['round 2, from attempt 1', 'round 3, from attempt 2']);
    expect(await page.locator('#clarifications p.said').allInnerTexts()).toEqual(['the person rephrased the question as "Q, said\\nagain"', 'the person chose "d"']);
    expect(await page.locator('#clarifications ol.readings').allInnerTexts()).toEqual(['a\nb', 'c\nd (chosen)']);
    expect(await page.locator('#attempts tr.round').allInnerTexts()).toEqual([
      'round 2, from attempt 1: the person rephrased the question as "Q, said\\nagain"',
      'round 3, from attempt 2: the person chose "d"',
    ]);
    expect(await page.locator('#trace li.round-start').allInnerTexts()).toEqual(['calling (attempt 1) round 2', 'calling (attempt 2) round 3']);
    const edge = (from: string, to: string) => page.locator('#diagram svg g.edge', { has: page.locator('title', { hasText: new RegExp(`^${from}->${to}$`) }) });
    // Waiting in the store is the machine's own path: ambiguityGate → awaitingClarification → asking, twice.
    expect(await edge('ambiguityGate', 'awaitingClarification').locator('text').allTextContents()).toEqual(['[isAmbiguous and canAwaitClarification]', '×2']);
    expect(await edge('awaitingClarification', 'asking').locator('text').allTextContents()).toEqual(['clarify.chose [isOfferedReading] ×1', 'clarify.rephrased [isRephrasing] ×1']);
    expect(await edge('ambiguityGate', 'ambiguous').getAttribute('class')).toBe('edge');

    await page.screenshot({ path: new URL('clarified-waited.png', OUTPUT).pathname, fullPage: true });
    expect(leaked).toEqual([]);
    expect(consoleErrors).toEqual([]);
    await page.close();
  }, 30_000);

  it('no two labels of the diagram overlap at 1 400 px, whichever path a run took, clarified ones included', async () => {
    const failing = () => Object.assign(new Error('500 Internal Server Error'), { status: 500 });
    const runs = {
      verified: check(scripted([envelope('Paris', 0.9)]).sync, 'q'),
      repaired: check(scripted([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).sync, 'q'),
      sampled: check(scripted([envelope('Paris', 0.9), envelope('Lyon', 0.8), envelope('Paris', 0.9), ...Array(3).fill(envelope('Paris', 0.9))]).sync, 'q', { samples: 3 }),
      callRetries: await acheck(scripted([{ throws: failing() }, { throws: failing() }, envelope('Paris', 0.9)]).async, 'q', {
        callRetries: { retries: 3, minDelayMs: 1, maxDelayMs: 1 },
      }),
      uncertain: check(scripted([envelope('Lyon', 0.3), envelope('Lyon', 0.3)]).sync, 'q'),
      validated: check(scripted(['junk', envelope('Lyon', 0.9), envelope('Paris', 0.4), envelope('Paris', 0.9)]).sync, 'q', {
        maxRetries: 3,
        validator: (answer) => (answer === 'Lyon' ? [false, 'Lyon is not a capital'] : true),
      }),
      clarified: (await clarifiedRun(0)).result,
      waited: await waitedRun([ambiguousReply(['a', 'b']), ambiguousReply(['c', 'd']), envelope('x', 0.95)], [{ rephrased: 'Q again' }, 'd']),
      // Through escalating twice, and into overBudget: the states a cascade and a budget add.
      ...(({ cascade, budget }) => ({ cascade, budget }))(await spendRuns()),
    };
    expect(Object.values(runs).map((run) => run.status)).toEqual(['VERIFIED', 'REPAIRED', 'REPAIRED', 'VERIFIED', 'UNCERTAIN', 'REPAIRED', 'REPAIRED', 'VERIFIED', 'VERIFIED', 'UNCERTAIN']);
    for (const [name, result] of Object.entries(runs)) {
      const { page } = await open(await toHtml(result), `labels-${name}`);
      // Every edge's and node's label as the browser lays it out: the box around all its lines.
      const boxes = await page.locator('#diagram svg g.edge, #diagram svg g.node').evaluateAll((groups) =>
        groups.flatMap((group) => {
          const lines = [...group.querySelectorAll('text')];
          if (lines.length === 0) return [];
          const rects = lines.map((line) => (line as unknown as { getBoundingClientRect(): { x: number; y: number; width: number; height: number } }).getBoundingClientRect());
          const x = Math.min(...rects.map((r) => r.x));
          const y = Math.min(...rects.map((r) => r.y));
          const width = Math.max(...rects.map((r) => r.x + r.width)) - x;
          const height = Math.max(...rects.map((r) => r.y + r.height)) - y;
          return [{ text: lines.map((line) => line.textContent).join(' / '), x, y, width, height }];
        }),
      );
      // Every state, the note, and every edge but the unlabelled start arrow: none is left out.
      const graph = machineGraph(checkpointMachine);
      expect(boxes).toHaveLength(graph.states.length + 1 + graph.edges.length);
      const overlaps: string[] = [];
      boxes.forEach((a, i) => {
        for (const b of boxes.slice(i + 1)) {
          if (a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height) overlaps.push(`${a.text} ✕ ${b.text}`);
        }
      });
      expect(overlaps, name).toEqual([]);
      await page.close();
    }
  }, 60_000);

  it('Mermaid renders the sequence diagram of a sampled run', async () => {
    const model = scripted([envelope('Paris', 0.9), envelope('a;b#c"<d>', 0.8), { throws: new Error('503') }, ...Array(3).fill(envelope('Paris', 0.9))]);
    const source = toSequence(check(model.sync, 'q', { samples: 3 }));
    const page = await browser().newPage();
    await page.setContent('<!doctype html><body></body>');
    await page.addScriptTag({ content: readFileSync(new URL('../../node_modules/mermaid/dist/mermaid.min.js', import.meta.url), 'utf8') });
    const svg = await page.evaluate(async (text) => {
      const mermaid = (globalThis as unknown as { mermaid: { initialize(o: object): void; render(id: string, s: string): Promise<{ svg: string }> } }).mermaid;
      mermaid.initialize({ startOnLoad: false });
      return (await mermaid.render('sampled', text)).svg;
    }, source);
    const texts = [...svg.matchAll(/<(?:text|tspan)[^>]*>([^<]+)</g)].map(([, text]) => text);
    expect(texts).toContain('attempt 1, disagreement retry, sample 2');
    expect(texts).toContain('call failed: 503');
    expect(texts).toContain('vote "Paris" ×1, "a;b#c\\"&lt;d&gt;" ×1: agreement 1 of 2, confidence 0.45');
  }, 60_000);

  it('Mermaid renders the sequence diagram of a clarified run, the person\'s answer between the rounds', async () => {
    const source = toSequence((await clarifiedRun(0, { readings: ['the planet; "Mercury"', 'the element #80'] })).result);
    const page = await browser().newPage();
    await page.setContent('<!doctype html><body></body>');
    await page.addScriptTag({ content: readFileSync(new URL('../../node_modules/mermaid/dist/mermaid.min.js', import.meta.url), 'utf8') });
    await page.evaluate(async (text) => {
      const global = globalThis as unknown as {
        mermaid: { initialize(o: object): void; render(id: string, s: string): Promise<{ svg: string }> };
        document: { body: { innerHTML: string } };
      };
      global.mermaid.initialize({ startOnLoad: false });
      global.document.body.innerHTML = (await global.mermaid.render('clarified', text)).svg;
    }, source);
    expect(await page.locator('svg text.messageText').allTextContents()).toEqual([
      'prompt',
      'attempt 0, first prompt',
      '"?" at confidence 0.9, ambiguous',
      'AMBIGUOUS, 2 readings: "the planet; \\"Mercury\\"", "the element #80"',
      'the person chose "the planet; \\"Mercury\\""',
      'attempt 1, the clarified question',
      '"0.39 AU" at confidence 0.5',
      'attempt 2, confidence retry',
      '"0.39 AU" at confidence 0.95',
      'REPAIRED "0.39 AU"',
    ]);
    expect(await page.locator('svg text.noteText').allTextContents()).toEqual([
      'parsing → ambiguityGate → awaitingClarification',
      'parsing → ambiguityGate → confidenceGate → reconsidering',
      'parsing → ambiguityGate → confidenceGate → repaired',
    ]);
    await page.close();
  }, 60_000);

  it('Mermaid renders every diagram Booth writes', async () => {
    const result = check(scripted(['junk', envelope('Paris', 0.9)]).sync, 'q');
    const { cascade, skipped, budget } = await spendRuns();
    const diagrams = [machineToMermaid(checkpointMachine), toMermaid(result), toSequence(result), ...[cascade, skipped, budget].flatMap((run) => [toMermaid(run), toSequence(run)])];
    const page = await browser().newPage();
    await page.setContent('<!doctype html><body></body>');
    await page.addScriptTag({ content: readFileSync(new URL('../../node_modules/mermaid/dist/mermaid.min.js', import.meta.url), 'utf8') });
    const rendered = await page.evaluate(async (sources) => {
      const mermaid = (globalThis as unknown as { mermaid: { initialize(o: object): void; render(id: string, s: string): Promise<{ svg: string }> } }).mermaid;
      mermaid.initialize({ startOnLoad: false });
      const out: string[] = [];
      for (const [i, source] of sources.entries()) out.push((await mermaid.render(`d${i}`, source)).svg);
      return out;
    }, diagrams);
    expect(rendered).toHaveLength(9);
    for (const svg of rendered) expect(svg).toMatch(/^<svg[\s\S]*<\/svg>$/);
    expect(rendered[0]).toContain('confidenceGate');
    expect(rendered[2]).toContain('parse retry');
    // A cascade's lifelines, a skipped sample called off, a budget's stop.
    expect(rendered[4]).toContain('escalated to best, from attempt 4');
    expect(rendered[6]).toContain('sample 2 aborted, the vote was settled');
    expect(rendered[8]).toContain('stopped by the budget: the budget of 2 calls is spent');
  }, 60_000);
});
