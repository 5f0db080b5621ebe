import type { CheckpointEvent } from '../../machines/checkpoint/types.js';
import type { CheckSettings } from './settings.js';
import type { AnswerSchema } from '../decide/schema.js';
import { isThenable, swallowRejection } from '../util/values.js';

/** The caller's schema and validator, run so that whatever they throw or return becomes the machine's event. */

/** A schema that validates asynchronously (zod's async refinements) needs `acheck()`, which awaits it. */
export function runSchemaSynchronously(schema: AnswerSchema, answer: unknown): CheckpointEvent {
  let result: unknown;
  try {
    result = schema['~standard'].validate(answer);
  } catch (error) {
    return { type: 'schema.threw', error };
  }
  if (isThenable(result)) {
    swallowRejection(result);
    throw new TypeError('`schema` validated asynchronously (its validate returned a Promise), but check() is synchronous; use acheck() for schemas with async checks.');
  }
  return { type: 'schema.returned', result };
}

/** The schema's result, awaited: `acheck()` lets a schema validate asynchronously. */
export async function runSchema(schema: AnswerSchema, answer: unknown): Promise<CheckpointEvent> {
  try {
    return { type: 'schema.returned', result: await schema['~standard'].validate(answer) };
  } catch (error) {
    return { type: 'schema.threw', error };
  }
}

/** Validators are synchronous in both interpreters; a returned Promise is judged (and refused) by the machine. */
export function runValidator(settings: CheckSettings, answer: unknown): CheckpointEvent {
  try {
    const value = settings.validator?.(answer);
    if (isThenable(value)) swallowRejection(value);
    return { type: 'validator.returned', value };
  } catch (error) {
    return { type: 'validator.threw', error };
  }
}

