import { ASYMMETRIC_MATCHERS_OBJECT, chai, customMatchers, type ExpectStatic, JestAsymmetricMatchers, JestChaiExpect, JestExtend } from '@vitest/expect';

/**
 * What 'vitest' is when tests/portable is bundled for Deno, Bun, workerd and Chromium
 * (tests/runtimes/bundle.ts aliases it here): `describe` and `it` register the tests, `run()`
 * runs them one after another. `expect` is vitest's own: chai with the plugins of
 * @vitest/expect, set up as vitest 4.1 sets up its global `expect`, so a matcher means in every
 * runtime what it means in Node.
 */

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);
// The report is the message alone, with no diff below it as vitest prints: values are shown up to 1000 characters, not chai's 40.
chai.config.truncateThreshold = 1000;

// Its own function, as in vitest, so that `extend` adds to it rather than to chai's `expect`.
export const expect = ((value: unknown, message?: string) => chai.expect(value, message)) as ExpectStatic;
Object.assign(expect, chai.expect);
// expect.objectContaining(), expect.any() and the other asymmetric matchers, which the plugin keeps on the global.
Object.assign(expect, (globalThis as Record<symbol, unknown>)[ASYMMETRIC_MATCHERS_OBJECT]);
// JestExtend gives chai's expect an `extend(expect, matchers)`, which vitest calls the same way.
expect.extend = (matchers) => (chai.expect as unknown as { extend(target: ExpectStatic, added: typeof matchers): void }).extend(expect, matchers);
// The matchers vitest adds to Jest's: toSatisfy, toBeOneOf.
expect.extend(customMatchers);

type TestFunction = () => unknown;
/** vitest's third argument: a timeout in milliseconds, or options holding one. */
type TestOptions = number | { timeout?: number };

interface Registered {
  readonly name: string;
  readonly fn: TestFunction;
  readonly timeoutMs: number;
}

/** Long enough for a run of the machine on a slow CI machine; short enough that a hung test does not hang the runtime. */
const DEFAULT_TIMEOUT_MS = 10_000;

const registered: Registered[] = [];
const skipped: string[] = [];
/** The file being imported, then the names of the `describe` blocks around the one being registered. */
const path: string[] = [];

function fullName(name: string): string {
  return [...path, name].join(' > ');
}

/**
 * Called by the bundle's entry before it imports each test file (imports run in order), so
 * that names read as vitest's do: `file > describe > test`.
 */
export function enterFile(file: string): void {
  path.length = 0;
  path.push(file);
}

export function describe(name: string, body: () => void): void {
  path.push(name);
  try {
    body();
  } finally {
    path.pop();
  }
}

export const it = Object.assign(
  (name: string, fn: TestFunction, options?: TestOptions): void => {
    const timeoutMs = (typeof options === 'number' ? options : options?.timeout) ?? DEFAULT_TIMEOUT_MS;
    registered.push({ name: fullName(name), fn, timeoutMs });
  },
  {
    skip: (name: string): void => {
      skipped.push(fullName(name));
    },
  },
);

export interface Failure {
  readonly name: string;
  readonly error: string;
}

export interface Results {
  /** The names of the tests that passed, for a runner to compare with the tests vitest finds. */
  readonly passed: readonly string[];
  readonly failed: readonly Failure[];
  readonly skipped: readonly string[];
}

/** Fails after `ms` unless `work` settles first; the timer is cleared either way, so nothing keeps a runtime alive. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.stack?.includes(error.message) ? error.stack : `${error.name}: ${error.message}\n${error.stack ?? ''}`;
  return String(error);
}

/** Runs every registered test once, one after another, in the order they were registered. */
export async function run(): Promise<Results> {
  const passed: string[] = [];
  const failed: Failure[] = [];
  for (const test of registered) {
    try {
      await within(test.timeoutMs, Promise.resolve().then(test.fn));
      passed.push(test.name);
    } catch (error) {
      failed.push({ name: test.name, error: describeError(error) });
    }
  }
  return { passed, failed, skipped: [...skipped] };
}
