import { describe, expect, it } from 'vitest';
import { calibrate, calibrateBySource, type Labelled, reliabilitySvg } from '../../src/cli/calibrate.js';

/**
 * The chart's lines per confidence source when two of them give the same bins, as self and
 * hybrid do when every vote is unanimous: neither may hide the other, and the chart says so.
 */

/** Forty results whose self and hybrid confidences are equal, and whose agreement differs. */
function selfIsHybrid(): Labelled[] {
  return Array.from({ length: 40 }, (_, i) => {
    const self = 0.5 + (i % 10) / 20;
    return { status: 'VERIFIED', confidence: self, correct: i % 3 !== 0, bySource: { self, agreement: i % 4 === 0 ? 0.6 : 1, hybrid: self } };
  });
}

/** Each source line of the SVG: its source, path, colour and dashes. */
function sourceLines(svg: string) {
  return [...svg.matchAll(/aria-label="[^"]*source: (\w+);[^"]*" role="graphics-symbol" aria-roledescription="line mark" d="([^"]*)" stroke="([^"]*)" stroke-width="[^"]*" stroke-dasharray="([^"]*)"/g)].map(
    ([, source, path, stroke, dash]) => ({ source, path, stroke, dash }),
  );
}

/** The outline of each source's points, by source. */
function pointShapes(svg: string): Map<string, Set<string>> {
  const shapes = new Map<string, Set<string>>();
  for (const [, source, shape] of svg.matchAll(/aria-label="[^"]*source: (\w+); answers[^"]*" role="graphics-symbol" aria-roledescription="point"[^>]* d="([^"]*)"/g)) {
    shapes.set(source!, (shapes.get(source!) ?? new Set()).add(shape!));
  }
  return shapes;
}

describe('the reliability chart, by confidence source', () => {
  it('draws coinciding sources with their own dashes and point shapes, and names them in the subtitle', async () => {
    const rows = selfIsHybrid();
    const svg = await reliabilitySvg(calibrate(rows, 0.9), calibrateBySource(rows, 0.9));
    const lines = sourceLines(svg);
    expect(lines.map(({ source, stroke, dash }) => [source, stroke, dash])).toEqual([
      ['self', '#2980b9', '1,0'],
      ['agreement', '#27ae60', '8,4'],
      ['hybrid', '#8e44ad', '2,3'],
    ]);
    // The same path, one over the other: the dashes of the one on top leave the one below showing.
    expect(lines[2]?.path).toBe(lines[0]?.path);
    const shapes = pointShapes(svg);
    expect([...shapes.keys()]).toEqual(['self', 'agreement', 'hybrid']);
    for (const outlines of shapes.values()) expect(outlines.size).toBe(1);
    expect(new Set([...shapes.values()].map((outlines) => [...outlines][0])).size).toBe(3);
    // Hollow points, so one drawn on another leaves the other's outline.
    expect(svg).not.toMatch(/aria-roledescription="point"[^>]*fill="#(2980b9|27ae60|8e44ad)"/);
    expect(svg).toContain('>self and hybrid coincide: drawn one on another, told apart by dash and point shape</tspan>');
  });

  it('names no coincidence when the lines differ', async () => {
    const rows = selfIsHybrid().map((row, i) => ({ ...row, bySource: { ...row.bySource!, hybrid: row.bySource!.self * (i % 2 === 0 ? 0.5 : 1) } }));
    const svg = await reliabilitySvg(calibrate(rows, 0.9), calibrateBySource(rows, 0.9));
    expect(sourceLines(svg)).toHaveLength(3);
    expect(svg).not.toContain('coincide');
  });
});
