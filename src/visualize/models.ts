import type { Attempt, Sample } from '../decide/attempt.js';
import type { Escalation } from '../../machines/checkpoint/types.js';
import type { BoothResult, ModelSpend } from '../results/result.js';

/**
 * A run that spent on several models, stopped its samples early or ran out of budget, in
 * words, as the trace page, the report and the sequence diagram show it. A model's name is
 * the caller's (`modelName`, an `escalate` entry's `name`) or read back from a result file:
 * untrusted text, so it only ever reaches a drawing through the escaping tags of escape.ts.
 */

/** The model that made an attempt; null when the run named none (or was written before models were). */
export function modelOf(attempt: Attempt<unknown>): string | null {
  return attempt.model ?? null;
}

/** Whether any attempt of the run names its model: only then do the pictures name them. */
export function namesModels(result: BoothResult): boolean {
  return result.attempts.some((attempt) => modelOf(attempt) !== null);
}

/** The escalations of a result; none for one written by a Booth from before cascades. */
export function escalationsOf(result: BoothResult): readonly Escalation[] {
  return result.escalations ?? [];
}

/** The escalation that begins at attempt `index`, with its place in the list; undefined for any other attempt. */
export function escalationAt(result: BoothResult, index: number): { readonly escalation: Escalation; readonly index: number } | undefined {
  const escalations = escalationsOf(result);
  const found = escalations.findIndex((e) => e.attempt === index);
  return found === -1 ? undefined : { escalation: escalations[found]!, index: found };
}

/** How a model is named in words: its name, or `the model` when the run named none. */
export function modelText(model: string | null): string {
  return model ?? 'the model';
}

/** The line where a cascade moves on: `escalated to strong, from attempt 2`. */
export function escalationText(escalation: Escalation): string {
  return `escalated to ${modelText(escalation.model)}, from attempt ${escalation.attempt}`;
}

/** The run's models in the order first tried, with what each spent; empty when no attempt names its model. */
export function modelsOf(result: BoothResult): readonly ModelSpend[] {
  return namesModels(result) ? (result.models ?? []) : [];
}

/** Whether a sample was skipped: its call aborted once the vote was settled. */
export function isSkipped(sample: Sample<unknown>): boolean {
  return sample.skipped === true;
}

/** The samples of an attempt that were skipped. */
export function skippedCount(attempt: Attempt<unknown>): number {
  return (attempt.samples ?? []).filter(isSkipped).length;
}

/**
 * How many samples an attempt asked for, of how many it could: `5 samples` for a fixed
 * vote, `3 of at most 5 samples asked, 1 skipped` for one that stopped once it was settled.
 * `max` null: the run's settings do not say (a stored run from before adaptive samples).
 */
export function samplesAskedText(attempt: Attempt<unknown>, max: number | null): string {
  const asked = (attempt.samples ?? []).length;
  const skipped = skippedCount(attempt);
  const adaptive = max !== null && asked < max;
  const count = adaptive ? `${asked} of at most ${max} samples asked` : `${asked} sample${asked === 1 ? '' : 's'}`;
  return skipped === 0 ? count : `${count}, ${skipped} skipped when the vote was settled`;
}

/** The run stopped before a call its budget could not afford. */
export function stoppedByBudget(result: BoothResult): boolean {
  return result.method === 'budget';
}

/** The header's `model` entry — the model that gave the reported attempt — and, when a cascade asked several, `models tried`. */
export function modelPairs(result: BoothResult): [string, string][] {
  if (!namesModels(result)) return [];
  const models = modelsOf(result);
  return [
    ['model', modelText(result.model ?? null)],
    ...(models.length > 1 ? ([['models tried', models.map((m) => modelText(m.model)).join(' → ')]] satisfies [string, string][]) : []),
  ];
}

/** A budget stop in words, for the line above a trace's settings. */
export function budgetText(result: BoothResult): string {
  return `Stopped by the budget: ${result.detail ?? 'no detail recorded'}. No call was started that the budget could not afford; the attempts are those made before.`;
}

/** Attempts `first` to `last` in a row, made by one model. */
export interface ModelRun {
  readonly model: string | null;
  readonly first: number;
  readonly last: number;
}

/** The attempts grouped by the model that made them, in a row: a cascade's path, a clarified round asking the first model again. */
export function modelRuns(result: BoothResult): ModelRun[] {
  const runs: { model: string | null; first: number; last: number }[] = [];
  result.attempts.forEach((attempt, index) => {
    const model = modelOf(attempt);
    const current = runs.at(-1);
    // A new round, or the next model, begins a run even when the same model is asked again.
    const begins = escalationAt(result, index) !== undefined || (result.clarifications ?? []).some((c) => c.attempt === index);
    if (current !== undefined && current.model === model && !begins) current.last = index;
    else runs.push({ model, first: index, last: index });
  });
  return runs;
}

/** Which model made which attempts, as a line beside the path: `cheap: attempts 0–1 → strong: attempt 2`; null unless the run names its models. */
export function modelPathText(result: BoothResult): string | null {
  if (!namesModels(result)) return null;
  return modelRuns(result)
    .map(({ model, first, last }) => `${modelText(model)}: ${first === last ? `attempt ${first}` : `attempts ${first}–${last}`}`)
    .join(' → ');
}

/**
 * The most samples attempt `index` could ask, as far as the result says: the run's `samples`
 * (an adaptive plan's `max`) for the first model's attempts. A later model of a cascade may
 * have had samples of its own, which the result does not record: null, unknown.
 */
export function samplesMax(result: BoothResult, index: number): number | null {
  if (result.settings === null) return null;
  const start = latestStart(result, index);
  const escalated = escalationsOf(result).some((e) => e.attempt > start && e.attempt <= index);
  return escalated ? null : result.settings.samples;
}

/** The first attempt of the round attempt `index` is in: 0, or the first after the latest clarification before it. */
function latestStart(result: BoothResult, index: number): number {
  let start = 0;
  for (const { attempt } of result.clarifications ?? []) if (attempt <= index && attempt > start) start = attempt;
  return start;
}
