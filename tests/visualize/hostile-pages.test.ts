import { readFileSync, writeFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { check } from '../../src/index.js';
import type { BoothResult } from '../../src/results/result.js';
import { renderHtml } from '../../src/visualize/html.js';
import { dotToSvg, machineToSvg, toSequence } from '../../src/visualize/index.js';
import { runDot, runFlowchart } from '../../src/visualize/run.js';
import { sequence } from '../../src/visualize/sequence.js';
import { everyFieldRuns } from '../fixtures/every-field-runs.js';
import { hostileCopy, XSS_PAYLOADS } from '../fixtures/hostile-results.js';
import { envelope, scripted } from '../fixtures/helpers.js';
import { available, useChromium } from '../fixtures/chromium.js';
import { clarifiedRun, HOSTILE_CLARIFICATIONS } from '../fixtures/clarified-runs.js';
import { spendRuns } from '../fixtures/spend-runs.js';

/**
 * Booth's pages and pictures of runs whose every field holds markup, opened in Debian's
 * Chromium: nothing runs, nothing is fetched, nothing becomes an element. The runs are drawn
 * with the renderers themselves, past any validation a stored run gets when it is read,
 * because the renderers must be safe whatever reaches them.
 */

const OUTPUT = new URL('../../test-output/hostile/', import.meta.url);
const MERMAID = new URL('../../node_modules/mermaid/dist/mermaid.min.js', import.meta.url);

/** The page `toHtml` writes, from the result as given. */
async function page(result: BoothResult): Promise<string> {
  return renderHtml(result, await dotToSvg(runDot(result)));
}

/** Elements none of Booth's pages and pictures has, and every payload tries to make. */
const ELEMENTS = ['script', 'img', 'iframe', 'object', 'embed', 'foreignObject', 'link', 'base', 'meta[http-equiv]'];

/** Every payload at once, so each page tries them all in every field. */
const ALL_PAYLOADS = XSS_PAYLOADS.join('');

interface Opened {
  readonly page: Page;
  /** Every request but the document itself: file: and data: included, since `src=x` is a file: URL. */
  readonly requests: string[];
  readonly dialogs: string[];
  readonly errors: string[];
}

describe.runIf(available)('hostile runs in a browser', () => {
  const browser = useChromium(OUTPUT);

  async function open(content: string, file: string): Promise<Opened> {
    const url = new URL(file, OUTPUT);
    writeFileSync(url, content);
    const opened: Opened = { page: await browser().newPage(), requests: [], dialogs: [], errors: [] };
    opened.page.on('dialog', (dialog) => {
      opened.dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    opened.page.on('pageerror', (error) => opened.errors.push(error.message));
    await opened.page.route('**/*', (route) => {
      const requested = route.request().url();
      if (requested === url.href) return route.continue();
      opened.requests.push(requested);
      return route.abort();
    });
    await opened.page.goto(url.href, { waitUntil: 'load' });
    // Long enough for an aborted image's onerror or a javascript: frame to have run.
    await opened.page.waitForTimeout(50);
    return opened;
  }

  /** What nothing the model or a store wrote may cause, checked on an opened page. */
  /** `within`: a selector for the part of the page Booth's output is in, when the test's own page has script. */
  async function expectInert({ page, requests, dialogs, errors }: Opened, { within = '', elements = ELEMENTS } = {}): Promise<void> {
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(requests).toEqual([]);
    expect(dialogs).toEqual([]);
    expect(errors).toEqual([]);
    expect(await page.locator(elements.map((element) => `${within} ${element}`.trim()).join(', ')).count()).toBe(0);
    const handlers = await page.evaluate(() => {
      const { document } = globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<{ attributes: Iterable<{ name: string }> }> } };
      return [...document.querySelectorAll('*')].flatMap((element) => [...element.attributes].map((a) => a.name)).filter((name) => /^on/i.test(name));
    });
    expect(handlers).toEqual([]);
  }

  /** Element names in document order outside the diagram, which Graphviz draws and hostile values never reach. */
  const skeleton = (page: Page) =>
    page.evaluate(() => {
      const { document } = globalThis as unknown as { document: { querySelectorAll(s: string): Iterable<{ tagName: string; closest(s: string): unknown }> } };
      return [...document.querySelectorAll('*')].filter((e) => e.closest('#diagram svg') === null).map((e) => e.tagName);
    });

  it('the four fields the review found written raw, confidence, trace attempt, cluster count and samples, stay text', async () => {
    const { sampled } = await everyFieldRuns();
    const payload = XSS_PAYLOADS[0]!;
    // The result's own fields, unfrozen; its getters (ok, nAttempts) stay on the prototype.
    const fields = structuredClone({ ...sampled }) as unknown as {
      attempts: { confidence: unknown; clusters: { count: unknown; samples: unknown[] }[] }[];
      trace: { attempt: unknown }[];
    };
    for (const attempt of fields.attempts) {
      attempt.confidence = payload;
      for (const cluster of attempt.clusters) Object.assign(cluster, { count: payload, samples: [payload] });
    }
    for (const step of fields.trace) step.attempt = payload;
    const result = Object.assign(Object.create(Object.getPrototypeOf(sampled) as object) as object, fields) as unknown as BoothResult;
    const opened = await open(await page(result), 'review-fields.html');
    await expectInert(opened);
    expect(await opened.page.title()).toBe('Booth trace: REPAIRED');
    expect(await opened.page.locator('#attempts tbody td:nth-child(3)').allTextContents()).toEqual([payload, payload]);
    expect(await opened.page.locator('#trace small').first().textContent()).toBe(`(attempt ${payload})`);
    expect(await opened.page.locator('table.clusters tbody tr').first().locator('td').allTextContents()).toEqual(['1 (winner)', '"Lyon"', payload, '0.9', payload]);
    await opened.page.close();
  }, 30_000);

  it('the HTML page of a run with markup in every field runs nothing, fetches nothing and keeps its shape', async () => {
    const runs = await everyFieldRuns();
    for (const [name, run] of Object.entries(runs)) {
      const benign = await open(await page(hostileCopy(run, 'benign').result), `${name}-benign.html`);
      const shape = await skeleton(benign.page);
      await benign.page.close();
      // Each payload alone in the run with the most fields; all of them at once in every run.
      const payloads = name === 'sampled' ? [...XSS_PAYLOADS, ALL_PAYLOADS] : [ALL_PAYLOADS];
      for (const [p, payload] of payloads.entries()) {
        const { result, leaves } = hostileCopy(run, payload);
        expect(leaves.length).toBeGreaterThan(10);
        const opened = await open(await page(result), `${name}-${p}.html`);
        const context = `${name} with payload ${p}`;
        await expectInert(opened);
        // The status is a field too: the title is the page's own text and the payload, as text.
        expect(await opened.page.title(), context).toBe(`Booth trace: ${payload}`);
        expect(await skeleton(opened.page), context).toEqual(shape);
        // The four fields the review found written raw now read as the payload's text.
        if (result.attempts.length > 0) {
          expect(await opened.page.locator('#attempts tbody td:nth-child(3)').last().textContent(), context).toBe(payload);
        }
        expect(await opened.page.locator('#trace small').first().textContent(), context).toBe(`(attempt ${payload})`);
        if (name === 'sampled') {
          const cluster = opened.page.locator('table.clusters tbody tr').first().locator('td');
          expect(await cluster.nth(2).textContent(), context).toBe(payload);
          expect(await cluster.nth(4).textContent(), context).toBe(payload);
        }
        await opened.page.close();
      }
    }
  }, 120_000);

  it('a clarified run whose readings and rephrasing hold markup shows them as text where they belong, and runs nothing', async () => {
    for (const [p, written] of [...HOSTILE_CLARIFICATIONS, ALL_PAYLOADS].entries()) {
      const chose = (await clarifiedRun(0, { readings: [written, `other ${written}`] })).result;
      const rephrased = (await clarifiedRun({ rephrased: written }, { readings: [`first ${written}`, 'second'] })).result;
      const context = `payload ${p}`;
      // The text as the page reads back: the HTML parser reads a CR, or CR LF, as one LF. Only in
      // the reading itself: a quoted one (JSON) has its line breaks as escapes.
      const text = written.replace(/\r\n?/g, '\n');
      const quoted = JSON.stringify(written);

      const opened = await open(await page(chose), `clarified-chose-${p}.html`);
      await expectInert(opened);
      expect(await opened.page.title(), context).toBe('Booth trace: REPAIRED');
      const section = opened.page.locator('#clarifications section.clarification');
      expect(await section.count(), context).toBe(1);
      expect(await section.locator('ol.readings li').allTextContents(), context).toEqual([`${text} (chosen)`, `other ${text}`]);
      expect(await section.locator('ol.readings li.chosen').count(), context).toBe(1);
      expect(await section.locator('p.said').textContent(), context).toBe(`the person chose ${quoted}`);
      // The round's row stands between the ambiguous attempt and the first of the new round, across the table.
      const rows = opened.page.locator('#attempts tbody tr');
      expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as unknown as { className: string }).className)), context).toEqual(['', 'round', '', '']);
      expect(await rows.nth(1).textContent(), context).toBe(`round 2, from attempt 1: the person chose ${quoted}`);
      expect(await opened.page.locator('#summary [data-name="clarified"] b').textContent(), context).toBe(`the person chose ${quoted}`);
      // The prompt of the clarified question quotes the reading, as text.
      expect(await opened.page.locator('#prompts pre').nth(1).textContent(), context).toContain('The person who asked has clarified the question');
      await opened.page.close();

      const again = await open(await page(rephrased), `clarified-rephrased-${p}.html`);
      await expectInert(again);
      expect(await again.page.locator('#clarifications ol.readings li').allTextContents(), context).toEqual([`first ${text}`, 'second']);
      expect(await again.page.locator('#clarifications ol.readings li.chosen').count(), context).toBe(0);
      expect(await again.page.locator('#clarifications p.said').textContent(), context).toBe(`the person rephrased the question as ${quoted}`);
      expect(await again.page.locator('#trace li.round-start').allTextContents(), context).toEqual(['calling (attempt 1) round 2']);
      await again.page.close();
    }
  }, 120_000);

  it('a cascade whose models are named with markup: each name is text in the header, the Models table, the attempts, the escalation rows and the path line', async () => {
    // Three different payloads a run, so the three models stay three: every payload once (a name has at most 200 characters).
    for (const [p, names] of [
      [XSS_PAYLOADS[0]!, XSS_PAYLOADS[1]!, XSS_PAYLOADS[2]!],
      [XSS_PAYLOADS[3]!, XSS_PAYLOADS[4]!, XSS_PAYLOADS[5]!],
    ].entries()) {
      const { cascade } = await spendRuns(names as [string, string, string]);
      const [cheap, strong, best] = names as [string, string, string];
      const opened = await open(await page(cascade as unknown as BoothResult), `cascade-names-${p}.html`);
      const context = `names ${p}`;
      await expectInert(opened);
      const { page: tab } = opened;
      expect(await tab.title(), context).toBe('Booth trace: VERIFIED');
      expect(await tab.locator('#summary [data-name="model"] b').textContent(), context).toBe(best);
      expect(await tab.locator('#summary [data-name="models tried"] b').textContent(), context).toBe(`${cheap} → ${strong} → ${best}`);
      expect(await tab.locator('#models tbody td:first-child').allTextContents(), context).toEqual([cheap, strong, best]);
      expect(await tab.locator('#attempts td.model').allTextContents(), context).toEqual([cheap, cheap, strong, strong, best]);
      expect(await tab.locator('#attempts tr.escalation').allTextContents(), context).toEqual([`escalated to ${strong}, from attempt 2`, `escalated to ${best}, from attempt 4`]);
      expect(await tab.locator('#attempts td.next').allTextContents(), context).toEqual(['confidence retry', `escalated to ${strong}`, 'parse retry', `escalated to ${best}`, 'VERIFIED']);
      expect(await tab.locator('#model-path b').textContent(), context).toBe(`${cheap}: attempts 0–1 → ${strong}: attempts 2–3 → ${best}: attempt 4`);
      expect(await tab.locator('#trace small.escalation').allTextContents(), context).toEqual([`escalated to ${strong}`, `escalated to ${best}`]);
      await tab.close();
    }
  }, 60_000);

  it("a budget stop whose detail holds markup (a tampered file) shows it as text in the budget's line", async () => {
    const { budget } = await spendRuns();
    const tampered = Object.assign(Object.create(Object.getPrototypeOf(budget) as object) as object, { ...budget, detail: ALL_PAYLOADS }) as unknown as BoothResult;
    expect(tampered.method).toBe('budget');
    const opened = await open(await page(tampered), 'budget-detail.html');
    await expectInert(opened);
    expect(await opened.page.locator('#budget').textContent()).toBe(
      `Stopped by the budget: ${ALL_PAYLOADS}. No call was started that the budget could not afford; the attempts are those made before.`,
    );
    await opened.page.close();
  }, 30_000);

  it('the SVG of a hostile run, opened on its own and inline, runs nothing', async () => {
    const runs = await everyFieldRuns();
    for (const [name, run] of Object.entries(runs)) {
      const svg = await dotToSvg(runDot(hostileCopy(run, ALL_PAYLOADS).result));
      for (const opened of [await open(svg, `${name}.svg`), await open(`<!doctype html><body>${svg}</body>`, `${name}-svg.html`)]) {
        await expectInert(opened);
        expect(await opened.page.locator('svg g.node').count()).toBeGreaterThan(5);
        await opened.page.close();
      }
    }
  }, 120_000);

  it('the SVG of a machine with markup in its names shows the names as text', async () => {
    // No `.` or `#`: XState reads those in a target as a path and an id.
    const name = `"];<img src=http://localhost:9/x onerror=__pwned=1>\n</text><script>__pwned=1</script>`;
    const machine = createMachine({
      id: `id${name}`,
      initial: `a${name}`,
      states: { [`a${name}`]: { on: { [`go${name}`]: `b${name}` } }, [`b${name}`]: { type: 'final' } },
    });
    const opened = await open(`<!doctype html><body>${await machineToSvg(machine)}</body>`, 'machine-svg.html');
    await expectInert(opened);
    expect(await opened.page.locator('svg g.node text').allTextContents()).toEqual([
      'a"];<img src=http://localhost:9/x onerror=__pwned=1>',
      '</text><script>__pwned=1</script>',
      'b"];<img src=http://localhost:9/x onerror=__pwned=1>',
      '</text><script>__pwned=1</script>',
    ]);
    await opened.page.close();
  }, 30_000);

  /** Renders Mermaid sources in a page with Mermaid's own sanitising off, and puts the pictures in the page. */
  async function renderMermaid(sources: readonly string[]): Promise<{ opened: Opened; svgs: string[] }> {
    const opened = await open('<!doctype html><body></body>', 'mermaid.html');
    await opened.page.addScriptTag({ content: readFileSync(MERMAID, 'utf8') });
    const svgs = await opened.page.evaluate(async (texts) => {
      const global = globalThis as unknown as {
        mermaid: { initialize(o: object): void; render(id: string, s: string): Promise<{ svg: string }> };
        document: { body: { insertAdjacentHTML(where: string, html: string): void } };
      };
      // `loose`: Mermaid leaves labels unsanitised, so only Booth's escaping keeps them text.
      global.mermaid.initialize({ startOnLoad: false, securityLevel: 'loose' });
      const out: string[] = [];
      for (const [i, text] of texts.entries()) {
        const { svg } = await global.mermaid.render(`d${i}`, text);
        global.document.body.insertAdjacentHTML('beforeend', svg);
        out.push(svg);
      }
      return out;
    }, sources);
    await opened.page.waitForTimeout(50);
    return { opened, svgs };
  }

  it('Mermaid draws the diagrams of hostile runs with every value as label text', async () => {
    const runs = await everyFieldRuns();
    const sources = Object.entries(runs).flatMap(([name, run]) =>
      (name === 'sampled' ? [...XSS_PAYLOADS, ALL_PAYLOADS] : [ALL_PAYLOADS]).flatMap((payload) => {
        const { result } = hostileCopy(run, payload);
        return [sequence(result), runFlowchart(result)];
      }),
    );
    // And clarified runs as the library makes them, so the round boundary is drawn: hostile readings offered, chosen and rephrased.
    const clarified: string[] = [];
    for (const text of [...HOSTILE_CLARIFICATIONS, ALL_PAYLOADS]) {
      clarified.push(sequence((await clarifiedRun(0, { readings: [text, `other ${text}`] })).result));
      clarified.push(sequence((await clarifiedRun({ rephrased: text }, { readings: [text, 'second'] })).result));
    }
    // And cascades of models named with markup: a lifeline each, its name the text of a note over it.
    const cascades: string[] = [];
    for (const names of [[XSS_PAYLOADS[0]!, XSS_PAYLOADS[5]!, XSS_PAYLOADS[3]!], [XSS_PAYLOADS[1]!, XSS_PAYLOADS[2]!, XSS_PAYLOADS[4]!]] as const) {
      cascades.push(sequence((await spendRuns(names)).cascade as unknown as BoothResult));
    }
    sources.push(...cascades, ...clarified);
    const { opened, svgs } = await renderMermaid(sources);
    expect(svgs).toHaveLength(sources.length);
    // Each cascade drew three model lifelines, whatever its models are called, and each name as a note's text.
    for (const svg of svgs.slice(-clarified.length - cascades.length, -clarified.length)) {
      const actors = new Set([...svg.matchAll(/<text[^>]*class="actor[^"]*"[^>]*>(?:<tspan[^>]*>)?([^<]*)</g)].map(([, text]) => text));
      expect([...actors].sort()).toEqual(['App', 'Booth', 'Model1', 'Model2', 'Model3']);
      expect([...svg.matchAll(/<text[^>]*class="noteText"[^>]*>/g)].length).toBeGreaterThanOrEqual(3);
    }
    // Each clarified diagram drew its boundary as two messages, the person's answer among them.
    for (const svg of svgs.slice(-clarified.length)) {
      const messages = [...svg.matchAll(/<text[^>]*class="messageText"[^>]*>([^<]*)</g)].map(([, text]) => text ?? '');
      expect(messages.filter((message) => message.startsWith('AMBIGUOUS, 2 readings: '))).toHaveLength(1);
      expect(messages.filter((message) => message.startsWith('the person '))).toHaveLength(1);
    }
    // Mermaid writes flowchart labels as HTML inside foreignObject: its own, and allowed.
    await expectInert(opened, { within: 'svg', elements: ELEMENTS.filter((element) => element !== 'foreignObject') });
    // The payloads' directive would add its CSS to the picture's style; shown as text it is harmless.
    const styles = svgs.map((svg) => /<style>([\s\S]*?)<\/style>/.exec(svg)?.[1] ?? 'no style');
    for (const style of styles) expect(style.includes('127.0.0.1') || style === 'no style').toBe(false);
    await opened.page.close();
  }, 120_000);

  it('a Mermaid directive in an answer is drawn as text, and its CSS is not applied', async () => {
    const directive = `%%{init:{'themeCSS':'svg{opacity:0.31}'}}%%`;
    const source = toSequence(check(scripted([envelope(directive, 0.9)]).sync, 'q'));
    const { opened, svgs } = await renderMermaid([source]);
    // The test's page holds Mermaid's own script: only the picture is checked for elements.
    const style = /<style>([\s\S]*?)<\/style>/.exec(svgs[0]!)?.[1];
    expect(style).toContain('.messageText{');
    expect(style).not.toContain('opacity:0.31');
    expect(await opened.page.locator('svg').first().evaluate((e) => (globalThis as unknown as { getComputedStyle(e: unknown): { opacity: string } }).getComputedStyle(e).opacity)).toBe('1');
    expect(await opened.page.locator('svg text.messageText').allTextContents()).toContain(`VERIFIED "${directive}"`);
    await expectInert(opened, { within: 'svg' });
    await opened.page.close();
  }, 60_000);
});
