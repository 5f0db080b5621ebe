import { describe, expect, it } from 'vitest';
import { acheck } from '../../src/index.js';
import {
  auroc,
  type BilledCall,
  DEFAULT_PARAMS,
  draw,
  floorSamples,
  mulberry32,
  population,
  populationStats,
  prices,
  simulatedModel,
  tokensOf,
} from '../../bench/spend-sim.js';

/**
 * The simulation `npm run bench:spend` measures on (bench/spend-sim.ts): deterministic for a
 * seed, and its population what docs/spend.md says it is, so the page's claims are backed.
 */

const info = (attempt: number, extra: Record<string, unknown> = {}) => ({ attempt, ...extra });

describe('the spend simulation', () => {
  it('mulberry32 is seeded: the same seed, the same stream; another seed, another', () => {
    const a = mulberry32(7);
    const b = mulberry32(7);
    const c = mulberry32(8);
    const first = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(first);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(first);
    expect(first.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('builds the same population for a seed, and another for another seed', () => {
    const params = { ...DEFAULT_PARAMS, questions: 200 };
    expect(population(params)).toEqual(population(params));
    expect(population({ ...params, seed: 31 }).map((q) => q.difficulty)).not.toEqual(population(params).map((q) => q.difficulty));
  });

  it('draws each call from (question, model, sample, attempt) alone', () => {
    const [q] = population({ ...DEFAULT_PARAMS, questions: 1 });
    expect(draw(DEFAULT_PARAMS, q!, 'cheap', 3, 0)).toEqual(draw(DEFAULT_PARAMS, q!, 'cheap', 3, 0));
    const many = (model: 'cheap' | 'strong', attempt: number) => Array.from({ length: 20 }, (_, s) => draw(DEFAULT_PARAMS, q!, model, s, attempt).reply);
    expect(many('cheap', 0)).not.toEqual(many('cheap', 1));
    expect(many('cheap', 0)).not.toEqual(many('strong', 0));
  });

  it('has the population docs/spend.md describes (seed 30, 2 000 questions)', () => {
    const stats = populationStats(DEFAULT_PARAMS, population(DEFAULT_PARAMS));
    expect(stats.hardShare).toBeCloseTo(0.3, 1);
    // One sample's accuracy, within a point of what the page states.
    expect(stats.cheap.easy.accuracy).toBeGreaterThan(0.88);
    expect(stats.cheap.easy.accuracy).toBeLessThan(0.9);
    expect(stats.cheap.hard.accuracy).toBeGreaterThan(0.4);
    expect(stats.cheap.hard.accuracy).toBeLessThan(0.42);
    expect(stats.cheap.all.accuracy).toBeGreaterThan(0.735);
    expect(stats.cheap.all.accuracy).toBeLessThan(0.755);
    expect(stats.strong.easy.accuracy).toBeGreaterThan(0.965);
    expect(stats.strong.easy.accuracy).toBeLessThan(0.98);
    expect(stats.strong.hard.accuracy).toBeGreaterThan(0.68);
    expect(stats.strong.hard.accuracy).toBeLessThan(0.7);
    expect(stats.strong.all.accuracy).toBeGreaterThan(0.88);
    expect(stats.strong.all.accuracy).toBeLessThan(0.895);
    // Unsure on hard questions: lower confidence there; confidence that tells right from wrong only moderately.
    expect(stats.cheap.hard.meanConfidence).toBeLessThan(stats.cheap.easy.meanConfidence - 0.08);
    expect(stats.cheap.easy.meanConfidence).toBeCloseTo(0.82, 2);
    expect(stats.cheap.hard.meanConfidence).toBeCloseTo(0.71, 2);
    expect(stats.cheap.all.auroc).toBeGreaterThan(0.74);
    expect(stats.cheap.all.auroc).toBeLessThan(0.78);
    expect(stats.strong.all.auroc).toBeGreaterThan(0.79);
    expect(stats.strong.all.auroc).toBeLessThan(0.83);
  });

  it('the population statistics are the model, not the luck of seed 30', () => {
    for (const seed of [1, 2, 3]) {
      const stats = populationStats({ ...DEFAULT_PARAMS, seed }, population({ ...DEFAULT_PARAMS, seed }));
      expect(Math.abs(stats.hardShare - 0.3)).toBeLessThan(0.03);
      expect(Math.abs(stats.cheap.all.accuracy - 0.744)).toBeLessThan(0.025);
      expect(Math.abs(stats.strong.all.accuracy - 0.887)).toBeLessThan(0.02);
    }
  });

  it('splits the cheap model on hard questions: its samples of a hard question disagree far more often', () => {
    const questions = population(DEFAULT_PARAMS);
    const split = (hard: boolean) => {
      const chosen = questions.filter((q) => q.hard === hard);
      const disagreeing = chosen.filter((q) => new Set(Array.from({ length: 5 }, (_, s) => draw(DEFAULT_PARAMS, q, 'cheap', s, 0).answer)).size > 1);
      return disagreeing.length / chosen.length;
    };
    expect(split(true)).toBeGreaterThan(0.85);
    expect(split(false)).toBeLessThan(0.45);
  });

  it('auroc: 1 for a perfect score, 0.5 for one that says nothing, ties counted half', () => {
    expect(auroc([0.1, 0.2, 0.8, 0.9], [false, false, true, true])).toBe(1);
    expect(auroc([0.5, 0.5, 0.5, 0.5], [false, true, false, true])).toBe(0.5);
    expect(auroc([0.9, 0.2, 0.8, 0.1], [false, false, true, true])).toBe(0.25);
  });

  it('the floors of the stopping rules: 3 of 5 exact, and at Beta 0.95 or 0.9 (which stop when the vote is decided too); 2 at 0.85', () => {
    expect(floorSamples(5, 'decided')).toBe(3);
    expect(floorSamples(5, 0.95)).toBe(3);
    expect(floorSamples(5, 0.9)).toBe(3);
    expect(floorSamples(5, 0.85)).toBe(2);
    expect(floorSamples(10, 'decided')).toBe(6);
    expect(floorSamples(10, 0.95)).toBe(4);
    // Never later than the exact rule: at max 3, two agreeing samples decide it.
    expect(floorSamples(3, 0.99)).toBe(2);
  });
});

describe('the simulated model as a callFn', () => {
  const [q] = population({ ...DEFAULT_PARAMS, questions: 1 });

  it('replies with the draw of its sample and its own attempt, and reports what it billed', async () => {
    const ledger: BilledCall[] = [];
    const reports: unknown[] = [];
    const call = simulatedModel(DEFAULT_PARAMS, q!, 'strong', ledger);
    // Called first at attempt 4 (as an escalated model may be): that is its own attempt 0.
    const reply = await call('a prompt of some length', info(4, { sample: 2, reportUsage: (u: unknown) => reports.push(u) }));
    const expected = draw(DEFAULT_PARAMS, q!, 'strong', 2, 0);
    expect(reply).toBe(expected.reply);
    const price = prices(DEFAULT_PARAMS, 'strong');
    const inputTokens = tokensOf('a prompt of some length');
    const costUsd = inputTokens * price.input + expected.outputTokens * price.output;
    expect(reports).toEqual([{ inputTokens, outputTokens: expected.outputTokens, costUsd }]);
    expect(ledger).toEqual([{ model: 'strong', sample: 2, attempt: 0, inputTokens, outputTokens: expected.outputTokens, costUsd, state: 'replied' }]);
    expect(await call('again', info(5, { sample: 2 }))).toBe(draw(DEFAULT_PARAMS, q!, 'strong', 2, 1).reply);
  });

  it('prices the strong model at priceRatio times the cheap one', () => {
    const cheap = prices(DEFAULT_PARAMS, 'cheap');
    const strong = prices(DEFAULT_PARAMS, 'strong');
    expect(strong.input / cheap.input).toBeCloseTo(10);
    expect(strong.output / cheap.output).toBeCloseTo(10);
  });

  it('a running call is in the ledger as pending, billed in full', async () => {
    const ledger: BilledCall[] = [];
    const call = simulatedModel(DEFAULT_PARAMS, q!, 'cheap', ledger);
    const pending = call('the prompt', info(0));
    const expected = draw(DEFAULT_PARAMS, q!, 'cheap', 0, 0);
    expect(ledger).toEqual([expect.objectContaining({ state: 'pending', outputTokens: expected.outputTokens })]);
    await pending;
    expect(ledger[0]!.state).toBe('replied');
  });

  it('an aborted call rejects at once with the reason, is billed its input tokens only, and reports nothing', async () => {
    const ledger: BilledCall[] = [];
    const reports: unknown[] = [];
    const controller = new AbortController();
    const call = simulatedModel({ ...DEFAULT_PARAMS, maxLatencyTurns: 1_000 }, q!, 'cheap', ledger);
    const pending = call('the prompt', info(0, { sample: 0, signal: controller.signal, reportUsage: (u: unknown) => reports.push(u) }));
    const reason = new Error('settled');
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort(reason);
    // Billed as aborted before the abort returns: a check that aborts its calls on the way out finds them settled.
    expect(ledger).toEqual([{ model: 'cheap', sample: 0, attempt: 0, inputTokens: tokensOf('the prompt'), outputTokens: 0, costUsd: tokensOf('the prompt') * prices(DEFAULT_PARAMS, 'cheap').input, state: 'aborted' }]);
    await expect(pending).rejects.toBe(reason);
    expect(reports).toEqual([]);
  });

  it('a call whose signal fired before it started sends nothing and costs nothing', async () => {
    const ledger: BilledCall[] = [];
    const call = simulatedModel(DEFAULT_PARAMS, q!, 'cheap', ledger);
    const reason = new Error('too late');
    await expect(call('p', info(0, { signal: AbortSignal.abort(reason) }))).rejects.toBe(reason);
    expect(ledger).toEqual([]);
  });

  it("through acheck() with samples: 5, the vote's winner is the majority of the five draws", async () => {
    const questions = population({ ...DEFAULT_PARAMS, questions: 40 });
    for (const question of questions) {
      const answers = Array.from({ length: 5 }, (_, s) => draw(DEFAULT_PARAMS, question, 'cheap', s, 0).answer);
      const counts = new Map<string, number>();
      for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
      const top = Math.max(...counts.values());
      const leaders = [...counts].filter(([, n]) => n === top).map(([a]) => a);
      const ledger: BilledCall[] = [];
      const result = await acheck(simulatedModel(DEFAULT_PARAMS, question, 'cheap', ledger), question.text, { samples: 5, maxRetries: 0 });
      expect(ledger).toHaveLength(5);
      expect(leaders).toContain(result.attempts[0]!.answer);
      if (leaders.length === 1) expect(result.attempts[0]!.answer).toBe(leaders[0]);
      expect(result.usage?.costUsd).toBeCloseTo(ledger.reduce((sum, c) => sum + c.costUsd, 0), 12);
    }
  });

  it('through acheck() with samples { max: 5, min: 5 }, the calls left when the vote is decided are aborted, marked skipped and billed their input', async () => {
    let aborted = 0;
    for (const question of population({ ...DEFAULT_PARAMS, questions: 40 })) {
      const ledger: BilledCall[] = [];
      const result = await acheck(simulatedModel(DEFAULT_PARAMS, question, 'cheap', ledger), question.text, { samples: { max: 5, min: 5 }, maxRetries: 0 });
      expect(ledger).toHaveLength(5);
      expect(ledger.filter((c) => c.state === 'pending')).toEqual([]);
      const skipped = result.attempts[0]!.samples!.filter((sample) => sample.skipped).length;
      expect(ledger.filter((c) => c.state === 'aborted')).toHaveLength(skipped);
      // Booth's usage is what the replies reported; the aborted calls' input is billed all the same.
      const replied = ledger.filter((c) => c.state === 'replied').reduce((sum, c) => sum + c.costUsd, 0);
      expect(result.usage?.costUsd ?? 0).toBeCloseTo(replied, 12);
      aborted += skipped;
    }
    expect(aborted).toBeGreaterThan(20);
  });
});
