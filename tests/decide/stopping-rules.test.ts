import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attemptFromReply } from '../../src/decide/attempt.js';
import { defaultAgree } from '../../src/decide/agreement.js';
import { isSettled, leaderBeats, NO_VOTES, nextWave, tallyOf, votedAttempt, type VoteSettings } from '../../src/decide/sampling.js';
import { budgetStop } from '../../src/decide/budget.js';
import { envelope } from '../fixtures/helpers.js';

/** When adaptive samples stop, and when a budget refuses the next call: the rules the machine's guards ask. */

const settings: VoteSettings = { typed: false, agree: defaultAgree(false), confidenceFrom: 'hybrid' };
const reply = (answer: string, ambiguous = false) =>
  attemptFromReply(envelope(answer, 0.9, ambiguous ? { ambiguous: true, interpretations: ['a', 'b'] } : {}), [], false);

describe('the exact rule (stop: decided)', () => {
  it('settles once the leader is ahead by more than the samples left', () => {
    expect(isSettled(tallyOf([reply('A'), reply('A'), reply('A')], settings), 2, 'decided')).toBe(true);
    expect(isSettled(tallyOf([reply('A'), reply('A')], settings), 3, 'decided')).toBe(false);
    expect(isSettled(tallyOf([reply('A'), reply('A'), reply('B')], settings), 2, 'decided')).toBe(false);
    expect(isSettled(tallyOf([reply('A'), reply('A'), reply('A'), reply('B')], settings), 1, 'decided')).toBe(true);
  });

  it('counts an ambiguous cluster as a rival: plain samples joining it can make it win', () => {
    // A 4, B 1 and the question's own answer 3 times, said ambiguous: two plain ones more and that answer wins 5–4.
    const done = [...['A', 'A', 'A', 'A', 'B'].map((a) => reply(a)), reply('Lyon', true), reply('Lyon', true), reply('Lyon', true)];
    expect(isSettled(tallyOf(done, settings), 2, 'decided')).toBe(false);
    expect(votedAttempt([...done, reply('Lyon'), reply('Lyon')], settings).answer).toBe('Lyon');
    // The Beta rule weighs it too: 4–3 is P = 0.64, where 4–1 would have been 0.89.
    expect(isSettled(tallyOf(done, settings), 2, { confidence: 0.7 })).toBe(false);
  });

  it('with no sample left, the vote is what it is', () => {
    expect(isSettled(tallyOf([reply('A'), reply('B')], settings), 0, 'decided')).toBe(true);
    expect(isSettled(tallyOf([reply('A'), reply('B')], settings), 0, { confidence: 0.95 })).toBe(true);
  });

  it('settles an ambiguity majority no remaining sample can overturn, and waits while one could', () => {
    const all = [reply('X', true), reply('Y', true), reply('Z', true)];
    expect(isSettled(tallyOf(all, settings), 2, 'decided')).toBe(true);
    expect(isSettled(tallyOf(all, settings), 3, 'decided')).toBe(false);
  });

  it('keeps a winner only while the ambiguous samples left could not make a majority (a tie is none)', () => {
    const four = [reply('A'), reply('A'), reply('A'), reply('A'), reply('X', true), reply('Y', true), reply('Z', true)];
    // 4–1 is ahead by more than two, but two more ambiguous samples would make 5 of 9.
    expect(isSettled(tallyOf(four, settings), 2, 'decided')).toBe(false);
    // One more ambiguous sample makes 3 of 6: not a majority, so A stays the winner.
    expect(isSettled(tallyOf([reply('A'), reply('A'), reply('A'), reply('X', true), reply('Y', true)], settings), 1, 'decided')).toBe(true);
  });

  it('lets a leading cluster with a plain sample win, though some of its samples reported ambiguity', () => {
    expect(isSettled(tallyOf([reply('A'), reply('A'), reply('A', true), reply('B')], settings), 1, 'decided')).toBe(true);
  });

  it('never stops while the samples left could elect another winner or turn the ambiguity majority', () => {
    // 'Ambiguous' answers as the ambiguous samples did, but plainly: it makes their cluster one that can win.
    const answer = fc.constantFrom('A', 'B', 'C', 'ambiguous', 'Ambiguous', 'junk');
    fc.assert(
      fc.property(fc.array(answer, { minLength: 2, maxLength: 9 }), fc.integer({ min: 0, max: 9 }), (all, cut) => {
        const asked = Math.min(cut, all.length);
        const read = (a: string) => (a === 'junk' ? attemptFromReply('no json', [], false) : reply(a, a === 'ambiguous'));
        const done = all.slice(0, asked).map(read);
        const remaining = all.length - asked;
        if (!isSettled(tallyOf(done, settings), remaining, 'decided')) return;
        // Every way the samples left could answer elects the same winner, as all of them would.
        const settled = votedAttempt(done.length > 0 ? done : [read('junk')], settings);
        for (const rest of completions(remaining)) {
          const full = votedAttempt([...done, ...rest.map(read)], settings);
          expect(full.ambiguous).toBe(settled.ambiguous);
          if (!full.ambiguous) expect(full.answer).toBe(settled.answer);
        }
      }),
      { numRuns: 400, seed: 30 },
    );
  });
});

function* completions(n: number): Generator<string[]> {
  if (n === 0) return yield [];
  for (const rest of completions(n - 1)) for (const a of ['A', 'B', 'C', 'D', 'ambiguous', 'Ambiguous', 'junk']) yield [a, ...rest];
}

describe('the Beta rule (stop: { confidence })', () => {
  it('is P(p > ½) for p ~ Beta(a + 1, b + 1): 2–0 is 7/8, 3–0 is 15/16, 4–0 is 31/32, a tie is ½', () => {
    expect(leaderBeats(2, 0)).toBe(7 / 8);
    expect(leaderBeats(3, 0)).toBe(15 / 16);
    expect(leaderBeats(4, 0)).toBe(31 / 32);
    expect(leaderBeats(3, 3)).toBeCloseTo(0.5, 12);
    expect(leaderBeats(5, 1)).toBeCloseTo(1 - 8 / 128, 12);
  });

  it('stops at exactly the confidence asked: 2–0 is 7/8, enough for 0.875', () => {
    expect(isSettled(tallyOf([reply('A'), reply('A')], settings), 7, { confidence: 0.875 })).toBe(true);
    expect(nextWave(NO_VOTES, 9, { confidence: 0.875 })).toBe(2);
  });

  it('needs both the ambiguity and the winner sure', () => {
    // A 3–2 split on ambiguity (P 0.66) leaves it open, though 3–1 for A (P 0.81) would do at 0.8.
    expect(isSettled(tallyOf([reply('A'), reply('A'), reply('A'), reply('X', true), reply('Y', true)], settings), 3, { confidence: 0.8 })).toBe(false);
    // Sure that the question is plain (2–0, P 7/8) but a 1–1 tie for the winner: open.
    expect(isSettled(tallyOf([reply('A'), reply('B')], settings), 3, { confidence: 0.8 })).toBe(false);
    // An ambiguity majority it is sure of (3–1, P 0.81) settles the vote as ambiguous.
    expect(isSettled(tallyOf([reply('X', true), reply('Y', true), reply('Z', true), reply('A')], settings), 2, { confidence: 0.8 })).toBe(true);
  });

  it('never elects a leading cluster whose samples all reported ambiguity', () => {
    const ambiguousLeader = [reply('X', true), reply('X', true), reply('X', true), reply('A'), reply('B'), reply('C'), reply('D')];
    expect(isSettled(tallyOf(ambiguousLeader, settings), 1, { confidence: 0.8 })).toBe(false);
  });

  it('stops no later than the exact rule', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 }), fc.double({ min: 0.51, max: 0.99, noNaN: true }), (a, b, left, confidence) => {
        const tally = { leader: Math.max(a, b), runnerUp: Math.min(a, b), voters: a + b, ambiguous: 0, plainLeader: true };
        if (isSettled(tally, left, 'decided')) expect(isSettled(tally, left, { confidence })).toBe(true);
      }),
    );
  });
});

describe('the waves', () => {
  it('the first is the fewest samples that could settle the vote alone; the next, the fewest more', () => {
    expect(nextWave(NO_VOTES, 5, 'decided')).toBe(3);
    expect(nextWave(NO_VOTES, 20, 'decided')).toBe(11);
    // 3–0 is 15/16 < 0.95, but with 2 left it is settled exactly: the Beta rule never stops later.
    expect(nextWave(NO_VOTES, 5, { confidence: 0.95 })).toBe(3);
    expect(nextWave(NO_VOTES, 9, { confidence: 0.95 })).toBe(4);
    expect(nextWave(NO_VOTES, 9, { confidence: 0.8 })).toBe(2);
    // 2–1 with two left: one more for the leader settles it.
    expect(nextWave(tallyOf([reply('A'), reply('A'), reply('B')], settings), 2, 'decided')).toBe(1);
    // 1–1–1 with two left: nothing can settle it early, so both are asked.
    expect(nextWave(tallyOf([reply('A'), reply('B'), reply('C')], settings), 2, 'decided')).toBe(2);
    // An ambiguity majority is settled by ambiguous samples: 2 of 3 needs two more of four to stay one.
    expect(nextWave(tallyOf([reply('X', true), reply('Y', true), reply('A')], settings), 4, 'decided')).toBe(2);
    // One ambiguous of two is no majority: one more A (3 of 4 for A, 1 ambiguous) settles it.
    expect(nextWave(tallyOf([reply('A'), reply('A', true)], settings), 2, 'decided')).toBe(1);
  });
});

describe('the budget', () => {
  const spent = (calls: number, replies: number, reports: number, totalTokens: number | null, costUsd: number | null = null) => ({
    calls,
    replies,
    reports,
    usage: totalTokens === null ? null : { inputTokens: totalTokens, outputTokens: 0, totalTokens, costUsd },
  });

  it('refuses a call past maxCalls, exactly', () => {
    expect(budgetStop({ maxCalls: 3, maxTokens: null, maxCostUsd: null }, spent(2, 2, 0, null))).toBeNull();
    expect(budgetStop({ maxCalls: 3, maxTokens: null, maxCostUsd: null }, spent(3, 3, 0, null))).toBe('the budget of 3 calls is spent');
    expect(budgetStop({ maxCalls: 1, maxTokens: null, maxCostUsd: null }, spent(1, 1, 0, null))).toBe('the budget of 1 call is spent');
  });

  it('expects the next call to cost the average so far', () => {
    const budget = { maxCalls: null, maxTokens: 300, maxCostUsd: null };
    expect(budgetStop(budget, spent(0, 0, 0, null))).toBeNull();
    expect(budgetStop(budget, spent(2, 2, 2, 200))).toBeNull();
    expect(budgetStop(budget, spent(2, 2, 2, 201))).toMatch(/^the budget of 300 tokens would be passed/);
    const dollars = { maxCalls: null, maxTokens: null, maxCostUsd: 0.03 };
    expect(budgetStop(dollars, spent(2, 2, 2, 10, 0.02))).toBeNull();
    expect(budgetStop(dollars, spent(2, 2, 2, 10, 0.0201))).toMatch(/^the budget of \$0\.03 would be passed/);
  });

  it('counts tokens no fewer than a report\'s input and output, whatever total it gave', () => {
    const budget = { maxCalls: null, maxTokens: 300, maxCostUsd: null };
    const usage = { inputTokens: 150, outputTokens: 60, totalTokens: 0, costUsd: null };
    expect(budgetStop(budget, { calls: 2, replies: 2, reports: 2, usage })).toBe('the budget of 300 tokens would be passed: 210 used, about 105 a call');
  });

  it('fails closed when a reply reported no usage, or no cost under a cost limit', () => {
    expect(budgetStop({ maxCalls: null, maxTokens: 100, maxCostUsd: null }, spent(1, 1, 0, null))).toMatch(/^usage is unknown/);
    expect(budgetStop({ maxCalls: null, maxTokens: null, maxCostUsd: 1 }, spent(1, 1, 1, 10))).toMatch(/^cost is unknown/);
    // A call budget needs no usage.
    expect(budgetStop({ maxCalls: 5, maxTokens: null, maxCostUsd: null }, spent(1, 1, 0, null))).toBeNull();
  });

  it('says which limits it cannot keep, and what the calls cost on average', () => {
    const unknown = ', so the budget of';
    expect(budgetStop({ maxCalls: null, maxTokens: 100, maxCostUsd: null }, spent(1, 1, 0, null))).toBe(
      `usage is unknown: a call replied without reporting what it used (info.reportUsage), or its stream was ended early, before the provider reported it${unknown} 100 tokens cannot be kept`,
    );
    expect(budgetStop({ maxCalls: null, maxTokens: null, maxCostUsd: 0.5 }, spent(1, 1, 0, null))).toBe(
      `usage is unknown: a call replied without reporting what it used (info.reportUsage), or its stream was ended early, before the provider reported it${unknown} $0.5 cannot be kept`,
    );
    expect(budgetStop({ maxCalls: null, maxTokens: 1, maxCostUsd: 2 }, spent(1, 1, 0, null))).toBe(
      `usage is unknown: a call replied without reporting what it used (info.reportUsage), or its stream was ended early, before the provider reported it${unknown} 1 token and $2 cannot be kept`,
    );
    expect(budgetStop({ maxCalls: null, maxTokens: null, maxCostUsd: 0.03 }, spent(2, 2, 2, 10, 0.04))).toBe('the budget of $0.03 would be passed: $0.04 spent, about $0.02 a call');
  });
});
