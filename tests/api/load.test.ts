import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acheck, check } from '../../src/index.js';
import { envelope } from '../fixtures/helpers.js';

/**
 * Many checks at once and many in a row: results never cross between prompts, every abort
 * rejects with its own reason, nothing is left unhandled, and nothing is retained.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap in use once garbage is gone; several passes, since one may leave finalizable objects. */
async function settledHeap(): Promise<number> {
  for (let pass = 0; pass < 4; pass += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeAll(() => void process.on('unhandledRejection', onUnhandled));
afterAll(() => void process.off('unhandledRejection', onUnhandled));

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const idOf = (prompt: string) => Number(/question (\d+)\b/.exec(prompt)?.[1]);

type Plan = 'plain' | 'failsFirst' | 'lowFirst' | 'abortedBefore' | 'abortedInCall' | 'abortedInOnAttempt';
const PLANS: readonly Plan[] = ['plain', 'failsFirst', 'lowFirst', 'abortedBefore', 'abortedInCall', 'abortedInOnAttempt'];

/** One check of the load test: what it does is drawn at random, what it must give follows from that. */
function runOne(id: number, plan: Plan) {
  const controller = new AbortController();
  const reason = new Error(`abort ${id}`);
  if (plan === 'abortedBefore') controller.abort(reason);
  const callFn = async (prompt: string, { attempt, signal }: { attempt: number; signal?: AbortSignal }) => {
    expect(idOf(prompt)).toBe(id);
    if (plan === 'abortedInCall') {
      setTimeout(() => controller.abort(reason), Math.random() * 20);
      return new Promise<string>(() => {}); // never settles: acheck must not wait for it
    }
    await sleep(Math.random() * 20);
    expect(signal?.aborted).toBe(false);
    if (plan === 'failsFirst' && attempt === 0) throw new Error(`transient ${id}`);
    if (plan === 'lowFirst' && attempt === 0) return envelope(`answer ${id}`, 0.2);
    return envelope(`answer ${id}`, 0.9);
  };
  const onAttempt = async () => {
    if (plan === 'abortedInOnAttempt') controller.abort(reason);
    await sleep(Math.random() * 5);
  };
  const settled = acheck(callFn, `question ${id}`, { signal: controller.signal, onAttempt }).then(
    (result) => ({ result, rejection: undefined }),
    (rejection: unknown) => ({ result: undefined, rejection }),
  );
  return settled.then(({ result, rejection }) => {
    if (plan.startsWith('aborted')) {
      expect(rejection).toBe(reason);
      return;
    }
    expect(rejection).toBeUndefined();
    expect(result?.answer).toBe(`answer ${id}`);
    expect(result?.status).toBe(plan === 'plain' ? 'VERIFIED' : 'REPAIRED');
    expect(result?.attempts.at(-1)?.answer).toBe(`answer ${id}`);
  });
}

describe('load', () => {
  it('10 000 concurrent acheck() calls with random delays, failures and aborts each settle as their own', { timeout: 120_000 }, async () => {
    // Warm up so the baseline holds what the first run would otherwise allocate once.
    await Promise.all(PLANS.map((plan, i) => runOne(i, plan)));
    const baseline = await settledHeap();
    const plans = Array.from({ length: 10_000 }, () => PLANS[Math.floor(Math.random() * PLANS.length)]!);
    await Promise.all(plans.map((plan, id) => runOne(id, plan)));
    for (const plan of PLANS) expect(plans.filter((p) => p === plan).length).toBeGreaterThan(1_000);
    await sleep(50); // aborts scheduled from calls that were already abandoned fire here
    expect(unhandled).toEqual([]);
    const grown = (await settledHeap()) - baseline;
    if (process.env.BOOTH_PRINT_HEAP) console.log(`heap grew ${(grown / MB).toFixed(3)} MB`);
    expect(grown, `heap grew ${(grown / MB).toFixed(2)} MB`).toBeLessThan(2 * MB);
  });

  it('50 000 sequential checks grow the heap by less than 1 MB after GC', { timeout: 120_000 }, async () => {
    const reply = envelope('Paris', 0.9);
    const low = envelope('Lyon', 0.2);
    for (let i = 0; i < 1_000; i += 1) check(({ length }) => (length % 2 ? reply : low), 'warm-up');
    const baseline = await settledHeap();
    for (let i = 0; i < 25_000; i += 1) {
      const result = check((_prompt, { attempt }) => (attempt === 0 && i % 2 ? low : reply), `question ${i}`);
      if (result.answer !== 'Paris') throw new Error(`check ${i} answered ${result.answer}`);
    }
    for (let i = 0; i < 25_000; i += 1) {
      const result = await acheck(async (_prompt, { attempt }) => (attempt === 0 && i % 2 ? low : reply), `question ${i}`);
      if (result.answer !== 'Paris') throw new Error(`acheck ${i} answered ${result.answer}`);
    }
    const grown = (await settledHeap()) - baseline;
    if (process.env.BOOTH_PRINT_HEAP) console.log(`heap grew ${(grown / MB).toFixed(3)} MB`);
    expect(grown, `heap grew ${(grown / MB).toFixed(2)} MB`).toBeLessThan(1 * MB);
  });
});
