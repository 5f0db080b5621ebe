import type { AnyBoothResult } from '../results/result.js';
import { countText, durationText, usageText } from '../visualize/explain.js';
import type { BatchSummary } from './batch/summary.js';

/**
 * What the checks spent, in time and tokens, as `ask` and `batch` print it. Usage is null
 * when no call reported any: unknown, so nothing about tokens is printed, never a 0.
 */

/** `ask`: the check's duration, then its tokens when its calls reported usage; aligned with the lines above them. */
export function askSpentLines(result: Pick<AnyBoothResult, 'durationMs' | 'usage'>): string[] {
  return [`duration    ${durationText(result.durationMs)}`, ...(result.usage === null ? [] : [`tokens      ${usageText(result.usage)}`])];
}

/**
 * `batch`: the tokens of every result in the output, and per accepted answer. When only some
 * results reported usage, both say so, and the share is over those: counting the accepted
 * answers whose tokens are unknown would make each answer look cheaper than it was.
 */
export function batchSpentLines(summary: Pick<BatchSummary, 'results' | 'usage' | 'resultsWithUsage' | 'acceptedWithUsage'>): string[] {
  const { results, usage, resultsWithUsage, acceptedWithUsage } = summary;
  if (usage === null) return [];
  const partial = resultsWithUsage < results;
  return [
    `tokens ${usageText(usage)}${partial ? ` (usage reported by ${resultsWithUsage} of ${results} results)` : ''}`,
    acceptedWithUsage === 0
      ? `tokens per accepted answer — (none accepted${partial ? ' among those' : ''})`
      : `tokens per accepted answer ${countText(usage.totalTokens / acceptedWithUsage)} (${acceptedWithUsage} accepted${partial ? ' among those' : ''})`,
  ];
}
