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
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\p{P}\p{S}]/gu, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A reliability diagram — accuracy against confidence per bin, the diagonal of perfect
 * calibration behind it — drawn by Vega-Lite and rendered to SVG by Vega, headless.
 */
export async function reliabilitySvg(calibration: Calibration): Promise<string> {
  const vega = await import('vega');
  const vegaLite = await import('vega-lite');
  const points = calibration.bins
    .filter((bin) => bin.count > 0)
    .map((bin) => ({ confidence: bin.meanConfidence, accuracy: bin.accuracy, count: bin.count }));
  const spec = vegaLite.compile({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `Reliability: ECE ${calibration.ece.toFixed(3)}, Brier ${calibration.brier.toFixed(3)}, n = ${calibration.count}`,
    width: 360,
    height: 360,
    layer: [
      {
        data: { values: [{ x: 0, y: 0 }, { x: 1, y: 1 }] },
        mark: { type: 'line', strokeDash: [4, 4], color: '#999999' },
        encoding: {
          x: { field: 'x', type: 'quantitative', scale: { domain: [0, 1] }, title: 'self-reported confidence' },
          y: { field: 'y', type: 'quantitative', scale: { domain: [0, 1] }, title: 'accuracy' },
        },
      },
      {
        data: { values: points },
        mark: { type: 'line', point: true, color: '#c0392b' },
        encoding: {
          x: { field: 'confidence', type: 'quantitative' },
          y: { field: 'accuracy', type: 'quantitative' },
          size: { field: 'count', type: 'quantitative', title: 'answers' },
        },
      },
    ],
  } as Parameters<typeof vegaLite.compile>[0]).spec;
  return new vega.View(vega.parse(spec), { renderer: 'none' }).toSVG();
}
