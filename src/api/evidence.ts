import { type EvidenceEvent, evidenceMachine } from '../../machines/evidence.js';
import { failIfBroken, startRun } from '../engine/machine-run.js';
import { type EvidenceOptions, readEvidenceOptions } from './options.js';
import { type EvidenceResult, evidenceResult } from '../results/result.js';
import { RunTelemetry } from '../telemetry/run-telemetry.js';
import { describeValue, isAsyncFunction, isThenable, swallowRejection } from '../util/values.js';

/**
 * Scores an answer against the caller's evidence: `true`/`false` for a pass/fail
 * verdict, or a number from 0 to 1 compared with `evidenceThreshold`. Synchronous.
 */
export type CompareFn<E = unknown> = (answer: string, evidence: readonly E[]) => boolean | number;

/**
 * Checks an answer you already have against evidence you trust. No model call and no
 * retry: VERIFIED when the comparator agrees, BLOCKED when it disagrees, UNCERTAIN
 * when there is nothing to judge or the comparator fails.
 *
 * @example
 * const result = checkWithEvidence(answer, sources, (a, docs) => docs.some((d) => d.includes(a)));
 */
export function checkWithEvidence<E>(
  answer: string | null | undefined,
  evidence: readonly E[] | null | undefined,
  compareFn: CompareFn<E>,
  options?: EvidenceOptions | null,
): EvidenceResult {
  const { evidenceThreshold, telemetry } = readEvidenceOptions(options);
  if (telemetry === null) return compareEvidence(answer, evidence, compareFn, evidenceThreshold);
  return new RunTelemetry(telemetry, 'checkWithEvidence', null).around(() => compareEvidence(answer, evidence, compareFn, evidenceThreshold));
}

function compareEvidence<E>(
  answer: unknown,
  evidence: readonly E[] | null | undefined,
  compareFn: CompareFn<E>,
  evidenceThreshold: number,
): EvidenceResult {
  if (answer !== undefined && answer !== null && typeof answer !== 'string') {
    throw new TypeError(`Expected \`answer\` to be a string, null or undefined, got ${describeValue(answer)}.`);
  }
  if (typeof compareFn !== 'function' || isAsyncFunction(compareFn)) {
    throw new TypeError(
      `Expected \`compareFn\` to be a synchronous function (answer, evidence) => boolean | number, got ${describeValue(compareFn)}.`,
    );
  }
  if (evidence !== undefined && evidence !== null && !Array.isArray(evidence)) {
    throw new TypeError(`Expected \`evidence\` to be an array, null or undefined, got ${describeValue(evidence)}.`);
  }

  const input = { answer: answer ?? null, hasEvidence: Array.isArray(evidence) && evidence.length > 0, threshold: evidenceThreshold };
  const started = performance.now();
  const actor = startRun(evidenceMachine, { input });
  try {
    for (;;) {
      const snapshot = actor.getSnapshot();
      failIfBroken(snapshot);
      if (snapshot.status === 'done') {
        const { score, trace, ...output } = snapshot.output;
        return evidenceResult({
          ...output,
          confidence: score,
          agreement: null,
          evidenceAgreement: score,
          trace,
          attempts: [],
          prompts: [],
          ambiguous: false,
          interpretations: [],
          parsed: null,
          settings: null,
          usage: null,
          durationMs: performance.now() - started,
          clarifications: [],
          escalations: [],
        });
      }
      if (snapshot.value !== 'comparing') {
        throw new Error(`Booth internal error: the evidence machine rests in ${JSON.stringify(snapshot.value)}`);
      }
      actor.send(compare(compareFn, snapshot.context.answer ?? '', evidence ?? []));
    }
  } finally {
    actor.stop();
  }
}

function compare<E>(compareFn: CompareFn<E>, answer: string, evidence: readonly E[]): EvidenceEvent {
  let value: unknown;
  try {
    value = compareFn(answer, evidence);
  } catch (error) {
    return { type: 'comparator.threw', error };
  }
  if (isThenable(value)) {
    swallowRejection(value);
    throw new TypeError('`compareFn` returned a Promise; compare functions must be synchronous.');
  }
  return { type: 'comparator.returned', value };
}
