import { type AgreeFn, type ConfidenceSource, combinedConfidence, type Voter, voteOf } from './agreement.js';
import { type Attempt, type Sample, withSampling } from './attempt.js';
import type { CallTry } from './call-retries.js';

/**
 * One of the k calls an attempt makes when it samples: its place in the queue, its call
 * and retries, and once done the reply, read as a one-sample attempt would be.
 */
export interface SampleSlot {
  readonly state: 'queued' | 'calling' | 'backingOff' | 'done';
  /** The token of its latest call, unique within the run: a reply or timer for an older call is ignored. */
  readonly call: number;
  readonly tries: readonly CallTry[];
  /** The wait chosen before its next try. */
  readonly backoffMs: number;
  readonly reply: Attempt<unknown> | null;
}

/** The sampling fields of an attempt whose answer's type is not known here. */
type SamplingFields = Pick<Attempt<unknown>, 'samples' | 'clusters' | 'agreeError'>;

export const QUEUED: SampleSlot = Object.freeze({ state: 'queued', call: -1, tries: Object.freeze([]), backoffMs: 0, reply: null });

/** What the vote needs to know of the run. */
export interface VoteSettings {
  readonly typed: boolean;
  readonly agree: AgreeFn<unknown>;
  readonly confidenceFrom: ConfidenceSource;
}

/** A reply as `attempt.samples` shows it. */
export function sampleOf(reply: Attempt<unknown>, typed: boolean): Sample<unknown> {
  return Object.freeze({
    rawText: reply.rawText,
    answer: reply.parseOk ? (typed ? (reply.parsed?.['answer'] ?? null) : reply.answer) : null,
    confidence: reply.confidence,
    parseOk: reply.parseOk,
    error: reply.error,
    callFailed: reply.callFailed,
    ambiguous: reply.ambiguous,
    interpretations: reply.interpretations,
    callTries: reply.callTries,
  });
}

/**
 * The attempt the samples make together. The vote's winner stands for them, with the vote's
 * confidence; a majority reporting ambiguity makes the attempt ambiguous, with every reading
 * they gave. When no sample parsed, the attempt failed as its first sample did: a call
 * failure only when every call failed, so that a reply the reader refused earns a parse retry.
 */
export function votedAttempt(replies: readonly Attempt<unknown>[], settings: VoteSettings): Attempt<unknown> {
  const samples = Object.freeze(replies.map((reply) => sampleOf(reply, settings.typed)));
  const callTries = Object.freeze(replies.flatMap((reply) => reply.callTries));
  const voters: Voter[] = [];
  samples.forEach((sample, index) => {
    if (sample.parseOk) voters.push({ index, answer: sample.answer, confidence: sample.confidence!, ambiguous: sample.ambiguous });
  });
  if (voters.length === 0) {
    const failed = replies.find((reply) => !reply.callFailed) ?? replies[0]!;
    return withSampling<unknown>({ ...failed, callTries }, { samples, clusters: Object.freeze([]), agreeError: null } as SamplingFields);
  }
  const { clusters, agreeError } = voteOf(voters, settings.agree);
  const ambiguous = voters.filter((voter) => samples[voter.index]!.ambiguous);
  const byMajority = ambiguous.length * 2 > voters.length;
  // Without a majority the winner is a sample that did not report ambiguity: its answer is meant, not a blank.
  const winner = replies[byMajority ? ambiguous[0]!.index : clusters[0]!.samples.find((i) => !samples[i]!.ambiguous)!]!;
  const interpretations = byMajority ? Object.freeze([...new Set(ambiguous.flatMap((voter) => samples[voter.index]!.interpretations))]) : winner.interpretations;
  return withSampling(
    { ...winner, confidence: combinedConfidence(clusters, settings.confidenceFrom), ambiguous: byMajority, interpretations, callTries },
    { samples, clusters, agreeError } as SamplingFields,
  );
}
