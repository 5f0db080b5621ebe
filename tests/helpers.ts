export { envelope, type ScriptStep as Step, scriptedModel as scripted } from '../src/testing.js';

/**
 * What two runs of the same script must agree on: everything but the durations (the
 * attempts' and the result's), which are measurements of the clock, not decisions. Accepts
 * a result, its JSON, or attempts.
 */
export function decided<T>(value: T): T {
  const zero = (attempt: { durationMs?: number }) => ({ ...attempt, durationMs: 0 });
  if (Array.isArray(value)) return value.map(zero) as T;
  const json = (value as { toJSON?: () => unknown }).toJSON?.() ?? value;
  const record = json as { attempts?: Array<{ durationMs?: number }> };
  return (Array.isArray(record.attempts) ? { ...record, ...('durationMs' in record ? { durationMs: 0 } : {}), attempts: record.attempts.map(zero) } : json) as T;
}
