import type { CheckpointOutput } from '../../machines/checkpoint/types.js';
import { AMBIGUOUS } from '../decide/constants.js';
import type { ClarificationChoice } from '../decide/clarification.js';
import type { AsyncCallFn } from '../decide/model-call.js';
import { checkContinuedRun, waitingSnapshot } from '../engine/checkpoint-run.js';
import type { Snapshot } from 'xstate';
import type { CheckSettings } from '../engine/settings.js';
import { type AnyBoothResult, type CheckResult, Result, type TypedCheckResult } from '../results/result.js';
import { checkOutput, kindOf } from '../results/stored.js';
import { RunTelemetry } from '../telemetry/run-telemetry.js';
import { isPlainObject } from '../util/values.js';
import { modelStages } from '../options/read-options.js';
import { runAcheck } from './acheck.js';
import { type AsyncCheckOptions, readCheckArguments, type TypedAsyncCheckOptions } from './options.js';

/** `acheck()`'s options that belong to a run kept in a store, which `clarify()` does not use. */
const STORED_RUN_KEYS = ['checkpoint', 'key', 'awaitClarification', 'clarification'] as const;

export type ClarifyOptions<T = string> = Omit<AsyncCheckOptions<T>, (typeof STORED_RUN_KEYS)[number]>;
export type TypedClarifyOptions<T> = Omit<TypedAsyncCheckOptions<T>, (typeof STORED_RUN_KEYS)[number]>;

/**
 * Continues an AMBIGUOUS result with what the person who asked said it means: `choice` is one
 * of `result.interpretations` (its index or exact text) or `{ rephrased: '…' }`. The model is
 * asked again with the clarification spelled out (a prompt of kind `clarification`), in a new
 * round with retries of its own; the result holds both rounds' attempts, prompts and trace in
 * order, and `clarifications` records what was offered and chosen. A clarified question that
 * comes back ambiguous is AMBIGUOUS again, and may be clarified again up to
 * `maxClarifications` (default 2) times in all.
 *
 * `result` may be a result, or its JSON read back (a `booth batch` line): it is checked field
 * by field. Its settings (threshold, retries, samples, timers) carry over unless `options`
 * says otherwise; a validator or schema, being functions, must be passed again, and so must
 * a cascade's models (`modelName`, `escalate`). A result does not keep a `budget` or an
 * adaptive plan (`samples: { max }` carries over as `max` samples): pass them again too.
 *
 * @example
 * const first = await acheck(callFn, 'How tall is Mercury?');
 * if (first.status === 'AMBIGUOUS') {
 *   const picked = await askPerson(first.interpretations); // e.g. 0 for "the planet"
 *   const result = await clarify(first, picked, callFn);
 * }
 */
export function clarify<T>(
  result: AnyBoothResult | CheckpointOutput<unknown>,
  choice: ClarificationChoice,
  callFn: AsyncCallFn,
  options: TypedClarifyOptions<T>,
): Promise<TypedCheckResult<T>>;
export function clarify(result: AnyBoothResult | CheckpointOutput<unknown>, choice: ClarificationChoice, callFn: AsyncCallFn, options?: ClarifyOptions | null): Promise<CheckResult>;
/** A schema that may be absent: the answer's type is known only at run time. */
export function clarify(
  result: AnyBoothResult | CheckpointOutput<unknown>,
  choice: ClarificationChoice,
  callFn: AsyncCallFn,
  options?: ClarifyOptions<unknown> | null,
): Promise<CheckResult<unknown, unknown>>;
export function clarify(
  result: AnyBoothResult | CheckpointOutput<unknown>,
  choice: ClarificationChoice,
  callFn: AsyncCallFn,
  options?: object | null,
): Promise<CheckResult<unknown, unknown>> {
  let prepared: { question: string; settings: CheckSettings; snapshot: Snapshot<unknown> };
  try {
    prepared = prepare(result, callFn, options);
  } catch (error) {
    return Promise.reject(error);
  }
  const { question, settings, snapshot } = prepared;
  const telemetry = settings.telemetry === null ? null : new RunTelemetry(settings.telemetry, 'clarify', question);
  const continued = () => runAcheck(callFn, question, settings, telemetry, { snapshot, choice });
  return telemetry ? telemetry.aroundAsync(continued) : continued();
}

function prepare(result: unknown, callFn: unknown, options: unknown) {
  const output = readAmbiguous(result);
  const given = options ?? {};
  if (isPlainObject(given)) {
    const stored = STORED_RUN_KEYS.find((key) => Object.hasOwn(given, key));
    if (stored !== undefined) {
      throw new TypeError(
        `clarify() continues a result you hold, so \`${stored}\` has no place in its options; to continue a run waiting in a store, call acheck() with its \`checkpoint\`, \`key\` and \`clarification\`.`,
      );
    }
  }
  const ran = output.settings!;
  // The run's own settings carry over; the caller's options win. Functions never survive a result: they are given again.
  const carried = {
    threshold: ran.threshold,
    maxRetries: ran.maxRetries,
    timeoutMs: ran.timeoutMs ?? undefined,
    deadlineMs: ran.deadlineMs ?? undefined,
    callRetries: ran.callRetries ?? undefined,
    samples: ran.samples,
    ...(ran.samples > 1 ? { confidenceFrom: ran.confidenceFrom } : {}),
  };
  const merged = isPlainObject(given) ? { ...carried, ...given } : given;
  const passed = (name: string) => isPlainObject(given) && (given as Record<string, unknown>)[name] != null;
  if (ran.validator && !passed('validator')) {
    throw new TypeError('`result` was checked with a validator, which a result cannot hold: pass it again in clarify()\'s options (validator: …).');
  }
  if (ran.schema !== passed('schema')) {
    throw new TypeError(
      ran.schema
        ? '`result` was checked with a schema, which a result cannot hold: pass it again in clarify()\'s options (schema: …).'
        : '`result` was checked without a schema: its answers are text. Clarify it without `schema`, or ask afresh with acheck().',
    );
  }
  const question = questionOf(output, merged);
  const settings = readCheckArguments('clarify', callFn, question, merged);
  // Its rounds are asked again of the machine, as a stored run's are, with the settings it ran with.
  const asRan = readCheckArguments('clarify', callFn, question, { ...merged, ...carried });
  // The models are functions, which a result cannot hold: the names its attempts record must be the ones this call gives.
  const models = new Set<string | null>(modelStages(asRan.modelName, asRan.plan, asRan.escalate).map((stage) => stage.name));
  const named = [...output.attempts.map((attempt) => attempt.model ?? null), ...(output.escalations ?? []).map((escalation) => escalation.model)];
  if (named.some((name) => !models.has(name))) {
    throw new TypeError(
      `\`result\` was checked with ${(output.escalations ?? []).length > 0 ? 'a cascade of models' : 'a named model'} that clarify()'s options do not name alike, and a result cannot hold the models' functions: pass \`modelName\` and \`escalate\` again in clarify()'s options, as the run had them.`,
    );
  }
  checkContinuedRun(waitingSnapshot(output, question, asRan), (problem) => {
    throw new TypeError(`Expected \`result\` to be a run as Booth made it, but it ${problem.replace(/^holds /, 'has ')}`);
  });
  if (output.clarifications.length >= settings.maxClarifications) {
    throw new RangeError(
      `\`result\` was clarified ${output.clarifications.length} time${output.clarifications.length === 1 ? '' : 's'} already, and \`maxClarifications\` is ${settings.maxClarifications}: raise it to clarify again, or ask afresh.`,
    );
  }
  return { question, settings, snapshot: waitingSnapshot(output, question, settings) };
}

/** `result` as an output the machine could have made, AMBIGUOUS: a result, or its JSON as Booth wrote it. */
function readAmbiguous(result: unknown): CheckpointOutput<unknown> {
  const expected = 'Expected `result` to be an AMBIGUOUS result of check(), acheck() or clarify(), or its JSON';
  // Copied through JSON: the result made of it shares nothing with the caller's (a line may be changed after).
  let json: unknown;
  try {
    json = isPlainObject(result) || result instanceof Result ? JSON.parse(JSON.stringify(result)) : result;
  } catch {
    throw new TypeError(`${expected}, got an object JSON cannot hold (a cycle, a BigInt).`);
  }
  // Never quoted: a line passed as text holds the model's replies.
  if (!isPlainObject(json)) throw new TypeError(`${expected}, got ${kindOf(result)}.`);
  checkOutput(json, (problem) => {
    throw new TypeError(`${expected}, but its ${problem}. Pass the result or its line unchanged.`);
  });
  const output = json as unknown as CheckpointOutput<unknown> & { clarifications?: CheckpointOutput<unknown>['clarifications'] };
  if (output.status !== AMBIGUOUS) throw new TypeError(`${expected}, got one whose status is ${output.status}: only an ambiguous question is clarified.`);
  if (output.settings === null) throw new TypeError(`${expected}, got an evidence check's, which asked no model.`);
  if (output.attempts.length === 0 || output.prompts.length !== output.attempts.length) {
    throw new TypeError(`${expected}, got one with ${output.attempts.length} attempts and ${output.prompts.length} prompts, which no run makes.`);
  }
  // The readings the person was shown are the ones the run offered: the last attempt's.
  if (JSON.stringify(output.interpretations) !== JSON.stringify(output.attempts.at(-1)!.interpretations)) {
    throw new TypeError(`${expected}, got one whose interpretations are not its last attempt's, which no run makes.`);
  }
  return { ...output, clarifications: output.clarifications ?? [] };
}

/**
 * The caller's question, read off the result's first prompt: it is the question, a blank
 * line, then the instructions the options give (Booth's for the answer format, or the
 * caller's). A prompt that does not end so was made with other options.
 */
function questionOf(output: CheckpointOutput<unknown>, options: unknown): string {
  const first = output.clarifications[0]?.question;
  if (first !== undefined) return first;
  const prompt = output.prompts[0]!;
  // The instructions are read as acheck() reads them; any other wrong option is reported by the full read after.
  const { instructions } = readCheckArguments('clarify', () => '', 'question', options);
  const tail = `\n\n${instructions}`;
  if (prompt.kind !== 'first' || !prompt.text.endsWith(tail) || prompt.text.length === tail.length) {
    throw new TypeError(
      '`result`\'s first prompt does not end with the instructions these options give: pass clarify() the `schema` and `instructions` the check had.',
    );
  }
  return prompt.text.slice(0, -tail.length);
}
