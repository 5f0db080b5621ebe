import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acheck, type Checkpoint, CheckpointError } from '../../src/index.js';
import { redisStore } from '../../src/stores/redis-store.js';
import { startRedis, type RedisServer } from '../fixtures/redis-server.js';
import { decided } from '../fixtures/helpers.js';
import { forgedVerdict, refusedWithoutACall, resumesToRepaired, savedAfterFirstAttempt, withValueAt } from '../fixtures/forged-runs.js';
import { scriptedCall, storeContract, uninterrupted } from '../fixtures/store-contract.js';

let redis: RedisServer;
let client: Redis;
const clients: Redis[] = [];

function connect(): Redis {
  const connection = new Redis({ host: '127.0.0.1', port: redis.port });
  clients.push(connection);
  return connection;
}

beforeAll(async () => {
  redis = await startRedis();
  client = connect();
}, 30_000);

afterAll(async () => {
  await Promise.all(clients.map((connection) => connection.quit()));
  await redis.close();
});

const QUESTION = 'Which city is the capital of France?';
const CHECKPOINT: Checkpoint = { format: 'booth.checkpoint', version: 1, key: 'k', snapshot: { n: 1 } };
const WEEK = 7 * 24 * 60 * 60;

let stores = 0;
storeContract('redisStore', {
  // A prefix of its own per store: the contract's stores share the server, never a key.
  make: () => {
    const prefix = `contract-${++stores}:`;
    return {
      store: redisStore(client, { prefix }),
      prefix,
      count: async () => (await client.keys(`${prefix}*`)).length,
      location: (key: string) => `redis key ${prefix}${key}`,
    };
  },
  writeRaw: ({ prefix }, key, text) => client.set(`${prefix}${key}`, text),
});

storeContract('redisStore with a secret', {
  make: () => {
    const prefix = `contract-${++stores}:`;
    return {
      store: redisStore(client, { prefix, secret: 'a secret of more than sixteen bytes' }),
      prefix,
      count: async () => (await client.keys(`${prefix}*`)).length,
      location: (key: string) => `redis key ${prefix}${key}`,
    };
  },
  writeRaw: ({ prefix }, key, text) => client.set(`${prefix}${key}`, text),
});

/** Leaves `key` saved after attempt 0, stopped while attempt 1 is called; returns the attempts called. */
async function interrupt(store: ReturnType<typeof redisStore>, key: string): Promise<number[]> {
  const controller = new AbortController();
  const calls: number[] = [];
  const run = acheck(
    async (prompt, info) => {
      calls.push(info.attempt);
      if (info.attempt === 1) controller.abort(new Error('process going down'));
      return scriptedCall(prompt, info);
    },
    QUESTION,
    { maxRetries: 2, checkpoint: store, key, signal: controller.signal },
  );
  await expect(run).rejects.toThrow('process going down');
  return calls;
}

describe('redisStore', () => {
  it('a run stopped through one connection resumes through another, without repeating finished attempts', async () => {
    const calls = await interrupt(redisStore(client, { prefix: 'machine:' }), 'run-1');
    expect(await client.exists('machine:run-1')).toBe(1);

    const elsewhere = redisStore(connect(), { prefix: 'machine:' });
    const resumed = await acheck(
      async (prompt, info) => {
        calls.push(info.attempt);
        return scriptedCall(prompt, info);
      },
      QUESTION,
      { maxRetries: 2, checkpoint: elsewhere, key: 'run-1' },
    );
    expect(calls).toEqual([0, 1, 1, 2]); // only the call in flight is made again
    expect(decided(resumed)).toEqual(decided(await uninterrupted()));
    expect(await client.exists('machine:run-1')).toBe(0); // deleted on completion
  });

  it('saves with one SET carrying the expiry, under booth:checkpoint: by default', async () => {
    const monitor = await connect().monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
    await redisStore(client).save('k', CHECKPOINT);
    // Commands reach MONITOR in order: once the marker arrives, everything the save sent has too.
    await client.echo('end of save');
    while (!seen.some((args) => args[0]?.toLowerCase() === 'echo')) await sleep(10);
    monitor.disconnect();
    const sent = seen.filter((args) => args[0]?.toLowerCase() !== 'echo');
    expect(sent.map(([command, ...rest]) => [command?.toLowerCase(), ...rest])).toEqual([
      ['set', 'booth:checkpoint:k', JSON.stringify(CHECKPOINT), 'EX', String(WEEK)],
    ]);
    await client.del('booth:checkpoint:k');
  });

  it('sets the expiry: a week by default, ttlSeconds when given, none with null; every save restarts it', async () => {
    await redisStore(client, { prefix: 'ttl-default:' }).save('k', CHECKPOINT);
    expect(await client.ttl('ttl-default:k')).toBeGreaterThan(WEEK - 5);
    expect(await client.ttl('ttl-default:k')).toBeLessThanOrEqual(WEEK);

    const hourly = redisStore(client, { prefix: 'ttl-hour:', ttlSeconds: 3600 });
    await hourly.save('k', CHECKPOINT);
    expect(await client.ttl('ttl-hour:k')).toBeGreaterThan(3595);
    await client.expire('ttl-hour:k', 10); // as if the run had sat untouched for most of the hour
    await hourly.save('k', { ...CHECKPOINT, snapshot: { n: 2 } });
    expect(await client.ttl('ttl-hour:k')).toBeGreaterThan(3595);

    await redisStore(client, { prefix: 'ttl-none:', ttlSeconds: null }).save('k', CHECKPOINT);
    expect(await client.ttl('ttl-none:k')).toBe(-1); // -1: the key exists and has no expiry

    // The largest ttlSeconds accepted is one Redis takes.
    await redisStore(client, { prefix: 'ttl-max:', ttlSeconds: Number.MAX_SAFE_INTEGER }).save('k', CHECKPOINT);
    expect(await client.ttl('ttl-max:k')).toBeGreaterThan(WEEK);
    await client.del('ttl-default:k', 'ttl-hour:k', 'ttl-none:k', 'ttl-max:k');
  });

  it('an abandoned checkpoint expires, and the run then starts afresh', async () => {
    const store = redisStore(client, { prefix: 'expiring:', ttlSeconds: 1 });
    await interrupt(store, 'run');
    expect(await store.load('run')).toEqual(expect.objectContaining({ key: 'run' }));
    await sleep(1_100);
    expect(await store.load('run')).toBeUndefined();
    expect(decided(await acheck(scriptedCall, QUESTION, { maxRetries: 2, checkpoint: store, key: 'run' }))).toEqual(
      decided(await uninterrupted()),
    );
  });

  it('a value that is not JSON is the CheckpointError the file store gives for a corrupt file', async () => {
    await client.set('booth:checkpoint:run-7', '{"format": "booth.checkpoint", "snap');
    const run = acheck(scriptedCall, QUESTION, { checkpoint: redisStore(client), key: 'run-7' });
    await expect(run).rejects.toBeInstanceOf(CheckpointError);
    await expect(run).rejects.toThrow(
      /^Booth checkpoint for key "run-7" in redis key booth:checkpoint:run-7 is corrupt: .+\. Delete the key to start the run afresh\.$/,
    );
    await expect(run).rejects.toMatchObject({ key: 'run-7', location: 'redis key booth:checkpoint:run-7' });
    expect(await client.get('booth:checkpoint:run-7')).toBe('{"format": "booth.checkpoint", "snap'); // left for a human to look at
    await client.del('booth:checkpoint:run-7');
  });

  it('delete removes the key', async () => {
    const store = redisStore(client, { prefix: 'deleting:' });
    await store.save('k', CHECKPOINT);
    expect(await client.exists('deleting:k')).toBe(1);
    await store.delete('k');
    expect(await client.exists('deleting:k')).toBe(0);
  });

  it('two prefixes are two stores: the same key in each is a different run', async () => {
    const first = redisStore(client, { prefix: 'team-a:' });
    const second = redisStore(client, { prefix: 'team-b:' });
    await interrupt(first, 'shared');
    expect(await second.load('shared')).toBeUndefined();

    const result = await acheck(async () => '{"answer": "Paris", "confidence": 0.95}', 'another question', { checkpoint: second, key: 'shared' });
    expect(result.status).toBe('VERIFIED');
    expect(await client.exists('team-b:shared')).toBe(0);
    expect(await first.load('shared')).toEqual(expect.objectContaining({ key: 'shared' })); // untouched by the other run
    expect(first.locate?.('shared')).toBe('redis key team-a:shared');
    await first.delete('shared');
  });
});

describe('redisStore arguments', () => {
  // Arguments TypeScript would refuse, as a JavaScript caller could pass them.
  const looseRedisStore = redisStore as unknown as (client: unknown, options?: unknown) => unknown;

  it('a client without get, set and del is a TypeError naming `client`, the value and ioredis', () => {
    const partial = { get: () => null, set: () => 'OK' };
    for (const [value, shown] of [
      [null, 'null'],
      [undefined, 'undefined'],
      ['redis://127.0.0.1:6379', '"redis://127.0.0.1:6379"'],
      [{}, 'an object'],
      [partial, 'an object'],
    ] as const) {
      expect(() => looseRedisStore(value)).toThrow(TypeError);
      expect(() => looseRedisStore(value)).toThrow(
        `Expected \`client\` to be a Redis client with get, set and del, such as \`new Redis(url)\` from ioredis, got ${shown}.`,
      );
    }
  });

  it('a prefix that is not a string is a TypeError naming `prefix` and the value', () => {
    for (const [prefix, shown] of [[42, '42'], [null, 'null'], [['a'], 'an array']] as const) {
      expect(() => looseRedisStore(client, { prefix })).toThrow(TypeError);
      expect(() => looseRedisStore(client, { prefix })).toThrow(`Expected \`prefix\` to be a string put before every key, such as "myapp:booth:", got ${shown}.`);
    }
  });

  it('a ttlSeconds that is not a whole number is a TypeError; below 1 a RangeError pointing to null', () => {
    for (const [ttlSeconds, shown] of [[1.5, '1.5'], ['60', '"60"'], [Number.NaN, 'NaN'], [Number.POSITIVE_INFINITY, 'Infinity'], [2 ** 53, '9007199254740992']] as const) {
      expect(() => looseRedisStore(client, { ttlSeconds })).toThrow(TypeError);
      expect(() => looseRedisStore(client, { ttlSeconds })).toThrow(
        `Expected \`ttlSeconds\` to be a whole number of seconds, such as 86400 for a day, or null for no expiry, got ${shown}.`,
      );
    }
    for (const [ttlSeconds, shown] of [[0, '0'], [-60, '-60']] as const) {
      expect(() => looseRedisStore(client, { ttlSeconds })).toThrow(RangeError);
      expect(() => looseRedisStore(client, { ttlSeconds })).toThrow(`Expected \`ttlSeconds\` to be 1 or more, got ${shown};`);
      expect(() => looseRedisStore(client, { ttlSeconds })).toThrow('Pass null to keep checkpoints until their run completes.');
    }
  });

  it('options that are not an object, or a misspelt option, are a TypeError naming them', () => {
    expect(() => looseRedisStore(client, 60)).toThrow('Expected `options` to be a plain object, got 60.');
    expect(() => looseRedisStore(client, { ttl_seconds: 60 })).toThrow('Unknown option `ttl_seconds` for redisStore(); did you mean `ttlSeconds`?');
    expect(() => looseRedisStore(client, { ttl: 60 })).toThrow('Unknown option `ttl` for redisStore(); the options are `prefix`, `ttlSeconds`, `secret`.');
  });
});

describe('redisStore: what another machine wrote is not trusted', () => {
  const SECRET = 'a secret of more than sixteen bytes';

  it('a forged verdict (VERIFIED on an attempt of confidence 0.1) written to the server is refused, with no call', async () => {
    const store = redisStore(client, { prefix: 'forged:' });
    const saved = await savedAfterFirstAttempt(store, 'k');
    await client.set('forged:k', JSON.stringify(forgedVerdict(saved)));
    await refusedWithoutACall(store, 'k', 'Booth checkpoint for key "k" in redis key forged:k says the run ended VERIFIED');
  });

  it('with a secret, a signed run resumes through another connection; the value carries its signature', async () => {
    await savedAfterFirstAttempt(redisStore(client, { prefix: 'signed:', secret: SECRET }), 'k');
    expect(JSON.parse((await client.get('signed:k')) ?? 'null')).toHaveProperty('signature', expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/));
    await resumesToRepaired(redisStore(connect(), { prefix: 'signed:', secret: SECRET }), 'k');
  });

  it('with a secret, a tampered, an unsigned and another secret\'s checkpoint are each refused, with no call', async () => {
    const store = redisStore(client, { prefix: 'tampered:', secret: SECRET });
    await savedAfterFirstAttempt(store, 'k');
    const stored = JSON.parse((await client.get('tampered:k')) ?? 'null') as Parameters<typeof forgedVerdict>[0];
    // Consistent with its attempts, so only the signature can tell.
    await client.set('tampered:k', JSON.stringify(withValueAt(forgedVerdict(stored), 'snapshot.context.attempts[0].confidence', 0.95)));
    await refusedWithoutACall(store, 'k', "in redis key tampered:k has a signature that does not match this store's secret");

    await savedAfterFirstAttempt(redisStore(client, { prefix: 'unsigned:' }), 'k');
    await refusedWithoutACall(redisStore(client, { prefix: 'unsigned:', secret: SECRET }), 'k', 'carries no signature, and this store has a secret');

    await savedAfterFirstAttempt(redisStore(client, { prefix: 'other:', secret: 'another secret, also long enough' }), 'k');
    await refusedWithoutACall(redisStore(client, { prefix: 'other:', secret: SECRET }), 'k', "has a signature that does not match this store's secret");
  });
});
