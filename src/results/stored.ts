import { checkpointMachine } from '../../machines/checkpoint/machine.js';
import { evidenceMachine } from '../../machines/evidence.js';
import { CONFIDENCE_SOURCES } from '../decide/agreement.js';
import { LONGEST_WAIT_MS } from '../decide/call-retries.js';
import { AMBIGUOUS, REPAIRED, UNCERTAIN, VERIFIED } from '../decide/constants.js';
import { MAX_CLARIFICATIONS_LIMIT, MAX_RETRIES_LIMIT, MAX_SAMPLES } from '../options/read-options.js';
import { isPlainObject } from '../util/values.js';

/**
 * Runs read back: a checkpoint's snapshot from a store, and a checkpoint output or result
 * line handed to `resultFrom()` or the drawings. Both are untrusted — anyone who can write
 * the directory, the Redis server or the JSON file wrote them — and what they hold reaches
 * results, `onAttempt`, the machine's guards and the pages. So both are checked here, by
 * one walker over one description of every field, before anything reads them.
 *
 * A problem names the field's path and the kind of value found, never the value itself:
 * a stored field may hold a prompt, a reply, or markup meant for a page.
 */

/** Throws, with the problem in words: the caller's error type and its fix around it. */
export type Fail = (problem: string) => never;

/**
 * What one field must be: `expected` says it in words, `check` fails on the first field that
 * is not. `as` is what a value of the wrong kind here is told it should have been: `expected`,
 * or more (`… or null`).
 */
interface Shape {
  readonly expected: string;
  readonly check: (value: unknown, path: string, fail: Fail, as: string) => void;
}

const checkField = (shape: Shape, value: unknown, path: string, fail: Fail) => shape.check(value, path, fail, shape.expected);

/** The kind of a value, for a problem: numbers and booleans as themselves (they hold no text), anything else by type. */
export function kindOf(value: unknown): string {
  if (value === undefined) return 'missing';
  if (value === null) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return 'a string';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function wrong(path: string, value: unknown, expected: string, fail: Fail): never {
  return fail(`${path === '' ? 'value' : path} is ${kindOf(value)}, expected ${expected}`);
}

const leaf = (expected: string, fits: (value: unknown) => boolean): Shape => ({
  expected,
  check: (value, path, fail, as) => {
    if (!fits(value)) wrong(path, value, as, fail);
  },
});

const nullable = (shape: Shape): Shape => ({
  expected: `${shape.expected} or null`,
  check: (value, path, fail, as) => {
    if (value !== null) shape.check(value, path, fail, as);
  },
});

const listOf = (item: Shape, items: string): Shape => ({
  expected: `an array of ${items}`,
  check: (value, path, fail, as) => {
    if (!Array.isArray(value)) wrong(path, value, as, fail);
    for (let i = 0; i < value.length; i += 1) checkField(item, value[i], `${path}[${i}]`, fail);
  },
});

const oneOf = (values: readonly unknown[]): Shape =>
  leaf(values.length === 1 ? JSON.stringify(values[0]) : `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`, (value) => values.includes(value));

/** The field itself, never one inherited: a stored object's prototype is not the store's to choose. */
const own = (object: object, key: string): unknown => (Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined);

/**
 * An object with these fields. `optional` ones may be absent (undefined): fields a Booth
 * from before they existed did not write, which the reader fills in. Other keys are left
 * alone: a result line carries its own (`id`, `latencyMs`, `ok`…), and nothing reads them.
 */
const record = (expected: string, fields: Readonly<Record<string, Shape>>, optional: Readonly<Record<string, Shape>> = {}): Shape => {
  const required = Object.entries(fields);
  const absentOk = Object.entries(optional);
  return {
    expected,
    check: (value, path, fail, as) => {
      if (!isPlainObject(value)) wrong(path, value, as, fail);
      const at = (key: string) => (path === '' ? key : `${path}.${key}`);
      for (const [key, shape] of required) checkField(shape, own(value, key), at(key), fail);
      for (const [key, shape] of absentOk) {
        const field = own(value, key);
        if (field !== undefined) checkField(shape, field, at(key), fail);
      }
    },
  };
};

/**
 * Every shape, made on the first read of a stored run rather than as the module loads. Calls at
 * the top of a module are kept by a bundler in every bundle that loads the module, and tsup puts
 * this one in the chunk every entry point loads: made at load time, they (and the evidence
 * machine they name) landed in a bundle of check() alone, which reads no stored run.
 */
function describeStoredRuns() {
  const text = leaf('a string', (value) => typeof value === 'string');
  const flag = leaf('true or false', (value) => typeof value === 'boolean');
  const anything = leaf('any value', () => true);
  const index = leaf('a whole number, 0 or more', (value) => Number.isSafeInteger(value) && (value as number) >= 0);
  const ms = leaf('a number of ms, 0 or more', (value) => Number.isFinite(value) && (value as number) >= 0);
  /** A wait the run arms a timer for: no longer than a timer can wait (Node fires a longer one at once). */
  const timerMs = leaf(`a number of ms from 0 to ${LONGEST_WAIT_MS}`, (value) => Number.isFinite(value) && (value as number) >= 0 && (value as number) <= LONGEST_WAIT_MS);
  const share = leaf('a number from 0 to 1', (value) => typeof value === 'number' && value >= 0 && value <= 1);
  const texts = listOf(text, 'strings');
  const modelName = leaf('a model name, a non-blank string of at most 200 characters', (value) => typeof value === 'string' && value.trim() !== '' && value.length <= 200);
  // As isUsage() has it, field by field, so a problem names the count.
  const usage = nullable(
    record('token counts ({ inputTokens, outputTokens, totalTokens, costUsd })', {
      inputTokens: index,
      outputTokens: index,
      totalTokens: index,
      costUsd: nullable(leaf('a number of dollars, 0 or more', (value) => Number.isFinite(value) && (value as number) >= 0)),
    }),
  );
  const jsonObject = nullable(leaf('a JSON object', isPlainObject));
  const timer = nullable(leaf('a number of ms more than 0', (value) => typeof value === 'number' && value > 0 && value <= 2 ** 31 - 2));

  const callTry = record(
    'a call ({ error, delayMs, permanent? })',
    { error: nullable(text), delayMs: nullable(timerMs) },
    { permanent: leaf('true', (value) => value === true) },
  );
  const callTries = listOf(callTry, 'calls');
  const schemaIssue = record('a schema issue ({ path, message })', { path: text, message: text });

  /** The fields a sample and an attempt share. */
  function readingFields(answer: Shape): Record<string, Shape> {
    return {
      rawText: text,
      answer: nullable(answer),
      confidence: nullable(share),
      parseOk: flag,
      error: nullable(text),
      callFailed: flag,
      ambiguous: flag,
      interpretations: texts,
    };
  }

  /**
   * The shapes of a run's data, for runs without a schema (answers are strings) and with one
   * (answers are the schema's output, or the model's JSON): made once each.
   */
  function shapes(typed: boolean) {
    const answer = typed ? anything : text;
    const sample = record('a sample', { ...readingFields(answer), callTries }, { skipped: leaf('true', (value) => value === true) });
    const cluster = record('a cluster ({ answer, count, meanConfidence, samples })', {
      answer,
      count: leaf('a whole number, 1 or more', (value) => Number.isSafeInteger(value) && (value as number) >= 1),
      meanConfidence: share,
      samples: listOf(index, 'sample indexes'),
    });
    const attempt = record(
      'an attempt',
      {
        ...readingFields(answer),
        chosenInterpretation: nullable(text),
        passedValidation: flag,
        validationError: nullable(text),
        parsed: jsonObject,
        callTries,
        durationMs: ms,
      },
      // Written only by a Booth with schemas, usage and sampling; only sampling attempts have the last three.
      {
        schemaIssues: nullable(listOf(schemaIssue, 'schema issues')),
        usage,
        samples: listOf(sample, 'samples'),
        clusters: listOf(cluster, 'clusters'),
        agreeError: nullable(text),
        model: modelName,
      },
    );
    return { attempt, attempts: listOf(attempt, 'attempts') };
  }

  const untyped = shapes(false);
  const typed = shapes(true);

  const RETRY_KINDS = ['first', 'repeat', 'parse', 'validation', 'disagreement', 'confidence', 'clarification', 'escalation'] as const;
  const escalations = listOf(record('an escalation ({ attempt, model })', { attempt: index, model: nullable(modelName) }), 'escalations');
  const clarifications = listOf(
    record('a clarification ({ question, readings, chosen, rephrased, attempt })', { question: text, readings: texts, chosen: nullable(text), rephrased: nullable(text), attempt: index }),
    'clarifications',
  );
  const prompts = listOf(record('a prompt ({ kind, text })', { kind: oneOf(RETRY_KINDS), text }), 'prompts');
  const stepOf = (states: readonly string[]) => record('a step ({ state, attempt })', { state: oneOf(states), attempt: index });
  const CHECKPOINT_STATES = Object.keys(checkpointMachine.root.states);
  const CHECK_STATUSES = [VERIFIED, REPAIRED, AMBIGUOUS, UNCERTAIN] as const;

  const callRetries = nullable(
    record(
      'a call retry policy ({ retries, minDelayMs, maxDelayMs, factor })',
      { retries: index },
      { minDelayMs: ms, maxDelayMs: ms, factor: leaf('a number of at least 1', (value) => Number.isFinite(value) && (value as number) >= 1) },
    ),
  );
  const sampleCount = leaf(`a whole number from 1 to ${MAX_SAMPLES}`, (value) => Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= MAX_SAMPLES);
  const confidenceFrom = oneOf(CONFIDENCE_SOURCES);
  /** How a model gathers its samples; its checks are samplePlan()'s, asked again when a resumed run is compared with the caller's. */
  const samplePlan = record('a sample plan ({ max, min, stop })', {
    max: sampleCount,
    min: sampleCount,
    stop: nullable(leaf("'decided' or { confidence }", (value) => value === 'decided' || (isPlainObject(value) && Object.keys(value).length === 1 && typeof (value as { confidence?: unknown }).confidence === 'number' && (value as { confidence: number }).confidence > 0.5 && (value as { confidence: number }).confidence < 1))),
  });

  /** `settings` of an output or a result: what the run was asked to do. Sampling's two fields are absent from one made before it. */
  const runSettings = record(
    'the run settings',
    {
      threshold: share,
      maxRetries: leaf(`a whole number from 0 to ${MAX_RETRIES_LIMIT}`, (value) => Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_RETRIES_LIMIT),
      validator: flag,
      schema: flag,
      timeoutMs: timer,
      deadlineMs: timer,
      callRetries,
    },
    { samples: sampleCount, confidenceFrom },
  );

  /** A digest of a text kept private or long (a system prompt, a schema): `sha256:` and 64 hex digits. */
  const digest = leaf('a digest, sha256: and 64 hex digits', (value) => typeof value === 'string' && /^sha256:[0-9a-f]{64}$/.test(value));
  /**
   * A host as `URL.host` writes it, with its port: never a user name, a password, a path or a
   * query, which a line must not hold (a key can hide in each).
   */
  const host = leaf('a host[:port] such as api.openai.com or 127.0.0.1:8080', (value) => typeof value === 'string' && value.length <= 300 && /^[a-z0-9._~%[\]:-]+$/i.test(value));

  /**
   * `run` of a `booth batch` line: what the line was made with besides `settings` — Booth's
   * version, the model, the endpoint's host, digests of the schema and the system prompt,
   * and the temperature and seed the calls were sent (null: none was sent).
   */
  const runRecord = record(
    'what the run ran with ({ booth, model, host, schema, system, temperature, seed, escalate?, samples? })',
    {
      booth: text,
      model: text,
      host,
      schema: nullable(digest),
      system: nullable(digest),
      temperature: nullable(leaf('a number, 0 or more', (value) => Number.isFinite(value) && (value as number) >= 0)),
      seed: nullable(leaf('a whole number', Number.isSafeInteger)),
    },
    // A cascade's next models: only in a line made with one.
    {
      escalate: listOf(record('a model of the cascade ({ model, host })', { model: text, host }), 'models of the cascade ({ model, host })'),
      // `--samples` in its adaptive form, as written: only in a line made with it.
      samples: leaf('--samples as written, such as max=5,stop=decided', (value) => typeof value === 'string' && value.length <= 100),
    },
  );

  /** A checkpoint machine's output or a check's result, read back: its settings null for an evidence check's. */
  function outputShape(typedRun: boolean): Shape {
    const { attempts } = typedRun ? typed : untyped;
    return record(
      "the checkpoint machine's output",
      {
        settings: nullable(runSettings),
        status: oneOf(CHECK_STATUSES),
        answer: typedRun ? anything : nullable(text),
        confidence: nullable(share),
        agreement: nullable(share),
        ambiguous: flag,
        interpretations: texts,
        parsed: jsonObject,
        attempts,
        prompts,
        // An evidence check's result draws from the evidence machine's states.
        trace: listOf(stepOf([...new Set([...CHECKPOINT_STATES, ...Object.keys(evidenceMachine.root.states)])]), 'steps'),
      },
      // Written only by a Booth that kept usage and time (and clarifications); `run` only on the lines of a `booth batch` that recorded it.
      { usage, durationMs: ms, run: runRecord, clarifications, escalations, budgetStop: nullable(text) },
    );
  }

  const outputs = { untyped: outputShape(false), typed: outputShape(true) };

  /** What a rerun of `booth batch` compares in an earlier line: `settings` and `run`, each absent from a line made before it was written. */
  const lineRecord = record('a result line', {}, { settings: nullable(runSettings), run: runRecord });

  /** A sample slot of the attempt under way. */
  const slotShape = (attempt: Shape) =>
    record('a sample slot', {
      state: oneOf(['held', 'queued', 'calling', 'backingOff', 'done', 'skipped']),
      call: leaf('a whole number, -1 or more', (value) => Number.isSafeInteger(value) && (value as number) >= -1),
      tries: callTries,
      backoffMs: timerMs,
      reply: nullable(attempt),
    });

  /**
   * The settings a checkpoint keeps. The ones a resumed run must share with the caller's
   * (prompt, threshold, timers…) are compared with the caller's, already checked, after this;
   * here each is only required to be of its type, so that comparison reads plain values. The
   * functions a run was given cannot be saved: a saved run has none.
   */
  const savedSettings = record(
    'the run settings',
    {
      prompt: text,
      threshold: share,
      maxRetries: index,
      effects: oneOf(['events']),
      hasValidator: flag,
      timeoutMs: timer,
      deadlineMs: timer,
      deadlineAt: nullable(leaf('a time in epoch ms', Number.isFinite)),
      callRetries,
    },
    {
      model: oneOf([null]),
      validator: oneOf([null]),
      schema: oneOf([null]),
      agree: oneOf([null]),
      answerFormat: nullable(record('an answer format ({ jsonSchema })', { jsonSchema: nullable(text) })),
      samples: sampleCount,
      sampleConcurrency: leaf('a whole number, 1 or more', (value) => Number.isSafeInteger(value) && (value as number) >= 1),
      confidenceFrom,
      // Written only by a Booth with conversations.
      system: nullable(text),
      messages: listOf(record('a turn ({ role, content })', { role: oneOf(['user', 'assistant']), content: text }), 'turns'),
      instructions: text,
      parseFn: oneOf([null]),
      // Written only by a Booth with clarifications.
      awaitClarification: flag,
      maxClarifications: leaf(`a whole number from 0 to ${MAX_CLARIFICATIONS_LIMIT}`, (value) => Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_CLARIFICATIONS_LIMIT),
      // Written only by a Booth with cascades, adaptive samples and budgets.
      models: listOf(record('a model ({ name, samples })', { name: nullable(modelName), samples: samplePlan }, { model: oneOf([null]) }), 'models'),
      budget: nullable(
        record('a budget ({ maxCalls, maxTokens, maxCostUsd })', {
          maxCalls: nullable(leaf('a whole number, 1 or more', (value) => Number.isSafeInteger(value) && (value as number) >= 1)),
          maxTokens: nullable(leaf('a whole number, 1 or more', (value) => Number.isSafeInteger(value) && (value as number) >= 1)),
          maxCostUsd: nullable(leaf('a number of dollars above 0', (value) => Number.isFinite(value) && (value as number) > 0)),
        }),
      ),
    },
  );

  function contextShape(typedRun: boolean): Shape {
    const { attempt, attempts } = typedRun ? typed : untyped;
    return record(
      "the run's data",
      {
        settings: savedSettings,
        attempt: index,
        startedAt: leaf('a time in epoch ms', Number.isFinite),
        prompts,
        tries: callTries,
        backoffMs: timerMs,
        draft: attempt,
        awaitingVerdict: flag,
        attempts,
        trace: listOf(stepOf(CHECKPOINT_STATES), 'steps'),
        status: nullable(oneOf(CHECK_STATUSES)),
      },
      // Written only by a Booth with sampling and usage.
      { slots: listOf(slotShape(attempt), 'sample slots'), calls: index, started: listOf(index, 'sample indexes'), usage, lateUsage: usage, clarifications, replies: index, reports: index, priced: index, escalations },
    );
  }

  const contexts = { untyped: contextShape(false), typed: contextShape(true) };
  /** XState's own fields of a persisted snapshot: a saved run spawns no actor and has no history (XState would restore them). */
  const empty = leaf('an empty object', (value) => isPlainObject(value) && Object.keys(value).length === 0);
  const snapshots = Object.fromEntries(
    (['untyped', 'typed'] as const).map((kind) => [
      kind,
      record(
        'a snapshot of the checkpoint machine',
        { status: oneOf(['active', 'done']), value: oneOf(CHECKPOINT_STATES), context: contexts[kind] },
        // The output is not read: a run resumed ended makes its own from its context.
        { children: empty, historyValue: empty, error: oneOf([null]) },
      ),
    ]),
  ) as Record<'untyped' | 'typed', Shape>;

  return { outputs, lineRecord, snapshots };
}

let described: ReturnType<typeof describeStoredRuns> | undefined;
const storedRuns = () => (described ??= describeStoredRuns());

/**
 * Fails unless `value` is, field by field, what the checkpoint machine outputs (and a result's
 * JSON holds): the fields `resultFrom()` reads, of the types it promises. A run with a schema
 * (`settings.schema`) may have any answer; one without has string answers.
 */
export function checkOutput(value: unknown, fail: Fail): void {
  const settings = isPlainObject(value) ? own(value, 'settings') : undefined;
  const schema = isPlainObject(settings) ? own(settings, 'schema') : undefined;
  const { outputs } = storedRuns();
  checkField(schema === true ? outputs.typed : outputs.untyped, value, '', fail);
}

/**
 * Fails unless the `settings` and `run` of a result line, where present, are field by field
 * what Booth writes: only the fields a rerun compares, so a line is read no further.
 */
export function checkLineRecord(line: unknown, fail: Fail): void {
  checkField(storedRuns().lineRecord, line, '', fail);
}

/**
 * Fails unless `snapshot` is, field by field, a persisted snapshot of the checkpoint machine
 * as Booth saves one: the context's settings, attempts, samples, clusters, trace and timers
 * each of their types. Paths start at the snapshot: `context.attempts[2].confidence`.
 */
export function checkSnapshot(snapshot: unknown, fail: Fail): void {
  const context = isPlainObject(snapshot) ? own(snapshot, 'context') : undefined;
  const settings = isPlainObject(context) ? own(context, 'settings') : undefined;
  const format = isPlainObject(settings) ? own(settings, 'answerFormat') : undefined;
  checkField(storedRuns().snapshots[format === undefined || format === null ? 'untyped' : 'typed'], snapshot, 'snapshot', fail);
}
