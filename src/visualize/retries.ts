import type { Clarification, RetryKind, SentPrompt } from '../decide/prompts.js';
import type { Method } from '../results/result.js';

/**
 * The guard of `reconsidering → asking` that picks each retry kind, as the diagram labels
 * it (machines/checkpoint/machine.ts, state `reconsidering`; a test holds the two together).
 */
export const RETRY_GUARDS: Readonly<Record<RetryKind, string>> = {
  repeat: '[callFailed]',
  parse: '[parseFailed]',
  validation: '[failedValidation]',
  disagreement: '[isSplit]',
  confidence: '[else]',
};

/** The state where a run waits for the person who asked to clarify an ambiguous question. */
export const WAITING = 'awaitingClarification';

/**
 * The transitions of `awaitingClarification → asking`, as the diagram labels them: the person
 * chose a reading, or rephrased the question (machines/checkpoint/machine.ts; a test holds the two together).
 */
export const CLARIFY_EVENTS = { chose: 'clarify.chose [isOfferedReading]', rephrased: 'clarify.rephrased [isRephrasing]' } as const;

/** How often each transition of `awaitingClarification → asking` was taken, keyed by its diagram label. */
export function clarificationEventCounts(clarifications: readonly Clarification[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { rephrased } of clarifications) {
    const label = rephrased === null ? CLARIFY_EVENTS.chose : CLARIFY_EVENTS.rephrased;
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return counts;
}

/** The retry kinds a run took, in the order first taken, with how many times each. */
export function retryKindCounts(prompts: readonly SentPrompt[]): Map<RetryKind, number> {
  const counts = new Map<RetryKind, number>();
  // A clarification or an escalation starts a round; it is no retry.
  for (const { kind } of prompts.slice(1)) if (kind !== 'first' && kind !== 'clarification' && kind !== 'escalation') counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** How often each guard of `reconsidering → asking` was taken, keyed by its diagram label. */
export function retryGuardCounts(prompts: readonly SentPrompt[]): Map<string, number> {
  return new Map([...retryKindCounts(prompts)].map(([kind, n]) => [RETRY_GUARDS[kind], n]));
}

const METHOD_RETRY: Partial<Record<Method, RetryKind>> = { call_failure: 'repeat', parse_failure: 'parse', validation: 'validation', confidence: 'confidence' };
const REASON_NAMES: Readonly<Record<RetryKind, string>> = {
  repeat: 'call failure',
  parse: 'parse',
  validation: 'validation',
  disagreement: 'disagreement',
  confidence: 'confidence',
};

/**
 * Why the run retried, e.g. `parse ×1, validation ×1, confidence ×1`; null when it did
 * not retry, or only for the reason `method` already names — the header says it once.
 */
export function retryReasons(prompts: readonly SentPrompt[], method: Method): string | null {
  const counts = retryKindCounts(prompts);
  if ([...counts.keys()].every((kind) => kind === METHOD_RETRY[method])) return null;
  return [...counts].map(([kind, n]) => `${REASON_NAMES[kind]} ×${n}`).join(', ');
}
