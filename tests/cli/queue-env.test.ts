import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope } from '../fixtures/helpers.js';
import { booth, dir, resultsIn, type Run, spawnBooth, useProvider } from '../fixtures/booth-process.js';
import { type RedisServer, startRedis } from '../fixtures/redis-server.js';

// `--queue-env`: the Redis password kept out of the command line, which every local user reads
// with `ps`. A real redis-server started with --requirepass, real `booth` processes.

/** Characters a password may hold that a URL would have to encode: `%41` must reach Redis as `%41`, not `A`. */
const PASSWORD = 'pa%41ss:w@rd/#?&=';
const USER_PASSWORD = 'us%zzer/pw@';

const server = useProvider();
let redis: RedisServer;
let admin: Redis;
let runs = 0;
const newRun = () => `env-run-${++runs}`;

beforeAll(async () => {
  redis = await startRedis(PASSWORD);
  admin = new Redis(redis.url, { password: PASSWORD, maxRetriesPerRequest: null });
  await admin.call('ACL', 'SETUSER', 'booth-user', 'on', `>${USER_PASSWORD}`, '~*', '&*', '+@all');
}, 30_000);

afterAll(async () => {
  admin.disconnect();
  await redis.close();
});

function questions(count: number): string {
  const file = join(dir(), 'questions.jsonl');
  writeFileSync(file, Array.from({ length: count }, (_, i) => JSON.stringify({ id: i, prompt: `question ${i}` })).join('\n'));
  return file;
}

/** The process's own command line, as `ps` shows it to every local user. */
const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');

const envWith = (vars: Record<string, string>) => ({ ...process.env, ...vars });

describe('booth batch --queue-env and booth worker --queue-env', () => {
  const setups: Array<[string, (port: number) => { flags: string[]; env: Record<string, string>; secret: string }]> = [
    ['the whole URL in the variable', (port) => ({
      flags: ['--queue-env', 'BOOTH_REDIS_URL'],
      env: { BOOTH_REDIS_URL: `redis://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}/0` },
      secret: PASSWORD,
    })],
    ['the password alone in the variable, the URL without it in --queue', (port) => ({
      flags: ['--queue', `redis://127.0.0.1:${port}/0`, '--queue-env', 'BOOTH_REDIS_PASSWORD'],
      env: { BOOTH_REDIS_PASSWORD: PASSWORD },
      secret: PASSWORD,
    })],
    ['an ACL user in --queue, its password in the variable', (port) => ({
      flags: ['--queue', `redis://booth-user@127.0.0.1:${port}/0`, '--queue-env', 'BOOTH_REDIS_PASSWORD'],
      env: { BOOTH_REDIS_PASSWORD: USER_PASSWORD },
      secret: USER_PASSWORD,
    })],
  ];

  for (const [name, setup] of setups) {
    it(`${name}: a worker and a batch run every question, and the password is in neither's argv nor output`, async () => {
      server.provider.fallback = () => ({ text: envelope('42', 0.9) });
      const { flags, env, secret } = setup(redis.port);
      const run = newRun();
      const worker = spawnBooth(['worker', ...flags, '--name', run, ...server.endpoint, '--lock-ms', '2000'], envWith(env));
      try {
        for (const deadline = Date.now() + 20_000; !worker.said().includes('booth worker: checking run'); await sleep(20)) {
          if (worker.child.exitCode !== null || Date.now() > deadline) throw new Error(`worker did not start: ${worker.said()}`);
        }
        const output = join(dir(), 'results.jsonl');
        const batch = spawnBooth(['batch', questions(3), ...flags, '--name', run, '-o', output], envWith(env));
        const argvs = [commandLine(worker.child.pid as number), commandLine(batch.child.pid as number)];
        const done: Run = await batch.done;
        expect(done.code, done.stderr).toBe(0);
        expect(resultsIn(output).map((r) => r.id).sort()).toEqual([0, 1, 2]);
        expect(resultsIn(output).every((r) => r.status === 'VERIFIED')).toBe(true);
        for (const argv of argvs) {
          expect(argv).toContain('--queue-env');
          expect(argv).not.toContain(secret);
          expect(argv).not.toContain(encodeURIComponent(secret));
        }
        expect(done.stderr + done.stdout + worker.said()).not.toContain(secret);
        expect(worker.said()).toMatch(/booth worker: checking run env-run-\d+ from redis:\/\/(booth-user)?(:\*\*\*)?@?127\.0\.0\.1/);
      } finally {
        worker.child.kill('SIGTERM');
        await worker.done;
      }
    }, 90_000);
  }

  it('a wrong password from the variable is refused by Redis: exit 1 naming the reason, not the password', async () => {
    const result = await booth(
      ['batch', questions(1), '--queue', `redis://127.0.0.1:${redis.port}/0`, '--queue-env', 'BOOTH_REDIS_PASSWORD', '--name', newRun(), '-o', join(dir(), 'x.jsonl')],
      undefined,
      envWith({ BOOTH_REDIS_PASSWORD: 'not-the-password-42' }),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`error: Redis at redis://:***@127.0.0.1:${redis.port}/0 (--queue) refused it: WRONGPASS`);
    expect(result.stderr).not.toContain('not-the-password-42');
  }, 30_000);

  it('a variable that is unset, empty or not what its use needs is bad usage (exit 2) naming the variable, never its value, before touching Redis', async () => {
    const input = questions(1);
    const url = `redis://127.0.0.1:${redis.port}/0`;
    const out = ['-o', join(dir(), 'x.jsonl')];
    const cases: Array<[string[], Record<string, string>, string]> = [
      [['batch', input, '--queue-env', 'BOOTH_UNSET_VARIABLE', '--name', 'r', ...out], {}, "error: option '--queue-env BOOTH_UNSET_VARIABLE': $BOOTH_UNSET_VARIABLE is not set; set it to the Redis URL."],
      [['worker', '--queue', url, '--queue-env', 'BOOTH_UNSET_VARIABLE', '--name', 'r', ...server.endpoint], {}, "error: option '--queue-env BOOTH_UNSET_VARIABLE': $BOOTH_UNSET_VARIABLE is not set; set it to the Redis password."],
      [['worker', '--queue-env', 'BOOTH_EMPTY', '--name', 'r', ...server.endpoint], { BOOTH_EMPTY: '' }, "error: option '--queue-env BOOTH_EMPTY': $BOOTH_EMPTY is empty; set it to the Redis URL."],
      [['batch', input, '--queue-env', 'BOOTH_SECRET', '--name', 'r', ...out], { BOOTH_SECRET: 'hunter2-secret' }, "error: option '--queue-env BOOTH_SECRET': $BOOTH_SECRET is not a Redis URL: expected a Redis URL such as redis://127.0.0.1:6379/0"],
      [['worker', '--queue-env', 'BOOTH_SECRET', '--name', 'r', ...server.endpoint], { BOOTH_SECRET: 'http://:hunter2-secret@127.0.0.1:6379' }, '$BOOTH_SECRET is not a Redis URL'],
      [['batch', input, '--queue', url, '--queue-env', 'BOOTH_SECRET', '--name', 'r', ...out], { BOOTH_SECRET: `redis://:hunter2-secret@127.0.0.1:${redis.port}` }, 'with --queue, $BOOTH_SECRET holds only the password, but it holds a Redis URL'],
      [['worker', '--queue', `redis://:other-secret@127.0.0.1:${redis.port}/0`, '--queue-env', 'BOOTH_SECRET', '--name', 'r', ...server.endpoint], { BOOTH_SECRET: 'hunter2-secret' }, 'gives the password, but the --queue URL holds one too'],
      [['worker', '--name', 'r', ...server.endpoint], {}, "error: required option '--queue <url>' (or --queue-env <var>) not specified"],
      [['batch', input, '--queue-env', 'BOOTH_SECRET', ...out], { BOOTH_SECRET: url }, "needs --name <run>"],
    ];
    for (const [args, env, message] of cases) {
      const result = await booth(args, undefined, envWith(env));
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(message);
      expect(result.stderr, args.join(' ')).not.toContain('hunter2');
      expect(result.stderr, args.join(' ')).not.toContain('other-secret');
    }
    expect(server.provider.received).toHaveLength(0);
  }, 120_000);
});
