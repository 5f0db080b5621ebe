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

/** A reply as `attempt.samples` shows it; a skipped one (its call aborted once the vote was settled) says so. */
export function sampleOf(reply: Attempt<unknown>, typed: boolean, skipped = false): Sample<unknown> {
  const sample: Sample<unknown> = {
    rawText: reply.rawText,
    answer: reply.parseOk ? sampleAnswer(reply, typed) : null,
    confidence: reply.confidence,
    parseOk: reply.parseOk,
    error: reply.error,
    callFailed: skipped ? false : reply.callFailed,
    ambiguous: reply.ambiguous,
    interpretations: reply.interpretations,
    callTries: reply.callTries,
  };
  return Object.freeze(skipped ? { ...sample, skipped: true as const } : sample);
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
export function votedAttempt(replies: readonly Attempt<unknown>[], settings: VoteSettings, skipped: ReadonlySet<number> | null = null): Attempt<unknown> {
  const samples = Object.freeze(replies.map((reply, index) => sampleOf(reply, settings.typed, skipped?.has(index) === true)));
  const callTries = Object.freeze(replies.flatMap((reply) => reply.callTries));
  const voters = votersOf(samples, replies, settings);
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

/** The samples that parsed, as the vote counts them. */
function votersOf(samples: readonly Sample<unknown>[], replies: readonly Attempt<unknown>[], settings: VoteSettings): Voter[] {
  const voters: Voter[] = [];
  const keyed = settings.agree === defaultAgree(settings.typed);
  samples.forEach((sample, index) => {
    if (!sample.parseOk) return;
    const voter: Voter = { index, answer: sample.answer, confidence: sample.confidence!, ambiguous: sample.ambiguous };
    voters.push(keyed ? { ...voter, key: keyOf(replies[index]!, settings.typed) } : voter);
  });
  return voters;
}

/**
 * How an attempt gathers its samples. Fixed (`stop: null`): all `max`, as `samples: k` always
 * has. Adaptive: in waves, stopping once the winner is settled — `'decided'` when no outcome
 * of the samples not yet asked could change it, `{ confidence }` when a Beta posterior says
 * the leader beats the runner-up with that probability (Adaptive-Consistency's rule).
 */
export interface SamplePlan {
  readonly max: number;
  /** The first wave. */
  readonly min: number;
  readonly stop: SampleStop | null;
}

export type SampleStop = 'decided' | { readonly confidence: number };

/** What the vote so far counts, for the stopping rules. */
export interface Tally {
  /** Samples in the leading cluster; the runner-up's; samples that parsed; those that said the question is ambiguous. */
  readonly leader: number;
  readonly runnerUp: number;
  readonly voters: number;
  readonly ambiguous: number;
  /** Whether the leading cluster has a sample that did not report ambiguity: only such a cluster can win outright. */
  readonly plainLeader: boolean;
}

export const NO_VOTES: Tally = Object.freeze({ leader: 0, runnerUp: 0, voters: 0, ambiguous: 0, plainLeader: true });

/** The vote of the replies so far, as counts. */
export function tallyOf(replies: readonly Attempt<unknown>[], settings: VoteSettings): Tally {
  const samples = replies.map((reply) => sampleOf(reply, settings.typed));
  const voters = votersOf(samples, replies, settings);
  if (voters.length === 0) return NO_VOTES;
  const { clusters } = voteOf(voters, settings.agree);
  const leader = clusters[0]!;
  return {
    leader: leader.count,
    // Any other cluster is a rival, a larger one said ambiguous included: plain samples joining it make it one that can win.
    runnerUp: clusters.slice(1).reduce((most, cluster) => Math.max(most, cluster.count), 0),
    voters: voters.length,
    ambiguous: voters.filter((voter) => voter.ambiguous).length,
    plainLeader: leader.samples.some((i) => !samples[i]!.ambiguous),
  };
}

/** The tally of a vote an attempt recorded: its samples and clusters, as `tallyOf` counts replies. */
export function tallyOfVote(samples: readonly Sample<unknown>[], clusters: readonly { readonly count: number; readonly samples: readonly number[] }[]): Tally {
  if (clusters.length === 0) return NO_VOTES;
  const leader = clusters[0]!;
  return {
    leader: leader.count,
    runnerUp: clusters.slice(1).reduce((most, cluster) => Math.max(most, cluster.count), 0),
    voters: clusters.reduce((sum, cluster) => sum + cluster.count, 0),
    ambiguous: samples.filter((sample) => sample.parseOk && sample.ambiguous).length,
    plainLeader: leader.samples.some((i) => samples[i]?.ambiguous !== true),
  };
}

/**
 * Whether `remaining` more samples can no longer change what the vote decides (by the plan's
 * rule): whether the question is ambiguous (a majority of the parsed samples says so) and,
 * if it is not, which cluster wins. A sample that fails to parse votes for nobody, so the
 * rules suppose every remaining sample parses.
 */
export function isSettled(tally: Tally, remaining: number, stop: SampleStop): boolean {
  if (remaining === 0) return true;
  const { leader, runnerUp, voters, ambiguous, plainLeader } = tally;
  const byMajority = ambiguous * 2 > voters;
  // Exactly: even if every remaining sample went the other way.
  const ambiguityKept = byMajority ? ambiguous * 2 > voters + remaining : (ambiguous + remaining) * 2 <= voters + remaining;
  const winnerKept = plainLeader && leader - runnerUp > remaining;
  if (stop === 'decided') return ambiguityKept && (byMajority || winnerKept);
  const sure = (a: number, b: number) => leaderBeats(a, b) >= stop.confidence;
  const ambiguitySure = ambiguityKept || sure(Math.max(ambiguous, voters - ambiguous), Math.min(ambiguous, voters - ambiguous));
  return ambiguitySure && (byMajority || winnerKept || (plainLeader && sure(leader, runnerUp)));
}

/**
 * The posterior probability that the leader's share beats the runner-up's, from a uniform
 * prior: P(p > ½) for p ~ Beta(a + 1, b + 1), which is P(Binomial(a + b + 1, ½) ≤ a). Exact
 * for the counts a vote has (at most 20 samples).
 */
export function leaderBeats(a: number, b: number): number {
  const n = a + b + 1;
  let term = 0.5 ** n;
  let sum = term;
  for (let j = 1; j <= a; j += 1) {
    term = (term * (n - j + 1)) / j;
    sum += term;
  }
  return sum;
}

/**
 * How many more samples to ask: the fewest that could settle the vote if they all agreed
 * with it, so no call is made that the vote might not need; all that remain when none could.
 */
export function nextWave(tally: Tally, remaining: number, stop: SampleStop): number {
  const byMajority = tally.ambiguous * 2 > tally.voters;
  for (let k = 1; k < remaining; k += 1) {
    const joined: Tally = {
      leader: byMajority ? tally.leader : tally.leader + k,
      runnerUp: tally.runnerUp,
      voters: tally.voters + k,
      ambiguous: byMajority ? tally.ambiguous + k : tally.ambiguous,
      plainLeader: byMajority ? tally.plainLeader : true,
    };
    if (isSettled(joined, remaining - k, stop)) return k;
  }
  return remaining;
}
