import { expect, vi } from 'vitest';
import { acheck, type Checkpoint, CheckpointError, type CheckpointStore } from '../src/index.js';
import { envelope } from './helpers.js';

/** What the stored-run tests ask: the question and the replies of a run that needs a retry. */
export const QUESTION = 'Which city is the capital of France?';

type Saved = Checkpoint & { snapshot: { status: string; value: string; context: Record<string, unknown> & { prompts: unknown[] } } };

/** Leaves `key` in `store` saved after attempt 0 (Lyon, confidence 0.1), stopped while attempt 1 is called; returns the checkpoint as saved. */
export async function savedAfterFirstAttempt(store: CheckpointStore, key: string, options: { samples?: number } = {}): Promise<Saved> {
  const controller = new AbortController();
  const run = acheck(
    async (_prompt, { attempt, reportUsage }) => {
      reportUsage?.({ inputTokens: 5, outputTokens: 2 });
      if (attempt === 1) controller.abort(new Error('process going down'));
      return envelope('Lyon', 0.1);
    },
    QUESTION,
    { checkpoint: store, key, signal: controller.signal, callRetries: { retries: 1, minDelayMs: 1 }, ...options },
  );
  await expect(run).rejects.toThrow('process going down');
  return JSON.parse(JSON.stringify(await store.load(key))) as Saved;
}

/**
 * The forgery of issue 24: the run saved after its unconfident first attempt, marked as ended
 * VERIFIED on that attempt — confidence 0.1 against the threshold 0.7.
 */
export function forgedVerdict(saved: Saved): Saved {
  const forged = structuredClone(saved);
  forged.snapshot.status = 'done';
  forged.snapshot.value = 'verified';
  forged.snapshot.context['status'] = 'VERIFIED';
  forged.snapshot.context['attempt'] = 0;
  forged.snapshot.context.prompts = forged.snapshot.context.prompts.slice(0, 1);
  return forged;
}

/** Resuming `key` from `store` is a CheckpointError matching `message`, and no call is made. */
export async function refusedWithoutACall(store: CheckpointStore, key: string, message: RegExp | string): Promise<void> {
  const callFn = vi.fn(async () => envelope('Paris', 0.9));
  const run = acheck(callFn, QUESTION, { checkpoint: store, key, callRetries: { retries: 1, minDelayMs: 1 } });
  await expect(run).rejects.toBeInstanceOf(CheckpointError);
  await expect(run).rejects.toThrow(message);
  expect(callFn).not.toHaveBeenCalled();
}

/** Resuming `key` from `store` finishes the run: REPAIRED on the second attempt, which alone is called. */
export async function resumesToRepaired(store: CheckpointStore, key: string): Promise<void> {
  const calls: number[] = [];
  const result = await acheck(
    async (_prompt, { attempt }) => {
      calls.push(attempt);
      return envelope('Paris', 0.9);
    },
    QUESTION,
    { checkpoint: store, key, callRetries: { retries: 1, minDelayMs: 1 } },
  );
  expect(result.status).toBe('REPAIRED');
  expect(calls).toEqual([1]);
}

/** Every path of `value` below the root, with the value there: `attempts[0].confidence`. `skip` leaves a subtree out. */
export function pathsOf(value: unknown, skip: (path: string) => boolean, path = ''): Array<[string, unknown]> {
  const found: Array<[string, unknown]> = [];
  const children: Array<[string, unknown]> = Array.isArray(value)
    ? value.map((item, i) => [`${path}[${i}]`, item])
    : typeof value === 'object' && value !== null
      ? Object.entries(value).map(([key, item]) => [path === '' ? key : `${path}.${key}`, item])
      : [];
  for (const [at, item] of children) {
    if (skip(at)) continue;
    found.push([at, item]);
    found.push(...pathsOf(item, skip, at));
  }
  return found;
}

/** A value of another type than `value`, hostile where it can be: markup where a number or an object was. */
export function wrongType(value: unknown): unknown {
  if (typeof value === 'number' || (typeof value === 'object' && value !== null)) return '<img src=x onerror="document.title=\'pwned\'">';
  if (typeof value === 'string') return 1;
  if (typeof value === 'boolean') return 'true';
  return { '<b>': 1 };
}

/** `root` with the value at `path` replaced. */
export function withValueAt<T>(root: T, path: string, value: unknown): T {
  const copy = structuredClone(root) as Record<string, unknown>;
  const keys = [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => m[1] ?? Number(m[2]));
  let holder: Record<string | number, unknown> = copy;
  for (const key of keys.slice(0, -1)) holder = holder[key] as Record<string | number, unknown>;
  holder[keys.at(-1)!] = value;
  return copy as T;
}
