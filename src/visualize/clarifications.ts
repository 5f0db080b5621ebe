import type { Clarification } from '../decide/prompts.js';
import type { BoothResult } from '../results/result.js';
import { answerText } from '../util/values.js';
import { WAITING } from './retries.js';

/**
 * A clarified run in words, as the trace page, the report and the sequence diagram show it:
 * what the person who asked said, and where each round begins. Every text here is the model's
 * (the readings) or a person's (a rephrasing), so it only ever reaches a drawing through the
 * escaping tags of escape.ts.
 */

/** The clarifications of a result; none for one written by a Booth from before they were kept. */
export function clarificationsOf(result: BoothResult): readonly Clarification[] {
  return result.clarifications ?? [];
}

/**
 * The person's answer, one line: `the person chose "the planet"`, `the person rephrased the
 * question as "…"`. `quote` writes the text quoted (a label passes one that reads only the head of a long one).
 */
export function saidText(clarification: Clarification, quote: (text: string) => string = answerText): string {
  if (clarification.rephrased !== null) return `the person rephrased the question as ${quote(clarification.rephrased)}`;
  if (clarification.chosen !== null) return `the person chose ${quote(clarification.chosen)}`;
  // Neither: a stored run no Booth wrote. Said as it is rather than guessed.
  return 'the person clarified the question';
}

/** How the round a clarification begins is named: the question was first asked in round 1. */
export function roundName(index: number, clarification: Clarification): string {
  return `round ${index + 2}, from attempt ${clarification.attempt}`;
}

/** The clarification whose round begins at attempt `index`, with its place in the list; undefined for the attempts within a round. */
export function roundAt(result: BoothResult, index: number): { readonly clarification: Clarification; readonly index: number } | undefined {
  const clarifications = clarificationsOf(result);
  const found = clarifications.findIndex((c) => c.attempt === index);
  return found === -1 ? undefined : { clarification: clarifications[found]!, index: found };
}

/** The readings offered, each with whether the person chose it. */
export function readingsOf(clarification: Clarification): [reading: string, chosen: boolean][] {
  return clarification.readings.map((reading) => [reading, clarification.chosen !== null && reading === clarification.chosen]);
}

/** The run waits in a store for the person who asked: its trace ends where it waits. */
export function isWaiting(result: BoothResult): boolean {
  return result.trace.at(-1)?.state === WAITING;
}

/** Whether the readings of attempt `index` went to the person who asked: a clarification followed it, or the run waits at it. */
export function readingsWentOut(result: BoothResult, index: number): boolean {
  return roundAt(result, index + 1) !== undefined || (index === result.attempts.length - 1 && isWaiting(result));
}
