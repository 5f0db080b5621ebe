/**
 * Retries of failed calls (network errors, 429 and 5xx responses), separate from
 * reconsideration: the same prompt again after a jittered exponential wait.
 */
export interface CallRetryPolicy {
  /** Further tries after a failed call, per attempt. */
  readonly retries: number;
  /** The first wait, before jitter. Default 500. */
  readonly minDelayMs?: number;
  /** No wait is longer, unless the error asks for it with `retryAfterMs`. Default 30 000. */
  readonly maxDelayMs?: number;
  /** Growth of the wait per try. Default 2. */
  readonly factor?: number;
}

/** One call to the model within an attempt. */
export interface CallTry {
  /** Why the call failed; null when it returned. */
  readonly error: string | null;
  /** How long Booth waited before the next try; null when there was none. */
  readonly delayMs: number | null;
  /**
   * Present when the call failed with a status no retry can fix (see `isTransient`): the
   * attempt, and the run, ended with it, retries left or not.
   */
  readonly permanent?: true;
}

/** Whether one of `tries` failed for good, which ends a run at once. */
export function failedForGood(tries: readonly CallTry[]): boolean {
  return tries.some((callTry) => callTry.permanent === true);
}

/**
 * The wait before try `failedTries + 1`: `minDelayMs · factor^(failedTries − 1)`, times a
 * jitter in [1, 2) so that many clients do not retry in step, capped at `maxDelayMs` —
 * the schedule p-retry uses. An error's own `retryAfterMs` (from a Retry-After header)
 * wins when it is longer. Written here rather than taken from p-retry because the wait
 * must be a state of the machine — visible in its diagram, cut short by the deadline,
 * cancelled by the signal — and p-retry owns its loop and its timer.
 */
export function backoffDelay(policy: CallRetryPolicy, failedTries: number, retryAfterMs: number | null, random: number): number {
  const { minDelayMs = 500, maxDelayMs = 30_000, factor = 2 } = policy;
  const exponential = Math.min(maxDelayMs, minDelayMs * factor ** Math.max(0, failedTries - 1) * (1 + random));
  // A provider's Retry-After can ask for longer than a timer can wait: Node would fire it at once.
  return Math.min(LONGEST_WAIT_MS, Math.round(Math.max(exponential, retryAfterMs ?? 0)));
}

/** The longest wait a timer can be armed for (2^31 - 1 ms, less one), about 24.8 days. */
export const LONGEST_WAIT_MS = 2 ** 31 - 2;

/** `retryAfterMs` carried by a thrown error, when it is a non-negative finite number. */
export function retryAfterOf(thrown: unknown): number | null {
  try {
    const value = (thrown as { retryAfterMs?: unknown } | null)?.retryAfterMs;
    return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
  } catch {
    return null;
  }
}

/**
 * Whether trying again could help: anything thrown, except an error whose `status` is a
 * 4xx other than 408 (timeout), 409 (conflict, often a lock) and 429 (rate limit): a bad
 * request, a bad key or a wrong URL stays bad, and ends the run at once.
 */
export function isTransient(thrown: unknown): boolean {
  let status: unknown;
  try {
    status = (thrown as { status?: unknown } | null)?.status;
  } catch {
    return true;
  }
  return !(typeof status === 'number' && status >= 400 && status < 500 && status !== 408 && status !== 409 && status !== 429);
}
