import type { CheckpointOutput } from '../../machines/checkpoint/types.js';
import { type CheckResult, checkResult, type TypedCheckResult } from './result.js';
import { AMBIGUOUS, BUDGET_SPENT, REPAIRED, UNCERTAIN, VERIFIED } from '../decide/constants.js';
import { checkOutput } from './stored.js';
import { describeValue } from '../util/values.js';

/**
 * The `BoothResult` of a checkpoint machine's output: what a parent workflow receives in
 * `onDone` gets `ok`, `method`, `unwrap()` and the rest, and draws with `boothjs/visualize`.
 *
 * @example
 * onDone: { actions: ({ event }) => publish(resultFrom(event.output).unwrap()) }
 *
 * With a `schema` in the machine's input, name the answer's type: `resultFrom<City>(event.output)`.
 */
export function resultFrom(output: CheckpointOutput): CheckResult;
export function resultFrom<T>(output: CheckpointOutput<unknown>): TypedCheckResult<T>;
export function resultFrom(output: CheckpointOutput<unknown>): CheckResult<unknown, unknown> {
  const expected = "Expected `output` to be the checkpoint machine's output (event.output in an invoke's onDone)";
  if (!isCheckpointOutput(output)) throw new TypeError(`${expected}, got ${describeValue(output)}.`);
  // An output may come back from a file or a queue (a booth batch line): it reaches results and pages only once every field is of its type.
  checkOutput(output, (problem) => {
    throw new TypeError(`${expected} or a result's JSON as Booth wrote it, but its ${problem}. Pass the output or the result line unchanged.`);
  });
  return resultOf(output);
}

/** The result of an output the machine just made: check() and acheck() need not check it again. */
export function resultOf(output: CheckpointOutput<unknown>): CheckResult<unknown, unknown> {
  return checkResult<unknown, unknown>({
    status: output.status,
    answer: output.answer,
    confidence: output.confidence,
    agreement: output.agreement,
    attempts: output.attempts,
    ambiguous: output.ambiguous,
    interpretations: output.interpretations,
    evidenceAgreement: null,
    parsed: output.parsed,
    // An output written before budgets existed has no budgetStop.
    reason: output.budgetStop ? BUDGET_SPENT : null,
    detail: output.budgetStop ?? null,
    prompts: output.prompts,
    trace: output.trace,
    settings: output.settings,
    // An output saved by a Booth from before usage and time were kept has neither.
    usage: output.usage ?? null,
    durationMs: output.durationMs ?? output.attempts.reduce((sum, attempt) => sum + attempt.durationMs, 0),
    // A line written before clarifications existed has none.
    clarifications: output.clarifications ?? [],
    // Nor one written before cascades escalations.
    escalations: output.escalations ?? [],
  });
}

const CHECK_STATUSES: readonly unknown[] = [VERIFIED, REPAIRED, AMBIGUOUS, UNCERTAIN];

function isCheckpointOutput(value: unknown): value is CheckpointOutput<unknown> {
  const output = value as Partial<Record<keyof CheckpointOutput<unknown>, unknown>> | null;
  return (
    typeof output === 'object' &&
    output !== null &&
    CHECK_STATUSES.includes(output.status) &&
    Array.isArray(output.attempts) &&
    Array.isArray(output.prompts) &&
    Array.isArray(output.trace) &&
    Array.isArray(output.interpretations)
  );
}
