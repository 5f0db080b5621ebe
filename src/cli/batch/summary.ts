import { REPAIRED, VERIFIED } from '../../decide/constants.js';
import { totalUsage, type Usage, usageFromReport } from '../../decide/usage.js';

/** The summary a batch prints: counts by status and method, latencies, usage, from its result lines. */

/** What one result line counts for in the summary. */
export interface Tally {
  readonly status: string;
  readonly method: string;
  readonly attempts: number;
  readonly latencyMs: number | null;
  /** Calls that threw or timed out, retries of a failed call included. */
  readonly failedCalls: number;
  /** Replies that came back but held no usable JSON object; when sampling, each sample is a reply. */
  readonly unparseable: number;
  /** Every call of the check failed: the model was never heard. */
  readonly everyCallFailed: boolean;
  /** What its calls consumed; null when none reported usage. */
  readonly usage: Usage | null;
}

export interface BatchSummary {
  /** Questions in the input. */
  readonly total: number;
  /** Questions that already had a result before this run. */
  readonly skipped: number;
  /** Questions whose earlier result (every call failed) was dropped to be checked again. */
  readonly redone: number;
  /** Questions checked by this run. */
  readonly checked: number;
  readonly stopped: boolean;
  /** This run checked questions and every model call of every one failed: an outage, not bad replies. */
  readonly outage: boolean;
  /** From here on, every result the output holds for the input's questions, earlier runs included. */
  readonly results: number;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly byMethod: Readonly<Record<string, number>>;
  readonly meanAttempts: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly failedCalls: number;
  readonly everyCallFailed: number;
  readonly unparseable: number;
  /** The usage of every result that reported some; null when none did: unknown, not zero. */
  readonly usage: Usage | null;
  /** Results whose calls reported usage: fewer than `results` when some reported none, e.g. lines of a run before usage was counted. */
  readonly resultsWithUsage: number;
  /** Of those, the VERIFIED and REPAIRED: what `usage` bought. */
  readonly acceptedWithUsage: number;
  /** `--total-budget-usd` stopped starting questions; absent when it did not (or was not given). */
  readonly budgetStop?: BudgetStop | undefined;
}

/** How `--total-budget-usd` stopped a batch: spent, or the spend unknown (a call reported no usage). */
export interface BudgetStop {
  readonly reason: 'spent' | 'unknown';
  /** Questions this run did not start. */
  readonly notStarted: number;
  /** What this run's calls cost when it stopped starting (the checks in flight add theirs). */
  readonly spentUsd: number;
  readonly limitUsd: number;
}

/** `unheard`: of the `checked` questions, those for which every model call failed. */
export function summarize(total: number, skipped: number, redone: number, checked: number, stopped: boolean, tallies: readonly Tally[], unheard = 0): BatchSummary {
  const byStatus: Record<string, number> = {};
  const byMethod: Record<string, number> = {};
  for (const tally of tallies) {
    byStatus[tally.status] = (byStatus[tally.status] ?? 0) + 1;
    byMethod[tally.method] = (byMethod[tally.method] ?? 0) + 1;
  }
  sortByStatus(byStatus);
  const latencies = tallies.flatMap((t) => (t.latencyMs === null ? [] : [t.latencyMs])).sort((a, b) => a - b);
  const sum = (pick: (t: Tally) => number) => tallies.reduce((n, t) => n + pick(t), 0);
  const reported = tallies.filter((t) => t.usage !== null);
  return {
    total,
    skipped,
    redone,
    checked,
    stopped,
    outage: checked > 0 && unheard === checked,
    results: tallies.length,
    byStatus,
    byMethod,
    meanAttempts: tallies.length ? sum((t) => t.attempts) / tallies.length : 0,
    p50Ms: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
    failedCalls: sum((t) => t.failedCalls),
    everyCallFailed: sum((t) => (t.everyCallFailed ? 1 : 0)),
    unparseable: sum((t) => t.unparseable),
    usage: totalUsage(reported.map((t) => t.usage)),
    resultsWithUsage: reported.length,
    acceptedWithUsage: reported.filter((t) => t.status === VERIFIED || t.status === REPAIRED).length,
  };
}

/** The summary's view of a result line; null for a line that is not a result. */
export function tallyOf(row: Record<string, unknown>): Tally | null {
  const { status, method, attempts, latencyMs, usage } = row;
  if (typeof status !== 'string' || typeof method !== 'string' || !Array.isArray(attempts)) return null;
  let failedCalls = 0;
  let unparseable = 0;
  let allFailed = attempts.length > 0;
  for (const attempt of attempts as Array<Record<string, unknown>>) {
    const samples = attempt?.['samples'];
    // A skipped sample's call was aborted once the vote was settled: not a failed call, not an unparseable reply.
    const skipped = Array.isArray(samples) ? (samples as Array<Record<string, unknown>>).filter((sample) => sample?.['skipped'] === true) : [];
    const tries = Array.isArray(attempt?.['callTries']) ? (attempt['callTries'] as Array<{ error?: unknown }>) : null;
    const skippedTries = skipped.reduce((n, sample) => n + (Array.isArray(sample['callTries']) ? (sample['callTries'] as Array<{ error?: unknown }>).filter((t) => t?.error !== null && t?.error !== undefined).length : 0), 0);
    const failedTries = Math.max(0, (tries ? tries.filter((t) => t?.error !== null && t?.error !== undefined).length : 0) - skippedTries);
    if (attempt?.['callFailed'] === true) failedCalls += Math.max(1, failedTries);
    else {
      failedCalls += failedTries;
      allFailed = false;
      if (Array.isArray(samples)) {
        for (const sample of samples as Array<Record<string, unknown>>) if (sample?.['callFailed'] !== true && sample?.['parseOk'] !== true && sample?.['skipped'] !== true) unparseable += 1;
      } else if (attempt?.['parseOk'] !== true) unparseable += 1;
    }
  }
  return {
    status,
    method,
    attempts: attempts.length,
    latencyMs: typeof latencyMs === 'number' ? latencyMs : null,
    failedCalls,
    unparseable,
    everyCallFailed: allFailed,
    usage: usageOfRow(usage),
  };
}

/**
 * A result line's usage; null when the line has none: no call reported any, or it was
 * written before usage was counted. A value edited into nonsense counts as not reported,
 * as a malformed latency does, rather than stopping the summary.
 */
function usageOfRow(value: unknown): Usage | null {
  if (value === null || value === undefined) return null;
  try {
    return usageFromReport(value);
  } catch {
    return null;
  }
}

const STATUS_ORDER = ['VERIFIED', 'REPAIRED', 'AMBIGUOUS', 'UNCERTAIN', 'BLOCKED'];

/** Keeps the counts in the order statuses are documented, whatever came first. */
export function sortByStatus(counts: Record<string, number>): void {
  const entries = Object.entries(counts).sort(([a], [b]) => STATUS_ORDER.indexOf(a) - STATUS_ORDER.indexOf(b));
  for (const [status] of entries) delete counts[status];
  for (const [status, n] of entries) counts[status] = n;
}

/** The value at or above `p` of a sorted list (nearest rank); 0 for an empty one. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}
