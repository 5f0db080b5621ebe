import {
  canonicalJson,
  combinedConfidence,
  CONFIDENCE_SOURCES,
  type ConfidenceSource,
  defaultAgree,
  voteOf,
  type Voter,
} from '../decide/agreement.js';
import { isMissingPackage } from '../util/optional-peers.js';

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
  /** With samples: the confidence each source gives the vote of the result's reported attempt (`confidenceBySource`). */
  readonly bySource?: Readonly<Record<ConfidenceSource, number>> | undefined;
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

/** `calibrate()` once per confidence source, on the results whose line holds samples; correctness is the same for all three. */
export type SourceCalibrations = Readonly<Record<ConfidenceSource, Calibration>>;

/**
 * Which confidence source is best calibrated on these results: each source's confidence,
 * recomputed from the same samples, calibrated against the same labels. Null when no
 * result holds samples: there is nothing to compare.
 */
export function calibrateBySource(results: readonly Labelled[], targetPrecision: number): SourceCalibrations | null {
  const sampled = results.flatMap((r) => (r.bySource === undefined ? [] : [{ ...r, bySource: r.bySource }]));
  if (sampled.length === 0) return null;
  const bySource = (source: ConfidenceSource) =>
    calibrate(
      sampled.map((r) => ({ status: r.status, confidence: r.bySource[source], correct: r.correct })),
      targetPrecision,
    );
  return { self: bySource('self'), agreement: bySource('agreement'), hybrid: bySource('hybrid') };
}

/**
 * The confidence each source would give a result line of `booth batch --samples k`, from
 * the samples of the attempt the result reports: they vote again, with the default
 * comparison (the CLI has no custom `agree`), and `combinedConfidence` reads the vote three
 * ways. Null for a line run with one sample, or whose reported attempt has no parsed sample.
 */
export function confidenceBySource(row: Readonly<Record<string, unknown>>): Readonly<Record<ConfidenceSource, number>> | null {
  const settings = row['settings'] as { samples?: unknown; schema?: unknown } | null | undefined;
  const attempts = row['attempts'];
  if (typeof settings?.samples !== 'number' || settings.samples < 2 || !Array.isArray(attempts)) return null;
  // The attempt the result reports, as the machine picks it: the last that parsed and that no schema refused.
  const reported = (attempts as Array<Record<string, unknown> | null>).findLast((a) => a?.['parseOk'] === true && (a['schemaIssues'] ?? null) === null);
  const samples = reported?.['samples'];
  if (!Array.isArray(samples)) return null;
  const voters: Voter[] = [];
  (samples as Array<Record<string, unknown> | null>).forEach((sample, index) => {
    const confidence = sample?.['confidence'];
    if (sample?.['parseOk'] === true && typeof confidence === 'number') voters.push({ index, answer: sample['answer'], confidence, ambiguous: sample['ambiguous'] === true });
  });
  if (voters.length === 0) return null;
  const { clusters } = voteOf(voters, defaultAgree(settings.schema === true));
  return {
    self: combinedConfidence(clusters, 'self'),
    agreement: combinedConfidence(clusters, 'agreement'),
    hybrid: combinedConfidence(clusters, 'hybrid'),
  };
}

/**
 * Whether a result line's answer is right: its `correct` when it has one, else its answer
 * compared with its `expected`; null when it has neither, and nothing says.
 */
export function correctnessOf(row: Readonly<Record<string, unknown>>): boolean | null {
  if (typeof row['correct'] === 'boolean') return row['correct'];
  const expected = row['expected'];
  return expected === undefined || expected === null ? null : sameAnswer(row['answer'], expected);
}

/** A result line as calibration reads it: null for one without a confidence, a status or a label. */
export function labelOf(row: Readonly<Record<string, unknown>>): Labelled | null {
  const { status, confidence } = row;
  if (typeof confidence !== 'number' || typeof status !== 'string') return null;
  const correct = correctnessOf(row);
  if (correct === null) return null;
  return { status, confidence, correct, bySource: confidenceBySource(row) ?? undefined };
}

/**
 * Tries each reported confidence as the threshold, lowest first: the first that reaches the
 * target wins. The answers a threshold accepts are those the next higher one accepts plus
 * its own, so one sweep down the sorted confidences counts them all (filtering every result
 * for each candidate was quadratic: 40 000 results took 109 s, in `booth report` too).
 */
function fitThreshold(results: readonly Labelled[], target: number): Calibration['threshold'] {
  const sorted = [...results].sort((a, b) => b.confidence - a.confidence);
  // Per distinct confidence, highest first: how many answers it accepts, and how many of them are correct.
  const sweep: { value: number; accepted: number; correct: number }[] = [];
  let accepted = 0;
  let correct = 0;
  for (let i = 0; i < sorted.length; ) {
    const value = sorted[i]!.confidence;
    for (; i < sorted.length && sorted[i]!.confidence === value; i += 1) {
      accepted += 1;
      if (sorted[i]!.correct) correct += 1;
    }
    sweep.push({ value, accepted, correct });
  }
  for (let k = sweep.length - 1; k >= 0; k -= 1) {
    const candidate = sweep[k]!;
    const precision = candidate.correct / candidate.accepted;
    if (precision >= target) return { value: candidate.value, precision, coverage: candidate.accepted / results.length };
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
const CHART_SIDE = Math.max(CHART.width, CHART.height);

/** One colour per confidence source, in the order of `CONFIDENCE_SOURCES`; none is the red of the run's own line. */
const SOURCE_COLORS = ['#2980b9', '#27ae60', '#8e44ad'];

/**
 * One dash pattern and one point shape per source, in the same order. Two sources can give the
 * very same bins (self and hybrid do when every vote is unanimous), and a colour alone would
 * then hide one line under the other: with its own dashes and hollow shape each stays visible
 * where it lies, with no offset that would misstate its values.
 */
const SOURCE_DASHES = [[1, 0], [8, 4], [2, 3]];
const SOURCE_SHAPES = ['circle', 'square', 'triangle-up'];

/** Lines drawn within half a pixel of each other everywhere are one line to the eye. */
const COINCIDE = 0.5 / CHART_SIDE;

/**
 * The sources whose lines lie on one another, as the chart's note names them: `self and hybrid
 * coincide`. Each group is named once, in the order of `CONFIDENCE_SOURCES`; null when none do.
 */
function coincidingSources(bySource: SourceCalibrations): string | null {
  const points = (source: ConfidenceSource) => bySource[source].bins.filter((bin) => bin.count > 0);
  const same = (a: ConfidenceSource, b: ConfidenceSource) => {
    const [pa, pb] = [points(a), points(b)];
    return (
      pa.length === pb.length &&
      pa.every((bin, i) => Math.abs((bin.meanConfidence ?? 0) - (pb[i]?.meanConfidence ?? 0)) <= COINCIDE && Math.abs((bin.accuracy ?? 0) - (pb[i]?.accuracy ?? 0)) <= COINCIDE)
    );
  };
  const groups: ConfidenceSource[][] = [];
  for (const source of CONFIDENCE_SOURCES) {
    const group = groups.find(([first]) => same(first!, source));
    if (group) group.push(source);
    else groups.push([source]);
  }
  const named = groups.filter((group) => group.length > 1).map((group) => `${group.slice(0, -1).join(', ')} and ${group.at(-1)} coincide`);
  return named.length === 0 ? null : `${named.join('; ')}: drawn one on another, told apart by dash and point shape`;
}

/**
 * A reliability diagram, drawn by Vega-Lite and rendered to SVG by Vega, headless: the
 * diagonal of perfect calibration; one continuous line through the (mean confidence,
 * accuracy) of every non-empty bin, with a point on each whose area grows with the number
 * of answers in the bin, labelled with that number; and below, a histogram of the answers
 * per bin on the same confidence axis. With `bySource` (results with samples), one thinner
 * line per confidence source is overlaid, each with its own colour, dashes and point shape and
 * a legend, so the three can be compared against the diagonal; sources whose lines coincide
 * are named in the subtitle. The marks are named (`diagonal`, `reliability_line`,
 * `bin_points`, `bin_counts`, `source_lines`, `source_points`), so the SVG can be checked mark by mark.
 */
export async function reliabilitySvg(calibration: Calibration, bySource: SourceCalibrations | null = null): Promise<string> {
  const { vega, vegaLite } = await loadChartLibraries();
  const binsOf = (c: Calibration) =>
    c.bins
      .filter((bin) => bin.count > 0)
      .map((bin) => ({ lower: bin.lower, upper: bin.upper, confidence: bin.meanConfidence, accuracy: bin.accuracy, count: bin.count }));
  const bins = binsOf(calibration);
  // With samples the run's own confidence is the vote's, not what the model wrote.
  const kind = bySource === null ? 'self-reported confidence' : 'confidence';
  const confidence = { field: 'confidence', type: 'quantitative', scale: { domain: [0, 1] }, title: `${kind} (mean per bin)` };
  const accuracy = { field: 'accuracy', type: 'quantitative', scale: { domain: [0, 1] }, title: 'accuracy' };
  const title = `Reliability: ECE ${calibration.ece.toFixed(3)}, Brier ${calibration.brier.toFixed(3)}, n = ${calibration.count}`;
  const coinciding = bySource === null ? null : coincidingSources(bySource);
  const sourceBins = bySource === null ? [] : CONFIDENCE_SOURCES.flatMap((source) => binsOf(bySource[source]).map((bin) => ({ source, ...bin })));
  // The same field and legend for colour, dashes and shape: Vega-Lite draws one legend of all three.
  const bySourceChannel = (range: readonly unknown[]) => ({
    field: 'source',
    type: 'nominal',
    scale: { domain: [...CONFIDENCE_SOURCES], range },
    legend: { title: 'confidence from', orient: 'bottom-right' },
  });
  const sourceColor = bySourceChannel(SOURCE_COLORS);
  const sourceLayers =
    bySource === null
      ? []
      : [
          {
            name: 'source_lines',
            data: { values: sourceBins },
            mark: { type: 'line', strokeWidth: 1.5 },
            encoding: {
              x: confidence,
              y: accuracy,
              order: { field: 'confidence', type: 'quantitative' },
              color: sourceColor,
              strokeDash: bySourceChannel(SOURCE_DASHES),
            },
          },
          {
            name: 'source_points',
            data: { values: sourceBins },
            mark: { type: 'point', size: 40, filled: false, strokeWidth: 1.5, opacity: 1 },
            encoding: {
              x: confidence,
              y: accuracy,
              color: sourceColor,
              shape: bySourceChannel(SOURCE_SHAPES),
              tooltip: [
                { field: 'source' },
                { field: 'count', title: 'answers' },
                { field: 'accuracy', format: '.3f' },
                { field: 'confidence', format: '.3f' },
              ],
            },
          },
        ];
  const spec = vegaLite.compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title:
      bySource === null
        ? title
        : {
            text: title,
            subtitle: [
              'red: each result\'s own confidence; thin lines: each source on the results with samples',
              CONFIDENCE_SOURCES.map((source) => `${source} ECE ${bySource[source].ece.toFixed(3)}, Brier ${bySource[source].brier.toFixed(3)}`).join(' · '),
              ...(coinciding === null ? [] : [coinciding]),
            ],
          },
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
          ...sourceLayers,
        ],
      },
      {
        name: 'bin_counts',
        width: CHART.width,
        height: CHART.histogramHeight,
        data: { values: bins },
        mark: { type: 'bar', color: '#7f8c8d', stroke: '#ffffff', strokeWidth: 1 },
        encoding: {
          x: { field: 'lower', type: 'quantitative', scale: { domain: [0, 1] }, title: `${kind} (bin)` },
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
