import type { Snapshot } from 'xstate';
import type { AgreeFn } from '../../src/decide/agreement.js';
import type { ParseFn } from '../../src/reply/parse.js';
import { describeValue, isPlainObject } from '../../src/util/values.js';
import type { ModelFn, WorkflowValidator } from './types.js';

/** The functions a checkpoint run's input may hold, which a snapshot persisted as JSON loses. */
export interface RunFunctions {
  readonly model?: ModelFn;
  readonly validator?: WorkflowValidator<never>;
  readonly agree?: AgreeFn<never>;
  readonly parseFn?: ParseFn;
}

const NAMES: readonly string[] = ['model', 'validator', 'agree', 'parseFn'];

/**
 * A copy of a checkpoint machine's persisted snapshot with the input's functions given back,
 * to restore a run whose snapshot went through JSON (a database, a queue):
 * `createActor(checkpointMachine, { snapshot: withFunctions(saved, { parseFn }) })`. A run
 * restored without a custom `agree` or `parseFn` it was started with stops with a TypeError
 * saying so, rather than vote or read by Booth's defaults. The snapshot is not changed.
 */
export function withFunctions<S extends Snapshot<unknown>>(snapshot: S, functions: RunFunctions): S {
  const context = isPlainObject(snapshot) ? (snapshot as { context?: unknown }).context : undefined;
  const settings = isPlainObject(context) ? (context as { settings?: unknown }).settings : undefined;
  if (!isPlainObject(settings)) {
    throw new TypeError(`Expected \`snapshot\` to be a checkpoint machine's persisted snapshot, with context.settings, got ${describeValue(snapshot)}.`);
  }
  if (!isPlainObject(functions)) throw new TypeError(`Expected \`functions\` to be an object such as { parseFn }, got ${describeValue(functions)}.`);
  const given: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(functions)) {
    if (!NAMES.includes(name)) throw new TypeError(`Unknown function \`${name}\` for withFunctions(); the functions are \`${NAMES.join('`, `')}\`.`);
    if (fn === undefined) continue;
    if (typeof fn !== 'function') throw new TypeError(`Expected \`${name}\` to be a function, got ${describeValue(fn)}.`);
    // As contextOf keeps them: `agree` and `parseFn` behind a thunk, the others as they are.
    given[name] = name === 'agree' || name === 'parseFn' ? () => fn : fn;
  }
  return { ...snapshot, context: { ...(context as object), settings: Object.freeze({ ...settings, ...given }) } };
}
