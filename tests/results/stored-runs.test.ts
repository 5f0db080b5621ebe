import { describe, expect, it, vi } from 'vitest';
import type { CheckpointOutput } from '../../machines/checkpoint/types.js';
import { acheck, CheckpointError, check, memoryStore, resultFrom } from '../../src/index.js';
import { checkLineRecord } from '../../src/results/stored.js';
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
    return { id: 7, latencyMs: 12, ...JSON.parse(JSON.stringify(result)), run: RUN };
  }

  it('a wrong type in any field resultFrom() reads is a TypeError naming it; toHtml() refuses it the same way', async () => {
    const line = resultLine();
    // resultFrom() reads these from the line; it makes every other field of a result itself (ok, method, nAttempts…).
    const read = ['settings', 'status', 'answer', 'confidence', 'agreement', 'ambiguous', 'interpretations', 'parsed', 'attempts', 'prompts', 'trace', 'usage', 'durationMs', 'run'];
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

/** `run` as `booth batch` writes it beside `settings`. */
const RUN = {
  booth: '0.1.0',
  model: 'gpt-4o-mini',
  host: '127.0.0.1:8080',
  schema: null,
  system: `sha256:${'ab'.repeat(32)}`,
  temperature: 1,
  seed: 0,
} as const;

describe('the `run` of a result line: what it was made with', () => {
  const line = () => ({ id: 1, latencyMs: 3, ...JSON.parse(JSON.stringify(check(() => envelope('Paris', 0.9), QUESTION))), run: { ...RUN } });
  const fail = (problem: string): never => {
    throw new TypeError(problem);
  };

  it('a line of an older Booth, without `run`, still reads; one with it reads the same', () => {
    const { run: _run, ...older } = line();
    expect(resultFrom(older as never).status).toBe('VERIFIED');
    expect(resultFrom(line() as never).status).toBe('VERIFIED');
    expect(() => checkLineRecord(older, fail)).not.toThrow();
    // A line without settings either (no such Booth wrote one, but nothing is to be compared then).
    expect(() => checkLineRecord({ id: 1 }, fail)).not.toThrow();
  });

  it('each field of another type, or a host that holds more than a host, is a TypeError naming the field and the kind found, never the value', () => {
    const hostile: Array<[string, unknown, string]> = [
      ['booth', 1, 'run.booth is 1, expected a string'],
      ['model', { name: 'x' }, 'run.model is an object, expected a string'],
      ['model', null, 'run.model is null, expected a string'],
      ['host', 'user:sk-secret@api.example.com', 'run.host is a string, expected a host[:port] such as api.openai.com or 127.0.0.1:8080'],
      ['host', 'api.example.com/v1?key=sk-secret', 'run.host is a string, expected a host[:port] such as api.openai.com or 127.0.0.1:8080'],
      ['host', 'api.example.com\u001b[2J', 'run.host is a string, expected a host[:port] such as api.openai.com or 127.0.0.1:8080'],
      ['schema', 'You are a secret prompt', 'run.schema is a string, expected a digest, sha256: and 64 hex digits or null'],
      ['system', `md5:${'a'.repeat(32)}`, 'run.system is a string, expected a digest, sha256: and 64 hex digits or null'],
      ['temperature', -1, 'run.temperature is -1, expected a number, 0 or more or null'],
      ['temperature', '0.7', 'run.temperature is a string, expected a number, 0 or more or null'],
      ['seed', 1.5, 'run.seed is 1.5, expected a whole number or null'],
      ['seed', undefined, 'run.seed is missing, expected a whole number or null'],
    ];
    for (const [field, value, problem] of hostile) {
      const forged = line();
      (forged.run as Record<string, unknown>)[field] = value;
      expect(() => resultFrom(forged as never), field).toThrow(TypeError);
      expect(() => resultFrom(forged as never), field).toThrow(`but its ${problem}. Pass the output or the result line unchanged.`);
      expect(() => checkLineRecord(forged, fail), field).toThrow(new TypeError(problem));
      if (typeof value === 'string') expect(() => resultFrom(forged as never)).not.toThrow(value);
    }
    for (const run of [null, 'gpt-4o', []]) {
      expect(() => resultFrom({ ...line(), run } as never)).toThrow(/but its run is (null|a string|an array), expected what the run ran with/);
    }
  });

  it('checkLineRecord reads only `settings` and `run`: a forged threshold is named, a forged attempt is not its business', () => {
    expect(() => checkLineRecord({ ...line(), settings: { ...line().settings, threshold: '0.7' } }, fail)).toThrow(new TypeError('settings.threshold is a string, expected a number from 0 to 1'));
    expect(() => checkLineRecord({ ...line(), attempts: 'many' }, fail)).not.toThrow();
    expect(() => checkLineRecord(null, fail)).toThrow(new TypeError('value is null, expected a result line'));
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

