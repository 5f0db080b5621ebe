import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { acheck, type CallInfo, CheckpointError, check, checkWithEvidence, memoryStore } from '../../src/index.js';
import { checkpointMachine, type CheckpointOutput, modelActor } from '../../machines/index.js';
import { CheckpointRun, readCheckpoint } from '../../src/engine/checkpoint-run.js';
import { readCheckArguments } from '../../src/api/options.js';
import { envelope } from '../fixtures/helpers.js';

/** A callFn that reports `usage` on every call, then plays `replies` in order. */
function billed(replies: ReadonlyArray<string | Error>, usage: { inputTokens: number; outputTokens: number; costUsd?: number }) {
  let calls = 0;
  return (_prompt: string, info: CallInfo): string => {
    info.reportUsage?.(usage);
    const reply = replies[calls++];
    if (reply instanceof Error) throw reply;
    if (reply === undefined) throw new Error('no reply scripted');
    return reply;
  };
}

describe('usage: what the calls consumed, as callFn reports it', () => {
  it('each attempt adds up its calls; the result adds up every attempt, failed calls included', () => {
    const result = check(billed([new Error('503'), 'not json', envelope('Paris', 0.9)], { inputTokens: 100, outputTokens: 20 }), 'q', {
      maxRetries: 2,
    });
    expect(result.status).toBe('REPAIRED');
    const each = { inputTokens: 100, outputTokens: 20, totalTokens: 120, costUsd: null };
    expect(result.attempts.map((a) => a.usage)).toEqual([each, each, each]);
    expect(result.usage).toEqual({ inputTokens: 300, outputTokens: 60, totalTokens: 360, costUsd: null });
  });

  it('call retries count inside their attempt', async () => {
    const transient = Object.assign(new Error('overloaded'), { status: 503 });
    const result = await acheck(billed([transient, transient, envelope('Paris', 0.9)], { inputTokens: 10, outputTokens: 1, costUsd: 0.25 }), 'q', {
      callRetries: { retries: 2, minDelayMs: 0 },
    });
    expect(result.attempts).toHaveLength(1);
    expect(result.attempts[0]?.callTries).toHaveLength(3);
    expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 3, totalTokens: 33, costUsd: 0.75 });
  });

  it('several reports in one call add up; totalTokens is the provider\'s when given', () => {
    const result = check(
      (_p, info) => {
        info.reportUsage?.({ inputTokens: 5, outputTokens: 1, totalTokens: 9 });
        info.reportUsage?.({ inputTokens: 2, outputTokens: 2 });
        return envelope('Paris', 0.9);
      },
      'q',
    );
    expect(result.usage).toEqual({ inputTokens: 7, outputTokens: 3, totalTokens: 13, costUsd: null });
  });

  it('a cost is summed over the calls that reported one, and null when none did', () => {
    let call = 0;
    const result = check(
      (_p, info) => {
        info.reportUsage?.(call++ === 0 ? { inputTokens: 1, outputTokens: 1 } : { inputTokens: 1, outputTokens: 1, costUsd: 0.5 });
        return call === 1 ? envelope('Paris', 0.2) : envelope('Paris', 0.9);
      },
      'q',
    );
    expect(result.attempts.map((a) => a.usage?.costUsd)).toEqual([null, 0.5]);
    expect(result.usage?.costUsd).toBe(0.5);
  });

  it('without reports, usage is null everywhere: unknown, not zero', () => {
    const result = check(() => envelope('Paris', 0.9), 'q');
    expect(result.usage).toBeNull();
    expect(result.attempts[0]?.usage).toBeNull();
    expect(checkWithEvidence('Paris', ['Paris'], () => true).usage).toBeNull();
  });

  it('every sample of an attempt counts', async () => {
    const result = await acheck(async (_p, info) => {
      info.reportUsage?.({ inputTokens: 4, outputTokens: 2 });
      return envelope('Paris', 0.9);
    }, 'q', { samples: 3 });
    expect(result.attempts).toHaveLength(1);
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 6, totalTokens: 18, costUsd: null });
  });

  it('a wrong report fails the call that made it, with a message naming the field, the value and what is expected', () => {
    const result = check(
      (_p, info) => {
        info.reportUsage?.({ inputTokens: -3, outputTokens: 1 });
        return envelope('Paris', 0.9);
      },
      'q',
      { maxRetries: 0 },
    );
    expect(result.status).toBe('UNCERTAIN');
    expect(result.attempts[0]?.callFailed).toBe(true);
    expect(result.attempts[0]?.error).toBe('Expected `inputTokens` given to `reportUsage` to be a whole number of tokens, 0 or more, got -3.');
    for (const [report, message] of [
      [null, 'Expected `reportUsage` to be given { inputTokens, outputTokens }, got null.'],
      [{ inputTokens: 1, outputTokens: 1.5 }, 'Expected `outputTokens` given to `reportUsage` to be a whole number of tokens, 0 or more, got 1.5.'],
      [{ inputTokens: 1, outputTokens: 1, costUsd: Number.NaN }, 'Expected `costUsd` given to `reportUsage` to be a finite number of dollars, 0 or more, got NaN.'],
    ] as const) {
      const failed = check((_p, info) => (info.reportUsage?.(report as never), envelope('a', 0.9)), 'q', { maxRetries: 0 });
      expect(failed.attempts[0]?.error).toBe(message);
    }
  });

  it('a report\'s totalTokens and costUsd are checked like its counts: null means not given, and 0 is a count and a cost', () => {
    const usageOf = (report: unknown) => check((_p, info) => (info.reportUsage?.(report as never), envelope('a', 0.9)), 'q', { maxRetries: 0 }).attempts[0]!;
    expect(usageOf({ inputTokens: 2, outputTokens: 3, totalTokens: null, costUsd: null }).usage).toEqual({ inputTokens: 2, outputTokens: 3, totalTokens: 5, costUsd: null });
    expect(usageOf({ inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 }).usage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 });
    for (const [report, message] of [
      [5, 'Expected `reportUsage` to be given { inputTokens, outputTokens }, got 5.'],
      ['{"inputTokens":1}', 'Expected `reportUsage` to be given { inputTokens, outputTokens }, got "{\\"inputTokens\\":1}".'],
      [{ inputTokens: 1, outputTokens: 1, totalTokens: -1 }, 'Expected `totalTokens` given to `reportUsage` to be a whole number of tokens, 0 or more, got -1.'],
      [{ inputTokens: 1, outputTokens: 1, costUsd: '0.5' }, 'Expected `costUsd` given to `reportUsage` to be a finite number of dollars, 0 or more, got "0.5".'],
      [{ inputTokens: 1, outputTokens: 1, costUsd: Number.POSITIVE_INFINITY }, 'Expected `costUsd` given to `reportUsage` to be a finite number of dollars, 0 or more, got Infinity.'],
      [{ inputTokens: 1, outputTokens: 1, costUsd: -0.01 }, 'Expected `costUsd` given to `reportUsage` to be a finite number of dollars, 0 or more, got -0.01.'],
    ] as const) {
      const attempt = usageOf(report);
      expect([attempt.callFailed, attempt.error, attempt.usage]).toEqual([true, message, null]);
    }
  });

  it('reporting usage while acheck() waits for the call does not count as the call being given up', async () => {
    let calls = 0;
    const result = await acheck(
      async (_p, info) => {
        calls += 1;
        info.reportUsage?.({ inputTokens: 1, outputTokens: 1 });
        await new Promise((resolve) => setTimeout(resolve, 20));
        info.reportUsage?.({ inputTokens: 1, outputTokens: 1 });
        return envelope('Paris', 0.9);
      },
      'q',
      { timeoutMs: 5_000 },
    );
    expect(result.status).toBe('VERIFIED');
    expect(calls).toBe(1);
    expect(result.usage?.inputTokens).toBe(2);
  });

  it('a report after the check returned changes nothing and throws nothing', () => {
    let late: CallInfo['reportUsage'];
    const result = check((_p, info) => ((late = info.reportUsage), envelope('Paris', 0.9)), 'q');
    expect(() => late?.({ inputTokens: 1, outputTokens: 1 })).not.toThrow();
    expect(result.usage).toBeNull();
  });

  it('a durable run keeps the usage of the attempts finished before the resume; the call in flight is made, and counted, again', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const model = async (_p: string, info: CallInfo) => {
      info.reportUsage?.({ inputTokens: 50, outputTokens: 5 });
      if (info.attempt === 1) controller.abort(new Error('going down'));
      return info.attempt === 0 ? envelope('Lyon', 0.1) : envelope('Paris', 0.9);
    };
    const options = { checkpoint: store, key: 'k', maxRetries: 1 };
    await expect(acheck(model, 'q', { ...options, signal: controller.signal })).rejects.toThrow('going down');
    const resumed = await acheck(model, 'q', options);
    expect(resumed.status).toBe('REPAIRED');
    // Attempt 1's first call, cut short by the crash, was never saved: what it reported went with the process.
    expect(resumed.attempts.map((a) => a.usage?.inputTokens)).toEqual([50, 50]);
    expect(resumed.usage?.totalTokens).toBe(110);
  });

  it('a resumed attempt\'s time starts at the resume: the pause is not counted', async () => {
    const store = memoryStore();
    const controller = new AbortController();
    const model = async (_p: string, info: CallInfo) => {
      if (info.attempt === 1 && !controller.signal.aborted) controller.abort(new Error('going down'));
      return info.attempt === 0 ? envelope('Lyon', 0.1) : envelope('Paris', 0.9);
    };
    const options = { checkpoint: store, key: 'k' };
    await expect(acheck(model, 'q', { ...options, signal: controller.signal })).rejects.toThrow('going down');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const resumed = await acheck(model, 'q', options);
    expect(resumed.status).toBe('REPAIRED');
    expect(resumed.attempts[1]!.durationMs).toBeLessThan(250);
    expect(resumed.durationMs).toBeLessThan(250);
  });

  it('a call given up on that reports later counts in the result, not in the attempt running then', async () => {
    let late: CallInfo['reportUsage'];
    const result = await acheck(
      async (_p, info) => {
        if (info.attempt === 0) {
          late = info.reportUsage;
          return new Promise<string>(() => {}); // times out
        }
        late?.({ inputTokens: 1_000, outputTokens: 0 });
        info.reportUsage?.({ inputTokens: 1, outputTokens: 1 });
        return envelope('Paris', 0.9);
      },
      'q',
      { timeoutMs: 20 },
    );
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts.map((a) => a.usage?.inputTokens ?? null)).toEqual([null, 1]);
    expect(result.usage).toEqual({ inputTokens: 1_001, outputTokens: 1, totalTokens: 1_002, costUsd: null });
  });

  it('a checkpoint whose usage is not token counts is a CheckpointError, not garbage in every total after it', async () => {
    const settings = readCheckArguments('acheck', async () => '', 'q', { maxRetries: 1 });
    const run = new CheckpointRun('q', settings);
    run.usageReporter({ attempt: 0 })({ inputTokens: 5, outputTokens: 1 });
    run.send({ type: 'model.replied', reply: envelope('Lyon', 0.1) });
    const saved = JSON.parse(JSON.stringify(run.checkpoint('k'))) as { snapshot: { context: { attempts: Array<Record<string, unknown>> } } };
    run.stop();
    saved.snapshot.context.attempts[0]!['usage'] = { inputTokens: '5', outputTokens: 1, totalTokens: 6, costUsd: null };
    const store = { load: () => saved, save: () => {}, delete: () => {} };
    await expect(acheck(async () => envelope('Paris', 0.9), 'q', { maxRetries: 1, checkpoint: store, key: 'k' })).rejects.toThrow(
      new CheckpointError(
        'k',
        null,
        'holds a run whose snapshot.context.attempts[0].usage.inputTokens is a string, expected a whole number, 0 or more. Delete it to start the run afresh.',
      ),
    );
  });

  it('a checkpoint\'s usage must be whole token counts, 0 or more, and a cost null or a finite number of dollars, 0 or more', async () => {
    const settings = readCheckArguments('acheck', async () => '', 'q', { maxRetries: 1 });
    /** Attempt 0 saved with `usage` in place of what it reported, then resumed. */
    const resume = (usage: unknown) => {
      const run = new CheckpointRun('q', settings);
      run.usageReporter({ attempt: 0 })({ inputTokens: 5, outputTokens: 1 });
      run.send({ type: 'model.replied', reply: envelope('Lyon', 0.1) });
      const saved = JSON.parse(JSON.stringify(run.checkpoint('k'))) as { snapshot: { context: { attempts: Array<Record<string, unknown>> } } };
      run.stop();
      saved.snapshot.context.attempts[0]!['usage'] = usage;
      const store = { load: () => saved, save: () => {}, delete: () => {} };
      return acheck(async () => envelope('Paris', 0.9), 'q', { maxRetries: 1, checkpoint: store, key: 'k' });
    };
    for (const usage of [
      { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
      { inputTokens: 5, outputTokens: 1, totalTokens: 6, costUsd: 0.25 },
    ]) {
      const resumed = await resume(usage);
      expect(resumed.status).toBe('REPAIRED');
      expect(resumed.attempts[0]?.usage).toEqual(usage);
    }
    const problems: Array<[unknown, string]> = [
      [6, 'usage is 6, expected token counts ({ inputTokens, outputTokens, totalTokens, costUsd }) or null'],
      // The kind of value found, never the value: a stored string may be anything.
      ['six tokens', 'usage is a string, expected token counts ({ inputTokens, outputTokens, totalTokens, costUsd }) or null'],
      [{ inputTokens: -1, outputTokens: 1, totalTokens: 0, costUsd: null }, 'usage.inputTokens is -1, expected a whole number, 0 or more'],
      [{ inputTokens: 5, outputTokens: 1.5, totalTokens: 6, costUsd: null }, 'usage.outputTokens is 1.5, expected a whole number, 0 or more'],
      [{ inputTokens: 5, outputTokens: 1, totalTokens: 6, costUsd: '0.25' }, 'usage.costUsd is a string, expected a number of dollars, 0 or more or null'],
      [{ inputTokens: 5, outputTokens: 1, totalTokens: 6, costUsd: -0.25 }, 'usage.costUsd is -0.25, expected a number of dollars, 0 or more or null'],
      [{ inputTokens: 5, outputTokens: 1, totalTokens: 6, costUsd: Number.POSITIVE_INFINITY }, 'usage.costUsd is Infinity, expected a number of dollars, 0 or more or null'],
    ];
    for (const [usage, problem] of problems) {
      await expect(resume(usage)).rejects.toThrow(
        new CheckpointError('k', null, `holds a run whose snapshot.context.attempts[0].${problem}. Delete it to start the run afresh.`),
      );
    }
  });

  it('a checkpoint saved before usage was counted resumes with usage null for its attempts', async () => {
    const settings = readCheckArguments('acheck', async () => '', 'q', { maxRetries: 1 });
    const run = new CheckpointRun('q', settings);
    run.send({ type: 'model.replied', reply: envelope('Lyon', 0.1) });
    const saved = JSON.parse(JSON.stringify(run.checkpoint('k'))) as { snapshot: { context: Record<string, unknown> } };
    run.stop();
    const { context } = saved.snapshot;
    delete context['usage'];
    for (const attempt of [context['draft'], ...(context['attempts'] as object[])] as Array<Record<string, unknown>>) delete attempt['usage'];
    const resumed = new CheckpointRun('q', settings, await readCheckpoint(saved, 'k', null, 'q', settings));
    resumed.send({ type: 'model.replied', reply: envelope('Paris', 0.9) });
    const done = resumed.next();
    const attempts = done.kind === 'report' ? [done.attempt] : [];
    expect(attempts[0]?.usage).toBeNull();
    expect(Object.keys(attempts[0] ?? {}).slice(-2)).toEqual(['durationMs', 'usage']);
    resumed.stop();
  });
});

describe('time: durationMs', () => {
  it('the result\'s durationMs is its attempts\' summed', async () => {
    let call = 0;
    const result = await acheck(async () => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      return call++ === 0 ? envelope('Lyon', 0.1) : envelope('Paris', 0.9);
    }, 'q');
    expect(result.attempts.every((a) => a.durationMs >= 14)).toBe(true);
    expect(result.durationMs).toBe(result.attempts.reduce((sum, a) => sum + a.durationMs, 0));
  });

  it('an evidence check says how long its comparison took', () => {
    const result = checkWithEvidence('Paris', ['Paris'], () => {
      const until = performance.now() + 5;
      while (performance.now() < until);
      return true;
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(5);
  });
});

describe('usage in a workflow', () => {
  it('the machine\'s own model reports through info.reportUsage, and the output adds it up', async () => {
    const actor = createActor(checkpointMachine, {
      input: {
        prompt: 'q',
        model: async (_p, info) => {
          info.reportUsage({ inputTokens: 8, outputTokens: 2 });
          return info.attempt === 0 ? envelope('Lyon', 0.1) : envelope('Paris', 0.9);
        },
      },
    });
    const output: CheckpointOutput = await toPromise(actor.start());
    expect(output.status).toBe('REPAIRED');
    expect(output.usage).toEqual({ inputTokens: 16, outputTokens: 4, totalTokens: 20, costUsd: null });
  });

  it('so does a model given with modelActor()', async () => {
    const machine = checkpointMachine.provide({
      actors: {
        callModel: modelActor(async (_p, info) => {
          info.reportUsage({ inputTokens: 3, outputTokens: 3, costUsd: 0.01 });
          return envelope('Paris', 0.9);
        }),
      },
    });
    const output = await toPromise(createActor(machine, { input: { prompt: 'q' } }).start());
    expect(output.attempts[0]?.usage).toEqual({ inputTokens: 3, outputTokens: 3, totalTokens: 6, costUsd: 0.01 });
  });
});
