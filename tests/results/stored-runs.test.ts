import { describe, expect, it, vi } from 'vitest';
import type { CheckpointOutput } from '../../machines/checkpoint/types.js';
import { acheck, CheckpointError, check, memoryStore, resultFrom } from '../../src/index.js';
import { toHtml } from '../../src/visualize/index.js';
import { envelope } from '../fixtures/helpers.js';
import { pathsOf, QUESTION, refusedWithoutACall, savedAfterFirstAttempt, withValueAt, wrongType } from '../fixtures/forged-runs.js';

describe('a checkpoint read back: every field of its type', () => {
  it('a wrong type in any field of the saved run (attempts, samples, clusters, trace, settings, slots…) is a CheckpointError naming it, before any call', async () => {
    const store = memoryStore();
    const saved = await savedAfterFirstAttempt(store, 'k', { samples: 3 });
    const attempt = (saved.snapshot.context['attempts'] as Array<Record<string, unknown>>)[0]!;
    // The run has what the check must cover: samples, clusters, usage, slots.
    expect(attempt['samples']).toHaveLength(3);
    expect(attempt['clusters']).toHaveLength(1);
    expect(attempt['usage']).not.toBeNull();
    expect(saved.snapshot.context['slots']).toHaveLength(3);
    // Generated from the checkpoint itself, so a field added later is covered. Only the model's own JSON (`parsed`) may hold anything.
    const paths = pathsOf(saved.snapshot, (path) => /\.parsed\./.test(path));
    expect(paths.length).toBeGreaterThan(150);
    const callFn = vi.fn(async () => envelope('Paris', 0.9));
    for (const [path, value] of paths) {
      store.save('k', withValueAt(saved, `snapshot.${path}`, wrongType(value)));
      const run = acheck(callFn, QUESTION, { checkpoint: store, key: 'k', samples: 3, callRetries: { retries: 1, minDelayMs: 1 } });
      const error = await run.then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error, path).toBeInstanceOf(CheckpointError);
      const { message } = error as Error;
      // The outer shape, settings the caller gives again (compared with the caller's) and usage have their own messages; the rest name the field.
      if (!/holds no resumable run|belongs to a different run|holds a usage that is not token counts/.test(message)) expect(message, path).toContain(`whose snapshot.${path}`);
      // The field's value never reaches the message: it may be a prompt, a reply or markup.
      expect(message, path).not.toContain("<img");
    }
    expect(callFn).not.toHaveBeenCalled();
  });

  it('names the path, the kind of value found and the fix', async () => {
    const store = memoryStore();
    const saved = await savedAfterFirstAttempt(store, 'k');
    store.save('k', withValueAt(saved, 'snapshot.context.attempts[0].confidence', '<img src=x onerror=alert(1)>'));
    await refusedWithoutACall(
      store,
      'k',
      'Booth checkpoint for key "k" holds a run whose snapshot.context.attempts[0].confidence is a string, expected a number from 0 to 1 or null. Delete it to start the run afresh.',
    );
  });

  it('a saved run asking XState to spawn actors or restore history is refused', async () => {
    const store = memoryStore();
    const saved = await savedAfterFirstAttempt(store, 'k');
    store.save('k', withValueAt(saved, 'snapshot.children', { callModel: { src: 'callModel', snapshot: { status: 'active' } } }));
    await refusedWithoutACall(store, 'k', 'snapshot.children is an object, expected an empty object');
  });
});

describe('resultFrom() and toHtml() given an output or a result line read back', () => {
  /** A `booth batch` line of a sampled run that retried: every kind of field a result has. */
  function resultLine(): Record<string, unknown> {
    let call = 0;
    const result = check(
      () => (call++ < 3 ? envelope(call === 2 ? 'Marseille' : 'Lyon', 0.4) : envelope('Paris', 0.9)),
      QUESTION,
      { samples: 3, maxRetries: 1 },
    );
    expect(result.status).toBe('REPAIRED');
    return { id: 7, latencyMs: 12, ...JSON.parse(JSON.stringify(result)) };
  }

  it('a wrong type in any field resultFrom() reads is a TypeError naming it; toHtml() refuses it the same way', async () => {
    const line = resultLine();
    // resultFrom() reads these from the line; it makes every other field of a result itself (ok, method, nAttempts…).
    const read = ['settings', 'status', 'answer', 'confidence', 'agreement', 'ambiguous', 'interpretations', 'parsed', 'attempts', 'prompts', 'trace', 'usage', 'durationMs'];
    const paths = pathsOf(line, (path) => !read.includes(path.split(/[.[]/)[0]!) || /(^|\.)parsed\./.test(path));
    expect(paths.length).toBeGreaterThan(100);
    for (const [path, value] of paths) {
      const hostile = withValueAt(line, path, wrongType(value)) as unknown as CheckpointOutput;
      expect(() => resultFrom(hostile), path).toThrow(TypeError);
      // The outer shape (a status, the four arrays) has the message it always had; below it, the field is named.
      const outer = ['status', 'attempts', 'prompts', 'trace', 'interpretations'].includes(path);
      expect(() => resultFrom(hostile), path).toThrow(outer ? /^Expected `output` to be the checkpoint machine's output \(event\.output in an invoke's onDone\), got / : `but its ${path}`);
      await expect(toHtml(hostile), path).rejects.toThrow(TypeError);
    }
  });

  it('the message names the path, the kind found and the fix, never the value', () => {
    const line = withValueAt(resultLine(), 'attempts[1].clusters[0].count', '<img src=x onerror=alert(1)>');
    expect(() => resultFrom(line as never)).toThrow(
      new TypeError(
        "Expected `output` to be the checkpoint machine's output (event.output in an invoke's onDone) or a result's JSON as Booth wrote it, but its attempts[1].clusters[0].count is a string, expected a whole number, 1 or more. Pass the output or the result line unchanged.",
      ),
    );
  });

  it('a result line as Booth wrote it reads back to the same result, and draws', async () => {
    const line = resultLine();
    const result = resultFrom(line as never);
    expect(result.status).toBe('REPAIRED');
    expect(JSON.parse(JSON.stringify(result))).toMatchObject({ attempts: line['attempts'], trace: line['trace'], settings: line['settings'] });
    expect(await toHtml(line as never)).toContain('REPAIRED');
  });
});

describe('a stored version or key is never quoted', () => {
  it("a version of another type, or a key of another run, is named by its kind: the store's text never reaches the error", async () => {
    const store = memoryStore();
    await acheck(async () => envelope('Lyon', 0.1), 'Capital of France?', { checkpoint: store, key: 'k', maxRetries: 0 }).catch(() => undefined);
    const saved = { format: 'booth.checkpoint', version: 1, key: 'k', snapshot: { status: 'active', value: 'calling', context: {} } };
    for (const [field, value, expected] of [
      ['version', '<script>x</script>\nFAKE LOG LINE', 'has version a string; this Booth reads version 1.'],
      ['key', 'X'.repeat(100_000), 'was saved for another key.'],
    ] as const) {
      store.save('k', { ...saved, [field]: value } as never);
      const error = await acheck(async () => envelope('Paris', 0.9), 'Capital of France?', { checkpoint: store, key: 'k' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect((error as Error).message).toContain(expected);
      expect((error as Error).message).not.toContain(String(value).slice(0, 20));
    }
  });
});

