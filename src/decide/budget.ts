import { numberText } from '../util/numbers.js';
import type { Usage } from './usage.js';

/**
 * What a check may spend, over every attempt, sample, call retry and model of a cascade.
 * Each limit is optional; null means none.
 */
export interface Budget {
  readonly maxCalls: number | null;
  readonly maxTokens: number | null;
  readonly maxCostUsd: number | null;
}

/** What a run has spent so far, as the machine counts it. */
export interface Spent {
  /** Calls started: attempts, call retries, samples. */
  readonly calls: number;
  /** Calls that replied with text: each should have reported its usage. */
  readonly replies: number;
  /** Usage reports received. */
  readonly reports: number;
  /** Those of them that gave a cost; all of them when not counted. A cost budget needs every report's. */
  readonly priced?: number;
  /** The usage reported, summed; null when none was. */
  readonly usage: Usage | null;
}

/**
 * Why the next call may not start, in words, or null when it may. A call budget is exact.
 * Tokens and cost are only known after a call, so the next call — and each of the `inFlight`
 * calls started and not yet answered, such as a wave of samples — is expected to cost what the
 * calls so far cost on average. Before any call has reported there is no average: the first
 * call, or the first wave of samples, starts whatever it will cost. A token or cost budget
 * cannot be kept when a call replied without reporting what it used (or its cost): the run
 * stops there rather than spend blind.
 */
export function budgetStop(budget: Budget | null, spent: Spent, inFlight = 0): string | null {
  if (budget === null) return null;
  const { maxCalls, maxTokens, maxCostUsd } = budget;
  if (maxCalls !== null && spent.calls + 1 > maxCalls) return `the budget of ${plural(maxCalls, 'call')} is spent`;
  if (maxTokens === null && maxCostUsd === null) return null;
  if (spent.replies > spent.reports) {
    return `usage is unknown: a call replied without reporting what it used (info.reportUsage), or its stream was ended early, before the provider reported it, so the budget of ${limits(budget)} cannot be kept`;
  }
  const { usage, reports } = spent;
  if (usage === null || reports === 0) return null;
  const projected = (used: number) => used + (used / reports) * (inFlight + 1);
  // A report's total is taken as given, but never below its input and output: a total of 0 would make every call free.
  const tokens = Math.max(usage.totalTokens, usage.inputTokens + usage.outputTokens);
  if (maxTokens !== null && projected(tokens) > maxTokens) {
    return `the budget of ${plural(maxTokens, 'token')} would be passed: ${tokens} used, about ${Math.round(tokens / reports)} a call`;
  }
  if (maxCostUsd !== null) {
    // A report without a cost adds nothing to the sum: one such call (an unpriced model of a cascade, say) would be spent as free.
    if (usage.costUsd === null || (spent.priced ?? reports) < reports) {
      return `cost is unknown: a call reported tokens but no cost, so the budget of $${numberText(maxCostUsd)} cannot be kept`;
    }
    if (projected(usage.costUsd) > maxCostUsd) {
      return `the budget of $${numberText(maxCostUsd)} would be passed: $${numberText(usage.costUsd)} spent, about $${numberText(usage.costUsd / reports)} a call`;
    }
  }
  return null;
}

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

function limits({ maxTokens, maxCostUsd }: Budget): string {
  return [maxTokens === null ? null : plural(maxTokens, 'token'), maxCostUsd === null ? null : `$${numberText(maxCostUsd)}`].filter(Boolean).join(' and ');
}
