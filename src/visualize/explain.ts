import type { RunSettings } from '../../machines/checkpoint/types.js';
import type { Attempt } from '../decide/attempt.js';
import { type CallRetryPolicy, failedForGood } from '../decide/call-retries.js';
import { UNCERTAIN } from '../decide/constants.js';
import type { BoothResult } from '../results/result.js';
import type { Usage } from '../decide/usage.js';
import { numberText } from '../util/numbers.js';
import { redactUrls } from '../util/urls.js';
import { isWaiting, roundAt } from './clarifications.js';
import { promptKindName } from './sequence.js';

/**
 * Why an attempt was accepted or turned down, in the words a reader debugging a retry
 * wants: the gate that decided and the figures it compared. The same order as the
 * machine's gates, so the first failure named is the one that sent the run round again.
 * `sentOut`: the attempt's readings went to the person who asked (`readingsWentOut`).
 */
export function verdictOf(attempt: Attempt, settings: RunSettings | null, sentOut = false): string {
  // URLs redacted, as Booth's adapters write their errors: a callFn of the caller's own may quote a key.
  if (attempt.callFailed) return `call failed: ${attempt.error === null ? 'no reply' : redactUrls(attempt.error)}`;
  if (!attempt.parseOk) return `could not parse: ${attempt.error ?? 'no answer'}`;
  if (attempt.ambiguous) return sentOut ? 'ambiguous: its readings went to the person who asked' : 'ambiguous: returned at once';
  if (!attempt.passedValidation) {
    // The validator's message is kept verbatim, even empty; an empty one would read as no reason.
    return attempt.validationError ? `validator: ${attempt.validationError}` : 'validator: rejected, without a message';
  }
  const confidence = attempt.confidence ?? 0;
  if (settings === null) return `confidence ${numberText(confidence)}`;
  const validated = settings.validator ? 'validator passed, ' : '';
  // Rounded, a confidence a hair below the threshold would read as equal to it: then both are shown whole.
  const blurred = confidence !== settings.threshold && numberText(confidence) === numberText(settings.threshold);
  const [shown, threshold] = [confidence, settings.threshold].map(blurred ? String : numberText);
  return confidence >= settings.threshold
    ? `accepted (${validated}confidence ${shown} ≥ ${threshold})`
    : `confidence ${shown} below the threshold ${threshold}`;
}

/** An attempt's duration: milliseconds while they read easily, then seconds. */
export function durationText(ms: number): string {
  return ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Usage as a reader compares it across runs: `1,234 in / 56 out / 1,290 total`, then the cost when a call reported one. */
export function usageText(usage: Usage): string {
  const tokens = `${countText(usage.inputTokens)} in / ${countText(usage.outputTokens)} out / ${countText(usage.totalTokens)} total`;
  return usage.costUsd === null ? tokens : `${tokens}, cost ${costText(usage.costUsd)}`;
}

/** A count with thousands separators, whatever the machine's locale, so logs read the same everywhere. */
export function countText(n: number): string {
  return COUNT_FORMAT.format(n);
}

// Made once: toLocaleString builds a formatter per call, which a report of 10 000 runs felt (seconds).
const COUNT_FORMAT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });
const DOLLARS_FORMAT = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const CENTS_FORMAT = new Intl.NumberFormat('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 });

/** Dollars: a call often costs a fraction of a cent, which two decimals would show as $0.00. */
export function costText(usd: number): string {
  return `$${(usd >= 1 ? DOLLARS_FORMAT : CENTS_FORMAT).format(usd)}`;
}

/** The settings a check ran with, as name and value, `none` for timers not set; the sampling when there was any. */
export function settingsRows(settings: RunSettings): [string, string][] {
  const ms = (value: number | null) => (value === null ? 'none' : `${numberText(value)} ms`);
  return [
    ['threshold', numberText(settings.threshold)],
    ['maxRetries', `${settings.maxRetries} (at most ${settings.maxRetries + 1} attempts)`],
    ['validator', settings.validator ? 'yes' : 'none'],
    ['timeoutMs', ms(settings.timeoutMs)],
    ['deadlineMs', ms(settings.deadlineMs)],
    ['callRetries', callRetriesText(settings.callRetries)],
    // Only a sampled run names its sampling, so a one-sample page reads as it always did.
    ...(settings.samples > 1
      ? [
          ['samples', `${settings.samples} per attempt`],
          ['confidenceFrom', settings.confidenceFrom],
        ] satisfies [string, string][]
      : []),
  ];
}

/** The policy as the caller wrote it: the options left out take the documented defaults. */
function callRetriesText(policy: CallRetryPolicy | null): string {
  if (policy === null || policy.retries === 0) return 'none';
  const { retries, ...waits } = policy;
  const given = Object.entries(waits).map(([name, value]: [string, number]) => `${name} ${numberText(value)}`);
  return `${retries} per attempt${given.length > 0 ? ` (${given.join(', ')})` : ''}`;
}

/**
 * What Booth did after an attempt: the retry prompt it sent next, the clarified question, or
 * how the run ended. A clarification is known from the result's own record of it, so a batch
 * line that did not keep its prompts still names it.
 */
export function nextStep(result: BoothResult, index: number): string {
  if (roundAt(result, index + 1) !== undefined) return promptKindName('clarification');
  const next = result.prompts[index + 1];
  if (next !== undefined) return promptKindName(next.kind);
  if (isWaiting(result) && index === result.attempts.length - 1) return `${result.status}: waiting for the person who asked`;
  if (result.status !== UNCERTAIN) return result.status;
  const retriesLeft = result.settings !== null && index < result.settings.maxRetries;
  if (!retriesLeft) return 'UNCERTAIN: no retries left';
  return failedForGood(result.attempts[index]?.callTries ?? []) ? 'UNCERTAIN: a call failed with a status no retry can fix' : 'UNCERTAIN: out of time';
}
