import { describeValue } from '../util/values.js';

/** Tokens (and, when the provider prices them, dollars) that model calls consumed. */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** As the provider counts it; `inputTokens + outputTokens` when it did not say. */
  readonly totalTokens: number;
  /** Null unless some call reported a cost. */
  readonly costUsd: number | null;
}

/** What a `callFn` reports through `info.reportUsage()`, usually straight from the provider's reply. */
export interface UsageReport {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens?: number | null | undefined;
  readonly costUsd?: number | null | undefined;
}

/**
 * A report checked and completed. A wrong report throws inside the `callFn` that made it,
 * so it fails that call (recorded in its attempt) instead of corrupting every sum after it.
 */
export function usageFromReport(report: unknown): Usage {
  if (typeof report !== 'object' || report === null) {
    throw new TypeError(`Expected \`reportUsage\` to be given { inputTokens, outputTokens }, got ${describeValue(report)}.`);
  }
  const { inputTokens, outputTokens, totalTokens, costUsd } = report as Record<string, unknown>;
  const count = (name: string, value: unknown): number => {
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
    throw new TypeError(`Expected \`${name}\` given to \`reportUsage\` to be a whole number of tokens, 0 or more, got ${describeValue(value)}.`);
  };
  const input = count('inputTokens', inputTokens);
  const output = count('outputTokens', outputTokens);
  const total = totalTokens === undefined || totalTokens === null ? input + output : count('totalTokens', totalTokens);
  if (costUsd !== undefined && costUsd !== null && !(typeof costUsd === 'number' && Number.isFinite(costUsd) && costUsd >= 0)) {
    throw new TypeError(`Expected \`costUsd\` given to \`reportUsage\` to be a finite number of dollars, 0 or more, got ${describeValue(costUsd)}.`);
  }
  return Object.freeze({ inputTokens: input, outputTokens: output, totalTokens: total, costUsd: (costUsd as number | null | undefined) ?? null });
}

/** Whether `value` is a `Usage` as Booth keeps one: what a saved checkpoint must hold, if anything. */
export function isUsage(value: unknown): value is Usage {
  if (typeof value !== 'object' || value === null) return false;
  const { inputTokens, outputTokens, totalTokens, costUsd } = value as Record<string, unknown>;
  const count = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  return count(inputTokens) && count(outputTokens) && count(totalTokens) && (costUsd === null || (typeof costUsd === 'number' && Number.isFinite(costUsd) && costUsd >= 0));
}

/** `a + b`; a cost is known once either side knows one. */
export function addUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (a === null) return b;
  if (b === null) return a;
  return Object.freeze({
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    costUsd: a.costUsd === null ? b.costUsd : b.costUsd === null ? a.costUsd : a.costUsd + b.costUsd,
  });
}

/** The sum of the usages given; null when none was reported. */
export function totalUsage(usages: Iterable<Usage | null>): Usage | null {
  let total: Usage | null = null;
  for (const usage of usages) total = addUsage(total, usage);
  return total;
}
