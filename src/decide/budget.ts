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
  /** The usage reported, summed; null when none was. */
  readonly usage: Usage | null;
  /** Calls started that have not answered yet (samples side by side): each will cost about the average too. */
  readonly inFlight?: number;
}

/**
 * Why the next call may not start, in words, or null when it may. A call budget is exact.
 * Tokens and cost are only known after a call, so the next call — and each call still in
 * flight beside it — is expected to cost what the calls so far cost on average: the limit
 * can be passed by at most one call that costs more than the average. A token or cost budget
 * cannot be kept when a call replied without reporting what it used (or its cost): the run
 * stops there rather than spend blind.
 */
export function budgetStop(budget: Budget | null, spent: Spent): string | null {
  if (budget === null) return null;
  const { maxCalls, maxTokens, maxCostUsd } = budget;
  if (maxCalls !== null && spent.calls + 1 > maxCalls) return `the budget of ${plural(maxCalls, 'call')} is spent`;
  if (maxTokens === null && maxCostUsd === null) return null;
  if (spent.replies > spent.reports) {
    return `usage is unknown: a call replied without reporting what it used (info.reportUsage), so the budget of ${limits(budget)} cannot be kept`;
  }
  const { usage, reports } = spent;
  if (usage === null || reports === 0) return null;
  const calls = 1 + (spent.inFlight ?? 0);
  if (maxTokens !== null && projected(usage.totalTokens, reports, calls) > maxTokens) {
    return `the budget of ${plural(maxTokens, 'token')} would be passed: ${usage.totalTokens} used, about ${Math.round(usage.totalTokens / reports)} a call`;
  }
  if (maxCostUsd !== null) {
    if (usage.costUsd === null) return `cost is unknown: the calls reported tokens but no cost, so the budget of $${numberText(maxCostUsd)} cannot be kept`;
    if (projected(usage.costUsd, reports, calls) > maxCostUsd) {
      return `the budget of $${numberText(maxCostUsd)} would be passed: $${numberText(usage.costUsd)} spent, about $${numberText(usage.costUsd / reports)} a call`;
    }
  }
  return null;
}

/** What was used, and `calls` more (the next, and those in flight) at the average so far. */
const projected = (used: number, reports: number, calls: number) => used + (used / reports) * calls;

const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;

function limits({ maxTokens, maxCostUsd }: Budget): string {
  return [maxTokens === null ? null : plural(maxTokens, 'token'), maxCostUsd === null ? null : `$${numberText(maxCostUsd)}`].filter(Boolean).join(' and ');
}
