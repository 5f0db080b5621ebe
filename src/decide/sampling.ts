import { type AgreeFn, type AgreementKey, agreementKey, defaultAgree, type ConfidenceSource, combinedConfidence, type Voter, voteOf } from './agreement.js';
import { type Attempt, type Sample, withSampling } from './attempt.js';

/** The sampling fields of an attempt whose answer's type is not known here. */
type SamplingFields = Pick<Attempt<unknown>, 'samples' | 'clusters' | 'agreeError'>;

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
    answer: reply.parseOk ? sampleAnswer(reply, typed) : null,
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
 * Each parsed reply's key under the default `agree`, made once. Kept beside the replies
 * rather than in the context: it is a function of the reply alone, so it decides nothing a
 * recomputation would not, and a checkpoint neither carries it nor can forge it (a resumed
 * run makes it again from the reply). A WeakMap, so it goes when the run's replies go.
 */
const keys = new WeakMap<Attempt<unknown>, AgreementKey>();

/** The key the default `agree` votes `reply` by; made once per reply. */
function keyOf(reply: Attempt<unknown>, typed: boolean): AgreementKey {
  let key = keys.get(reply);
  if (key === undefined) {
    key = agreementKey(sampleAnswer(reply, typed), typed);
    keys.set(reply, key);
  }
  return key;
}

/**
 * Makes the vote's key of a reply that has just arrived, when the run votes by the default
 * `agree`: normalizing a long answer takes time, and made as each reply arrives it is spread
 * over the replies' events instead of all falling on the vote, in one stretch of the event loop.
 */
export function keyArrived(reply: Attempt<unknown>, typed: boolean, customAgree: boolean): void {
  if (reply.parseOk && !customAgree) keyOf(reply, typed);
}

/** A parsed reply's answer as the vote and `attempt.samples` see it: with a schema the model's own value. */
function sampleAnswer(reply: Attempt<unknown>, typed: boolean): unknown {
  return typed ? (reply.parsed?.['answer'] ?? null) : reply.answer;
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
  const keyed = settings.agree === defaultAgree(settings.typed);
  samples.forEach((sample, index) => {
    if (!sample.parseOk) return;
    const voter: Voter = { index, answer: sample.answer, confidence: sample.confidence!, ambiguous: sample.ambiguous };
    voters.push(keyed ? { ...voter, key: keyOf(replies[index]!, settings.typed) } : voter);
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
