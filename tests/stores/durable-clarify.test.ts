import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { acheck, type Checkpoint, type CheckpointStore, type ClarificationChoice, memoryStore } from '../../src/index.js';
import { forceEngine } from '../../src/engine/engines.js';
import { fileStore } from '../../src/stores/node.js';
import { redisStore } from '../../src/stores/redis-store.js';
import { startRedis, type RedisServer } from '../fixtures/redis-server.js';
import { AGAIN_READINGS, comparable, QUESTION, READINGS, type ScriptName, scriptedCall, uninterruptedClarify } from '../fixtures/clarify-runs.js';

/**
 * A run that waits in a store for the person who asked an ambiguous question (issue #29):
 * for each store, across a restart — a fresh acheck() on the same memoryStore object, real
 * child processes on a file store and on Redis (one process starts the run and exits,
 * another continues it) — with SIGKILL at each point of both rounds. Whatever happened on
 * the way, the result is the one an uninterrupted clarify() in memory gives, and each
 * finished attempt is called once.
 */

/** One acheck() of QUESTION against the subject's store, under its key, as a process would run it. */
interface Run {
  readonly script: ScriptName;
  readonly awaitClarification?: boolean;
  readonly clarification?: ClarificationChoice;
  readonly maxClarifications?: number;
  /** `call:N`: the process dies inside the call of attempt N; `saved:N`: right after attempt N is saved. */
  readonly stop?: string;
}

interface Outcome {
  /** The result, as JSON. */
  readonly result: Record<string, unknown> | null;
  readonly error: { readonly name: string; readonly message: string } | null;
  readonly killed: boolean;
}

interface Subject {
  /** Runs one acheck() in a process of its own (or, for memoryStore, a fresh acheck() on the same store). */
  run(run: Run): Promise<Outcome>;
  /** The attempts called so far, in order, in every process. */
  calls(): number[];
  /** The checkpoint the store holds under the key, as JSON; undefined for none. */
  stored(): Promise<Checkpoint | undefined>;
}

const CHILD = fileURLToPath(new URL('../fixtures/clarify-child.ts', import.meta.url));

function optionsOf({ awaitClarification, clarification, maxClarifications }: Run) {
  return {
    ...(awaitClarification === undefined ? {} : { awaitClarification }),
    ...(clarification === undefined ? {} : { clarification }),
    ...(maxClarifications === undefined ? {} : { maxClarifications }),
  };
}

/** The memoryStore: each run a fresh acheck() on the same store object; a crash is an abort in the call, or a throw right after a save. */
function inMemory(): Subject {
  const kept = memoryStore();
  const calls: number[] = [];
  return {
    calls: () => [...calls],
    stored: async () => (await kept.load('k')) as Checkpoint | undefined,
    async run(run) {
      const down = new Error('process going down');
      const controller = new AbortController();
      const store: CheckpointStore = {
        load: kept.load,
        delete: kept.delete,
        async save(key, checkpoint) {
          await kept.save(key, checkpoint);
          const attempts = (checkpoint.snapshot as { context: { attempts: unknown[] } }).context.attempts.length;
          if (run.stop === `saved:${attempts - 1}`) throw down;
        },
      };
      const call = scriptedCall(run.script);
      try {
        const result = await acheck(
          async (prompt, info) => {
            calls.push(info.attempt);
            if (run.stop === `call:${info.attempt}`) controller.abort(down);
            return call(prompt, info);
          },
          QUESTION,
          { checkpoint: store, key: 'k', signal: controller.signal, ...optionsOf(run) },
        );
        return { result: JSON.parse(JSON.stringify(result)), error: null, killed: false };
      } catch (error) {
        if (error === down) return { result: null, error: null, killed: true };
        return { result: null, error: { name: (error as Error).name, message: (error as Error).message }, killed: false };
      }
    },
  };
}

/** Runs clarify-child.ts; SIGKILLs it as soon as it prints the line `stop` names. */
function child(store: { file: string } | { redis: number }, key: string, log: string) {
  return (run: Run): Promise<Outcome> =>
    new Promise((resolve, reject) => {
      const stop = run.stop ?? 'none';
      const config = { store, log, key, script: run.script, stop, ...optionsOf(run) };
      const killOn = (line: string) => (stop.startsWith('call:') ? line === `calling ${stop.slice(5)}` : stop.startsWith('saved:') && line.startsWith(`saved ${stop.slice(6)} `));
      const process_: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(config)], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      process_.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk;
        if (stdout.split('\n').some(killOn)) process_.kill('SIGKILL');
      });
      process_.stderr?.on('data', (chunk: Buffer) => (stderr += chunk));
      process_.on('error', reject);
      process_.on('close', (code, signal) => {
        const lines = stdout.split('\n');
        const result = lines.find((line) => line.startsWith('RESULT '))?.slice('RESULT '.length);
        const error = lines.find((line) => line.startsWith('ERROR '))?.slice('ERROR '.length);
        if (signal === 'SIGKILL') resolve({ result: null, error: null, killed: true });
        else if (code !== 0 || (result === undefined && error === undefined)) reject(new Error(`child failed (${code}): ${stderr}`));
        else {
          const [name = '', ...words] = (error ?? '').split(' ');
          resolve({ result: result === undefined ? null : JSON.parse(result), error: error === undefined ? null : { name, message: words.join(' ') }, killed: false });
        }
      });
    });
}

const callsIn = (log: string) => () => {
  try {
    return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
};

function inFiles(): Subject {
  const dir = mkdtempSync(join(tmpdir(), 'booth-clarify-'));
  const log = join(dir, 'calls.log');
  const store = fileStore(join(dir, 'store'));
  return { run: child({ file: join(dir, 'store') }, 'k', log), calls: callsIn(log), stored: async () => (await store.load('k')) as Checkpoint | undefined };
}

let redis: RedisServer | null = null;
let client: Redis | null = null;
let redisKeys = 0;
function inRedis(): Subject {
  const dir = mkdtempSync(join(tmpdir(), 'booth-clarify-redis-'));
  const log = join(dir, 'calls.log');
  // The server is shared by the file's tests: a key of each test's own.
  const key = `clarify-${++redisKeys}`;
  const store = redisStore(client!);
  return { run: child({ redis: redis!.port }, key, log), calls: callsIn(log), stored: async () => (await store.load(key)) as Checkpoint | undefined };
}

afterEach(() => forceEngine(null));

const SUBJECTS: ReadonlyArray<[string, () => Subject]> = [
  ['memoryStore, a fresh acheck() on the same store', inMemory],
  ['fileStore (boothjs/node), a process per call', inFiles],
  ['redisStore, a process per call', inRedis],
];

/** The run the store keeps while it waits: in awaitingClarification, AMBIGUOUS, its readings offered. */
async function expectWaiting(subject: Subject, attempts: number, readings: readonly string[]) {
  const stored = (await subject.stored()) as { snapshot: { status: string; value: string; context: Record<string, unknown> } } | undefined;
  expect(stored?.snapshot.status).toBe('active');
  expect(stored?.snapshot.value).toBe('awaitingClarification');
  expect(stored?.snapshot.context['status']).toBe('AMBIGUOUS');
  expect(stored?.snapshot.context['attempts']).toHaveLength(attempts);
  expect((stored?.snapshot.context['draft'] as { interpretations: unknown }).interpretations).toEqual(readings);
}

function expectResult(outcome: Outcome): Record<string, unknown> {
  expect(outcome.error).toBeNull();
  expect(outcome.killed).toBe(false);
  return outcome.result!;
}

/** Attempts 0 to n - 1, each called once but `repeated`, called twice. */
const once = (n: number, repeated: number | null = null) => Array.from({ length: n }, (_, attempt) => (attempt === repeated ? [attempt, attempt] : [attempt])).flat();

describe.skipIf(process.env.BOOTH_MUTATE === '1')('a run waiting for its clarification in a store, across restarts', () => {
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis({ host: '127.0.0.1', port: redis.port });
  }, 30_000);
  afterAll(async () => {
    await client?.quit();
    await redis?.close();
  });

  for (const [name, make] of SUBJECTS) {
    describe(name, () => {
      it('waits AMBIGUOUS in awaitingClarification; asked again, it calls nothing and says the same; continued with a choice, it ends as clarify() in memory does, and the checkpoint is deleted', { timeout: 60_000 }, async () => {
        const subject = make();
        const first = expectResult(await subject.run({ script: 'clarified', awaitClarification: true }));
        expect(first['status']).toBe('AMBIGUOUS');
        expect(first['interpretations']).toEqual(READINGS);
        expect(first['clarifications']).toEqual([]);
        expect((first['trace'] as Array<{ state: string }>).at(-1)?.state).toBe('awaitingClarification');
        await expectWaiting(subject, 1, READINGS);
        const waiting = await subject.stored();

        // Again with awaitClarification: the same AMBIGUOUS, no call, the store unchanged. A call that asked for no
        // clarification is told what to pass, rather than handed a run that carries clarifications.
        const same = expectResult(await subject.run({ script: 'clarified', awaitClarification: true }));
        expect(comparable(same)).toEqual(comparable(first));
        expect((await subject.run({ script: 'clarified' })).error).toMatchObject({ name: 'CheckpointError', message: expect.stringContaining('pass `awaitClarification: true` to see it waiting') });
        expect(subject.calls()).toEqual([0]);
        expect(await subject.stored()).toEqual(waiting);

        const done = expectResult(await subject.run({ script: 'clarified', clarification: 1 }));
        const reference = await uninterruptedClarify('clarified', [1]);
        expect(comparable(done)).toEqual(comparable(reference));
        expect(done).toMatchObject({ status: 'REPAIRED', answer: '13.5 g/cm³' });
        expect(done['clarifications']).toEqual([{ question: QUESTION, readings: READINGS, chosen: READINGS[1], rephrased: null, attempt: 1 }]);
        expect((done['prompts'] as Array<{ kind: string }>).map((p) => p.kind)).toEqual(['first', 'clarification', 'confidence']);
        expect((done['trace'] as Array<{ state: string }>).map((s) => s.state).slice(2, 5)).toEqual(['ambiguityGate', 'awaitingClarification', 'calling']);
        expect(subject.calls()).toEqual([0, 1, 2]);
        expect(await subject.stored()).toBeUndefined();
      });

      // Every point where each round's process can die: inside each call, right after each save.
      const stops = [
        // Round 1, started with awaitClarification: the rerun is the same call.
        { stop: 'call:0', round: 1, repeated: 0 },
        { stop: 'saved:0', round: 1, repeated: null },
        // Round 2, begun by the clarification: the rerun gives the same clarification again.
        { stop: 'call:1', round: 2, repeated: 1 },
        { stop: 'saved:1', round: 2, repeated: null },
        { stop: 'call:2', round: 2, repeated: 2 },
        // The last attempt is saved before the checkpoint is deleted: a run that died between the two resumes ended.
        { stop: 'saved:2', round: 2, repeated: null },
      ] as const;
      for (const { stop, round, repeated } of stops) {
        it(`killed at ${stop} (round ${round}), run again as it was: finished attempts run once, the result is clarify()'s`, { timeout: 60_000 }, async () => {
          const subject = make();
          const start: Run = { script: 'clarified', awaitClarification: true };
          const answer: Run = { script: 'clarified', clarification: READINGS[1] };
          if (round === 1) {
            expect((await subject.run({ ...start, stop })).killed).toBe(true);
            expect(expectResult(await subject.run(start))['status']).toBe('AMBIGUOUS');
            await expectWaiting(subject, 1, READINGS);
          } else {
            expect(expectResult(await subject.run(start))['status']).toBe('AMBIGUOUS');
            expect((await subject.run({ ...answer, stop })).killed).toBe(true);
            // Nothing is saved before round 2's first attempt ends: killed in its call, the run still waits, and the
            // clarification is taken afresh; from then on it is under way (or ended), and the same one is recognised.
            const state = (await subject.stored())?.snapshot as { value?: string } | undefined;
            if (stop === 'call:1') expect(state?.value).toBe('awaitingClarification');
            else expect(state?.value).toBe(stop === 'saved:2' ? 'repaired' : 'calling');
          }
          const done = expectResult(await subject.run(answer));
          expect(comparable(done)).toEqual(comparable(await uninterruptedClarify('clarified', [1])));
          expect(subject.calls()).toEqual(once(3, repeated));
          expect(await subject.stored()).toBeUndefined();
        });
      }

      it('a choice that is none of the readings is a TypeError, nothing is called, and the run still waits', { timeout: 60_000 }, async () => {
        const subject = make();
        expectResult(await subject.run({ script: 'clarified', awaitClarification: true }));
        const waiting = await subject.stored();
        for (const clarification of [2, -1, 0.5, 'Mercury the god', 'mercury the element ', { rephrased: '  ' }, { reading: 0 }] as ClarificationChoice[]) {
          const { error, result } = await subject.run({ script: 'clarified', clarification });
          expect(result, JSON.stringify(clarification)).toBeNull();
          expect(error?.name, JSON.stringify(clarification)).toBe('TypeError');
          expect(error?.message).toMatch(/^Expected `clarification(\.rephrased)?` to be /);
          // The readings are the model's text and the choice the person's: never quoted.
          expect(error?.message).not.toMatch(/Mercury|mercury|god/);
        }
        expect(subject.calls()).toEqual([0]);
        expect(await subject.stored()).toEqual(waiting);
        // The right choice still continues it.
        expect(expectResult(await subject.run({ script: 'clarified', clarification: 0 }))['status']).toBe('REPAIRED');
      });

      it('a clarification with no run waiting under the key is a TypeError, nothing called: none saved, one under way, one ended, another choice after the crash', { timeout: 60_000 }, async () => {
        const subject = make();
        const noneWaits = /^`clarification` was given, but no run under key "(k|clarify-\d+)" waits for it/;
        const none = await subject.run({ script: 'clarified', clarification: 0 });
        expect(none.error).toEqual({ name: 'TypeError', message: expect.stringMatching(noneWaits) });
        expect(subject.calls()).toEqual([]);

        // Under way in round 1, before the model said the question was ambiguous.
        expect((await subject.run({ script: 'clarified', awaitClarification: true, stop: 'call:0' })).killed).toBe(true);
        expect((await subject.run({ script: 'clarified', clarification: 0 })).error).toMatchObject({ name: 'TypeError', message: expect.stringMatching(noneWaits) });
        expect(subject.calls()).toEqual([0]);

        // Under way in round 2 with reading 1 (attempt 1 saved): another reading is not the one it was given.
        expect(expectResult(await subject.run({ script: 'clarified', awaitClarification: true }))['status']).toBe('AMBIGUOUS');
        expect((await subject.run({ script: 'clarified', clarification: 1, stop: 'call:2' })).killed).toBe(true);
        for (const other of [0, READINGS[0], { rephrased: 'How dense is mercury?' }] as ClarificationChoice[]) {
          expect((await subject.run({ script: 'clarified', clarification: other })).error, JSON.stringify(other)).toMatchObject({ name: 'TypeError', message: expect.stringMatching(noneWaits) });
        }
        expect(subject.calls()).toEqual([0, 0, 1, 2]);
        // The same reading, by its text rather than its index, is the one it was given.
        expect(expectResult(await subject.run({ script: 'clarified', clarification: READINGS[1] }))['status']).toBe('REPAIRED');
        expect(subject.calls()).toEqual([0, 0, 1, 2, 2]);
        expect(await subject.stored()).toBeUndefined();
        // Ended and deleted: nothing waits any more.
        expect((await subject.run({ script: 'clarified', clarification: 1 })).error).toMatchObject({ name: 'TypeError', message: expect.stringMatching(noneWaits) });
      });

      it('a rephrased question continues it as clarify() with { rephrased } does', { timeout: 60_000 }, async () => {
        const subject = make();
        const rephrased = 'How dense is the element mercury, "Hg",\nat room temperature?';
        expectResult(await subject.run({ script: 'clarified', awaitClarification: true }));
        expect((await subject.run({ script: 'clarified', clarification: { rephrased }, stop: 'call:1' })).killed).toBe(true);
        const done = expectResult(await subject.run({ script: 'clarified', clarification: { rephrased } }));
        expect(comparable(done)).toEqual(comparable(await uninterruptedClarify('clarified', [{ rephrased }])));
        expect(done['clarifications']).toEqual([{ question: QUESTION, readings: READINGS, chosen: null, rephrased, attempt: 1 }]);
        const prompts = done['prompts'] as Array<{ kind: string; text: string }>;
        // Quoted as a JSON string: the person's line break and quotes cannot break the prompt's structure.
        expect(prompts[1]?.text).toContain(JSON.stringify(rephrased));
        expect(subject.calls()).toEqual([0, 1, 1, 2]);
        expect(await subject.stored()).toBeUndefined();
      });

      it('maxClarifications 1: ambiguous again after the clarification is AMBIGUOUS for good, and the checkpoint is deleted', { timeout: 60_000 }, async () => {
        const subject = make();
        const start = expectResult(await subject.run({ script: 'twice', awaitClarification: true, maxClarifications: 1 }));
        expect(start['status']).toBe('AMBIGUOUS');
        await expectWaiting(subject, 1, READINGS);
        const done = expectResult(await subject.run({ script: 'twice', clarification: 1, maxClarifications: 1 }));
        expect(comparable(done)).toEqual(comparable(await uninterruptedClarify('twice', [1], { maxClarifications: 1 })));
        expect(done).toMatchObject({ status: 'AMBIGUOUS', interpretations: AGAIN_READINGS });
        expect((done['trace'] as Array<{ state: string }>).at(-1)?.state).toBe('ambiguous');
        expect(subject.calls()).toEqual([0, 1]);
        expect(await subject.stored()).toBeUndefined();
        // Nothing waits: a second clarification is refused.
        expect((await subject.run({ script: 'twice', clarification: 0, maxClarifications: 1 })).error?.name).toBe('TypeError');
      });

      it('two rounds of clarification (maxClarifications 2, the default): it waits again, and the second choice ends it as two clarify() calls do', { timeout: 60_000 }, async () => {
        const subject = make();
        expectResult(await subject.run({ script: 'twice', awaitClarification: true }));
        const second = expectResult(await subject.run({ script: 'twice', clarification: READINGS[1] }));
        expect(second).toMatchObject({ status: 'AMBIGUOUS', interpretations: AGAIN_READINGS });
        await expectWaiting(subject, 2, AGAIN_READINGS);
        // Once clarified, a reading is named by its text: an index could count in either round's readings.
        expect((await subject.run({ script: 'twice', clarification: 0 })).error?.name).toBe('TypeError');
        expect((await subject.run({ script: 'twice', clarification: AGAIN_READINGS[0], stop: 'call:2' })).killed).toBe(true);
        const done = expectResult(await subject.run({ script: 'twice', clarification: AGAIN_READINGS[0] }));
        expect(comparable(done)).toEqual(comparable(await uninterruptedClarify('twice', [1, 0])));
        // The third round's first attempt is confident: VERIFIED counts from the round's start.
        expect(done['status']).toBe('VERIFIED');
        expect((done['clarifications'] as unknown[]).length).toBe(2);
        expect(subject.calls()).toEqual([0, 1, 2, 2]);
        expect(await subject.stored()).toBeUndefined();
      });
    });
  }
});

describe('a waiting run on either engine: saved by one, continued by the other', () => {
  for (const [started, continued] of [['stepper', 'actor'], ['actor', 'stepper'], ['actor', 'actor']] as const) {
    it(`started on the ${started}, continued on the ${continued}: the same result as clarify() in memory`, async () => {
      const subject = inMemory();
      forceEngine(started);
      expectResult(await subject.run({ script: 'twice', awaitClarification: true }));
      expectResult(await subject.run({ script: 'twice', clarification: 1 }));
      forceEngine(continued);
      expectResult(await subject.run({ script: 'twice', awaitClarification: true }));
      expect((await subject.run({ script: 'twice', clarification: AGAIN_READINGS[0], stop: 'call:2' })).killed).toBe(true);
      const done = expectResult(await subject.run({ script: 'twice', clarification: AGAIN_READINGS[0] }));
      forceEngine(null);
      expect(comparable(done)).toEqual(comparable(await uninterruptedClarify('twice', [1, 0])));
      expect(subject.calls()).toEqual([0, 1, 2, 2]);
    });
  }
});


describe('a sampling run waiting for its clarification', () => {
  it('waits with its samples, continues with the choice, and ends as clarify() in memory does', async () => {
    const options = { samples: 3, sampleConcurrency: 1, confidenceFrom: 'self' } as const;
    const calls: number[] = [];
    const call = scriptedCall('clarified');
    const counted = async (prompt: string, info: { attempt: number }) => {
      calls.push(info.attempt);
      return call(prompt, info);
    };
    const store = memoryStore();
    const first = await acheck(counted, QUESTION, { ...options, checkpoint: store, key: 'k', awaitClarification: true });
    expect(first.status).toBe('AMBIGUOUS');
    expect(first.attempts[0]?.samples).toHaveLength(3);
    expect((store.load('k') as { snapshot: { value: string } }).snapshot.value).toBe('awaitingClarification');
    const done = await acheck(counted, QUESTION, { ...options, checkpoint: store, key: 'k', clarification: 1 });
    expect(calls).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2]);
    const reference = await uninterruptedClarify('clarified', [1], options);
    expect(comparable(done)).toEqual(comparable(reference));
    expect(done.status).toBe('REPAIRED');
    expect(store.size).toBe(0);
  });
});
