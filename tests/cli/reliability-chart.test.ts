import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibrate, type Labelled } from '../../src/cli/calibrate.js';
import { booth, dir } from '../fixtures/booth-process.js';

/**
 * `booth calibrate --svg`, drawn by the real command and looked at in Debian's Chromium:
 * the line must pass through every non-empty bin, however lopsided the bins are.
 */
const CHROMIUM = '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env['CI']) throw new Error(`${CHROMIUM} is missing: .ci/run installs it with apt-get`);

const OUTPUT = new URL('../../test-output/', import.meta.url);

/** The case: 194 answers, 154 of them in the 0.9–1.0 bin; bins 0, 1, 3, 4, 6 and 7 stay empty. */
function lopsided(): Labelled[] {
  const rows: Labelled[] = [];
  for (let i = 0; i < 154; i++) rows.push({ status: 'VERIFIED', confidence: 0.9 + (i % 10) / 100, correct: i % 5 !== 0 });
  for (let i = 0; i < 25; i++) rows.push({ status: 'VERIFIED', confidence: 0.8 + (i % 10) / 100, correct: i % 2 === 0 });
  for (let i = 0; i < 10; i++) rows.push({ status: 'UNCERTAIN', confidence: 0.5 + (i % 10) / 100, correct: i % 3 === 0 });
  for (let i = 0; i < 5; i++) rows.push({ status: 'UNCERTAIN', confidence: 0.2, correct: false });
  return rows;
}

interface Drawn {
  /** Subpaths of the reliability line: 1 when it is continuous. */
  subpaths: number;
  lineStroke: string | null;
  /** For each expected bin position (screen pixels), the distance to the nearest point of the line. */
  misses: number[];
  /** Centre and width of each bin point, in drawing order. */
  points: Array<{ x: number; y: number; width: number }>;
  /** Height of each histogram bar, in drawing order. */
  bars: number[];
  /** Screen position of each expected bin, from the diagonal's ends: (0, 0) and (1, 1). */
  expected: Array<{ x: number; y: number }>;
  diagonalDash: string | null;
}

describe.runIf(available)('the reliability chart, in a browser', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
    mkdirSync(OUTPUT, { recursive: true });
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('draws one continuous line through every non-empty bin, the count as point size and as a histogram, and the diagonal', async () => {
    const rows = lopsided();
    const bins = calibrate(rows, 0.95).bins.filter((bin) => bin.count > 0);
    expect(bins.map((bin) => bin.count)).toEqual([5, 10, 25, 154]);

    const work = dir();
    const results = join(work, 'labelled.jsonl');
    const svgFile = join(work, 'reliability.svg');
    writeFileSync(results, rows.map((row) => JSON.stringify(row)).join('\n'));
    const run = await booth(['calibrate', results, '--svg', svgFile]);
    expect(run.code).toBe(0);
    const svg = readFileSync(svgFile, 'utf8');

    const page = await browser.newPage({ viewport: { width: 700, height: 700 } });
    await page.setContent(`<!doctype html><body style="margin:0">${svg}</body>`);
    const data = bins.map((bin) => ({ confidence: bin.meanConfidence ?? 0, accuracy: bin.accuracy ?? 0 }));
    await page.addScriptTag({ path: fileURLToPath(new URL('../fixtures/measure-chart.browser.js', import.meta.url)) });
    const drawn = (await page.evaluate((binData) => (globalThis as unknown as { measureChart(d: unknown): unknown }).measureChart(binData), data)) as Drawn;
    await page.screenshot({ path: new URL('reliability.png', OUTPUT).pathname });

    // One line, unbroken, through each non-empty bin (to within a pixel).
    expect(drawn.subpaths).toBe(1);
    expect(drawn.lineStroke).toBe('#c0392b');
    expect(drawn.misses).toHaveLength(4);
    for (const miss of drawn.misses) expect(miss).toBeLessThan(1);
    // A point on each bin, its size growing with the count: the 154-answer bin is no 1-pixel dot.
    expect(drawn.points).toHaveLength(4);
    drawn.points.forEach((point, i) => {
      expect(Math.hypot(point.x - (drawn.expected[i]?.x ?? 0), point.y - (drawn.expected[i]?.y ?? 0))).toBeLessThan(1.5);
    });
    const widths = drawn.points.map((p) => p.width);
    expect([...widths].sort((a, b) => a - b)).toEqual(widths);
    expect(widths[3]).toBeGreaterThan(25);
    // The histogram below: one bar per non-empty bin, heights in proportion to the counts.
    expect(drawn.bars).toHaveLength(4);
    const tallest = Math.max(...drawn.bars);
    drawn.bars.forEach((height, i) => expect(height / tallest).toBeCloseTo((bins[i]?.count ?? 0) / 154, 1));
    // The diagonal of perfect calibration, dashed.
    expect(drawn.diagonalDash).toBe('4,4');
  }, 60_000);
});
