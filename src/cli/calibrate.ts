import { isMissingPackage } from './optional.js';

/**
 * How far to trust a model's self-reported confidence, from results whose correctness is
 * known. Self-reported confidence is usually overconfident, so the threshold that makes
 * `VERIFIED` mean something should be fitted per model and task, not guessed.
 */

/** One labelled result: the confidence the model reported, and whether the answer was right. */
export interface Labelled {
  readonly status: string;
  readonly confidence: number;
  readonly correct: boolean;
}

export interface CalibrationBin {
  /** The bin covers [lower, upper); the last one includes 1. */
  readonly lower: number;
  readonly upper: number;
  readonly count: number;
  readonly meanConfidence: number | null;
  readonly accuracy: number | null;
}

export interface Calibration {
  readonly count: number;
  readonly accuracy: number;
  /** Expected calibration error over 10 equal-width bins: Σ (n_b / N) · |accuracy_b − confidence_b|. */
  readonly ece: number;
  /** Mean of (confidence − correct)². */
  readonly brier: number;
  readonly bins: readonly CalibrationBin[];
  readonly accuracyByStatus: Readonly<Record<string, { readonly count: number; readonly accuracy: number }>>;
  readonly targetPrecision: number;
  /** The lowest threshold whose accepted answers (confidence ≥ threshold) reach the target precision; null when none does. */
  readonly threshold: { readonly value: number; readonly precision: number; readonly coverage: number } | null;
}

const BINS = 10;

export function calibrate(results: readonly Labelled[], targetPrecision: number): Calibration {
  const count = results.length;
  const bins: CalibrationBin[] = Array.from({ length: BINS }, (_, i) => {
    const inBin = results.filter((r) => Math.min(BINS - 1, Math.floor(r.confidence * BINS)) === i);
    return {
      lower: i / BINS,
      upper: (i + 1) / BINS,
      count: inBin.length,
      meanConfidence: inBin.length ? mean(inBin.map((r) => r.confidence)) : null,
      accuracy: inBin.length ? mean(inBin.map((r) => (r.correct ? 1 : 0))) : null,
    };
  });
  const ece = bins.reduce(
    (sum, bin) => sum + (bin.count / Math.max(count, 1)) * Math.abs((bin.accuracy ?? 0) - (bin.meanConfidence ?? 0)),
    0,
  );
  const brier = count ? mean(results.map((r) => (r.confidence - (r.correct ? 1 : 0)) ** 2)) : 0;
  const accuracyByStatus: Record<string, { count: number; accuracy: number }> = {};
  for (const status of new Set(results.map((r) => r.status))) {
    const ofStatus = results.filter((r) => r.status === status);
    accuracyByStatus[status] = { count: ofStatus.length, accuracy: mean(ofStatus.map((r) => (r.correct ? 1 : 0))) };
  }
  return {
    count,
    accuracy: count ? mean(results.map((r) => (r.correct ? 1 : 0))) : 0,
    ece,
    brier,
    bins,
    accuracyByStatus,
    targetPrecision,
    threshold: fitThreshold(results, targetPrecision),
  };
}

/** Tries each reported confidence as the threshold, lowest first: the first that reaches the target wins. */
function fitThreshold(results: readonly Labelled[], target: number): Calibration['threshold'] {
  const candidates = [...new Set(results.map((r) => r.confidence))].sort((a, b) => a - b);
  for (const value of candidates) {
    const accepted = results.filter((r) => r.confidence >= value);
    const precision = mean(accepted.map((r) => (r.correct ? 1 : 0)));
    if (precision >= target) return { value, precision, coverage: accepted.length / results.length };
  }
  return null;
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** Lower case, punctuation dropped, white space folded: `"Paris."` and `" paris"` agree. */
function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Whether an answer is the expected one: two strings after `normalizeAnswer`; typed
 * answers (`--schema`) as equal JSON values, whatever the order of their keys.
 */
export function sameAnswer(answer: unknown, expected: unknown): boolean {
  if (typeof answer === 'string' && typeof expected === 'string') return normalizeAnswer(answer) === normalizeAnswer(expected);
  return answer !== null && answer !== undefined && canonicalJson(answer) === canonicalJson(expected);
}

/** JSON with every object's keys sorted, so equal values give equal text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}

/**
 * `vega` and `vega-lite` draw the chart and nothing else, so they are optional peer
 * dependencies: a plain install stays small, and `booth calibrate --svg` asks for them.
 */
export class ChartLibraryMissing extends Error {
  override readonly name = 'ChartLibraryMissing';
  /** The package that could not be loaded. */
  readonly packageName: string;

  constructor(packageName: string, cause: unknown) {
    super(
      `booth calibrate --svg draws its chart with vega and vega-lite, optional peer dependencies of boothjs, and \`${packageName}\` is not installed. Install them with: npm i vega vega-lite`,
      { cause },
    );
    this.packageName = packageName;
  }
}

/** Loads `vega` and `vega-lite`, or throws `ChartLibraryMissing` naming the command that installs them. */
export async function loadChartLibraries(): Promise<{ vega: typeof import('vega'); vegaLite: typeof import('vega-lite') }> {
  const load = async <T>(name: string, importer: () => Promise<T>): Promise<T> => {
    try {
      return await importer();
    } catch (error) {
      if (isMissingPackage(error, name)) throw new ChartLibraryMissing(name, error);
      throw error;
    }
  };
  const vega = await load('vega', () => import('vega'));
  const vegaLite = await load('vega-lite', () => import('vega-lite'));
  return { vega, vegaLite };
}

/** Pixel size of the reliability plot; the histogram below it is as wide. */
export const CHART = { width: 360, height: 360, histogramHeight: 90 } as const;

/**
 * A reliability diagram, drawn by Vega-Lite and rendered to SVG by Vega, headless: the
 * diagonal of perfect calibration; one continuous line through the (mean confidence,
 * accuracy) of every non-empty bin, with a point on each whose area grows with the number
 * of answers in the bin, labelled with that number; and below, a histogram of the answers
 * per bin on the same confidence axis. The marks are named (`diagonal`, `reliability_line`,
 * `bin_points`, `bin_counts`), so the SVG can be checked mark by mark.
 */
export async function reliabilitySvg(calibration: Calibration): Promise<string> {
  const { vega, vegaLite } = await loadChartLibraries();
  const bins = calibration.bins
    .filter((bin) => bin.count > 0)
    .map((bin) => ({ lower: bin.lower, upper: bin.upper, confidence: bin.meanConfidence, accuracy: bin.accuracy, count: bin.count }));
  const confidence = { field: 'confidence', type: 'quantitative', scale: { domain: [0, 1] }, title: 'self-reported confidence (mean per bin)' };
  const accuracy = { field: 'accuracy', type: 'quantitative', scale: { domain: [0, 1] }, title: 'accuracy' };
  const spec = vegaLite.compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `Reliability: ECE ${calibration.ece.toFixed(3)}, Brier ${calibration.brier.toFixed(3)}, n = ${calibration.count}`,
    vconcat: [
      {
        width: CHART.width,
        height: CHART.height,
        layer: [
          {
            name: 'diagonal',
            data: { values: [{ confidence: 0, accuracy: 0 }, { confidence: 1, accuracy: 1 }] },
            mark: { type: 'line', strokeDash: [4, 4], color: '#999999', strokeWidth: 1 },
            encoding: { x: confidence, y: accuracy },
          },
          {
            name: 'reliability_line',
            data: { values: bins },
            // No size encoding here: a line with a size channel is cut into separate segments.
            mark: { type: 'line', color: '#c0392b', strokeWidth: 2 },
            encoding: { x: confidence, y: accuracy, order: { field: 'confidence', type: 'quantitative' } },
          },
          {
            name: 'bin_points',
            data: { values: bins },
            mark: { type: 'circle', color: '#c0392b', opacity: 0.85, stroke: '#ffffff', strokeWidth: 1 },
            encoding: {
              x: confidence,
              y: accuracy,
              size: { field: 'count', type: 'quantitative', title: 'answers in the bin', scale: { range: [40, 900], zero: false } },
              tooltip: [
                { field: 'lower', title: 'from' },
                { field: 'upper', title: 'to' },
                { field: 'count', title: 'answers' },
                { field: 'accuracy', format: '.3f' },
                { field: 'confidence', format: '.3f' },
              ],
            },
          },
          {
            name: 'bin_labels',
            data: { values: bins },
            mark: { type: 'text', dy: -14, fontSize: 10, color: '#333333' },
            encoding: { x: confidence, y: accuracy, text: { field: 'count', type: 'quantitative' } },
          },
        ],
      },
      {
        name: 'bin_counts',
        width: CHART.width,
        height: CHART.histogramHeight,
        data: { values: bins },
        mark: { type: 'bar', color: '#7f8c8d', stroke: '#ffffff', strokeWidth: 1 },
        encoding: {
          x: { field: 'lower', type: 'quantitative', scale: { domain: [0, 1] }, title: 'self-reported confidence (bin)' },
          x2: { field: 'upper' },
          y: { field: 'count', type: 'quantitative', title: 'answers' },
          y2: { datum: 0 },
          tooltip: [
            { field: 'lower', title: 'from' },
            { field: 'upper', title: 'to' },
            { field: 'count', title: 'answers' },
          ],
        },
      },
    ],
  } as Parameters<typeof vegaLite.compile>[0]).spec;
  return new vega.View(vega.parse(spec), { renderer: 'none' }).toSVG();
}
