import { fromPromise } from 'xstate';
import type { JsonSchema } from '../src/decide/schema.js';
import { type UsageReport, usageFromReport } from '../src/decide/usage.js';
import type { Validator } from '../src/decide/validation.js';
import type { ModelCall, ValidationRequest } from './checkpoint/types.js';

/**
 * The checkpoint machine's `callModel` actor from a plain function, for `.provide()`:
 *
 * @example
 * const booth = checkpointMachine.provide({ actors: { callModel: modelActor((prompt, { signal }) => llm(prompt, { signal })) } });
 *
 * The signal aborts when the machine stops waiting (a timeout, the deadline, the parent stopping).
 * `replySchema` is the reply's JSON Schema, for an adapter's structured output; `reportUsage`
 * tells the run what the call consumed, for the attempt's and the result's `usage`.
 */
export function modelActor(
  call: (
    prompt: string,
    info: { readonly attempt: number; readonly signal: AbortSignal; readonly replySchema: JsonSchema; readonly reportUsage: (usage: UsageReport) => void },
  ) => unknown,
) {
  return fromPromise<unknown, ModelCall>(async ({ input, signal }) =>
    call(input.prompt, { attempt: input.attempt, signal, replySchema: input.replySchema, reportUsage: input.reportUsage ?? checkedOnly }),
  );
}

/** For an input built without a reporter: a wrong report still throws, as it does in a run. */
const checkedOnly = (report: UsageReport): void => void usageFromReport(report);

/**
 * The checkpoint machine's `validate` actor from a validator, for `.provide()` (then give
 * the machine `validator: true` in its input). It may be async here: in a workflow the
 * machine simply waits for it. `T` is the answer's type: a string, or with a `schema` in
 * the input the schema's output.
 */
export function validatorActor<T = string>(validator: (answer: T) => ReturnType<Validator> | PromiseLike<ReturnType<Validator>>) {
  return fromPromise<unknown, ValidationRequest>(async ({ input }) => validator(input.answer as unknown as T));
}
