import { describeValue, isPlainObject } from '../util/values.js';

/**
 * What the person who asked an ambiguous question answers: one of the readings the model
 * offered, by its index in `interpretations` or its exact text, or the question in their
 * own words.
 */
export type ClarificationChoice = number | string | { readonly rephrased: string };

/** A choice once read against the readings offered: the machine's `clarify.chose` or `clarify.rephrased` event. */
export type ChoiceEvent = { readonly type: 'clarify.chose'; readonly reading: string } | { readonly type: 'clarify.rephrased'; readonly question: string };

/**
 * The first attempt of the latest round: 0, or the first asked after the latest clarification
 * or the latest move to the next model of a cascade, whichever came later.
 */
export function roundStart(clarifications: readonly { readonly attempt: number }[] | undefined, escalations?: readonly { readonly attempt: number }[]): number {
  return Math.max(clarifications?.at(-1)?.attempt ?? 0, escalations?.at(-1)?.attempt ?? 0);
}

/** A rephrased question longer than this is a document, not a question; the cap keeps a pasted file out of every prompt of the round. */
export const MAX_REPHRASED_CHARS = 20_000;

/**
 * Reads `choice` against `readings`. A choice that is not one of them and not a rephrasing is
 * a `TypeError`; the message counts the readings and never quotes them or the choice (both
 * may be private text).
 */
export function readChoice(choice: unknown, readings: readonly string[], name = 'choice'): ChoiceEvent {
  const offered =
    readings.length === 0
      ? 'no readings were offered'
      : `${readings.length} reading${readings.length === 1 ? ' was' : 's were'} offered: pass an index from 0 to ${readings.length - 1}, or a reading's exact text`;
  if (typeof choice === 'number') {
    if (Number.isInteger(choice) && choice >= 0 && choice < readings.length) return { type: 'clarify.chose', reading: readings[choice]! };
    throw new TypeError(`Expected \`${name}\` to be one of the readings of \`interpretations\`, got ${describeValue(choice)}; ${offered}, or { rephrased: '…' } with the question in other words.`);
  }
  if (typeof choice === 'string') {
    if (readings.includes(choice)) return { type: 'clarify.chose', reading: choice };
    throw new TypeError(`Expected \`${name}\` to be one of the readings of \`interpretations\`, got a string that is none of them; ${offered}, or { rephrased: '…' } with the question in other words.`);
  }
  if (isPlainObject(choice) && Object.keys(choice).length === 1 && Object.hasOwn(choice, 'rephrased')) {
    const question = (choice as { readonly rephrased?: unknown }).rephrased;
    if (typeof question === 'string' && question.trim() !== '' && question.length <= MAX_REPHRASED_CHARS) return { type: 'clarify.rephrased', question };
    throw new TypeError(
      `Expected \`${name}.rephrased\` to be the question in other words, a non-blank string of at most ${MAX_REPHRASED_CHARS} characters, got ${typeof question === 'string' ? `a string of ${question.length} characters` : describeValue(question)}.`,
    );
  }
  throw new TypeError(`Expected \`${name}\` to be a reading's index, a reading's exact text, or { rephrased: '…' }, got ${describeValue(choice)}; ${offered}.`);
}
