import { describeThrown } from '../util/values.js';

/**
 * Confidence from agreement: several answers sampled for one prompt, grouped into
 * clusters of answers that count as the same, and a confidence made from the vote.
 * Verbalized confidence is overconfident; agreement among independent samples flags wrong
 * answers better, and the two combined better still (Xiong et al., ICLR 2024).
 */

/** Where an attempt's confidence comes from when it samples several answers. */
export type ConfidenceSource = 'self' | 'agreement' | 'hybrid';

export const CONFIDENCE_SOURCES: readonly ConfidenceSource[] = ['self', 'agreement', 'hybrid'];

/** The confidence a run uses: the one asked for, else the vote's and the model's together when sampling, the model's own otherwise. */
export function confidenceSourceFor(samples: number, given: ConfidenceSource | undefined): ConfidenceSource {
  return given ?? (samples > 1 ? 'hybrid' : 'self');
}

/** When two answers count as the same: strings without a schema, the model's JSON values with one. */
export type AgreeFn<A = string> = (a: A, b: A) => boolean;

/** Answers that counted as the same, winner first. */
export interface Cluster<A = string> {
  /** The answer of the cluster's first sample, as the model wrote it. */
  readonly answer: A;
  readonly count: number;
  /** The mean of its samples' self-reported confidences. */
  readonly meanConfidence: number;
  /** Which samples gave it, by index. */
  readonly samples: readonly number[];
}

/** A parsed sample, as the vote sees it. */
export interface Voter {
  readonly index: number;
  readonly answer: unknown;
  readonly confidence: number;
  /** Reported the question ambiguous: it may answer blank, so it alone cannot make a winner. */
  readonly ambiguous?: boolean;
  /**
   * The answer's key under the default `agree` (`agreementKey`), when made already: the
   * machine makes it as each reply arrives. Ignored with a custom `agree`.
   */
  readonly key?: AgreementKey;
}

/** What the default `agree` compares of an answer: its whole normalized text (or canonical JSON), and a hash of it to find equals fast. */
export interface AgreementKey {
  readonly text: string;
  readonly hash: number;
}

export interface Vote {
  /**
   * Largest first; among equals the more confident, then the earlier. A cluster of samples
   * that all reported ambiguity comes after every other. Empty when no sample parsed.
   */
  readonly clusters: readonly Cluster<unknown>[];
  /** The first failure of a custom `agree`: that pair counted as different. */
  readonly agreeError: string | null;
}

/**
 * Text as two answers are compared by default: Unicode NFKC, trimmed, case-folded,
 * whitespace collapsed and a trailing period dropped, so "Paris." and " paris" agree.
 */
export function normalizedText(text: string): string {
  // Upper then lower case folds what lower case alone leaves apart: "ß" and "SS", "ς" and "σ".
  // Only runs of white space other than a lone " " are replaced: the same text as `/\s+/g`
  // gives, but prose has a single space every few characters, and replacing each with itself
  // made this forty times slower (90 ms a megabyte), paid for every sample of every vote.
  return text.normalize('NFKC').trim().toUpperCase().toLowerCase().replace(WHITE_RUN, ' ').replace(/\.$/, '').trim();
}

/** A run of white space that is not a single U+0020: one that starts with other white space, or a space and more. */
const WHITE_RUN = /[^\S ]\s*| \s+/g;

/** JSON with every object's keys sorted, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  ) ?? 'null';
}

/** The default `agree`: normalized text for free-text answers, equal canonical JSON for typed ones. */
export function defaultAgree(typed: boolean): AgreeFn<unknown> {
  return typed ? sameJson : sameText;
}

/**
 * An answer's key under the default `agree`: two answers agree by default exactly when
 * their keys are equal, whole (nothing is cut, so answers that differ anywhere stay apart).
 * A vote then makes one key per sample and groups by it, rather than comparing every pair.
 */
export function agreementKey(answer: unknown, typed: boolean): AgreementKey {
  const text = typed ? canonicalJson(answer) : normalizedText(String(answer));
  return { text, hash: fnv1a(text) };
}

/**
 * FNV-1a over the UTF-16 code units. Why a hash of our own when a Map hashes strings: V8
 * hashes a string longer than 16 383 characters by its length alone, so long keys of one
 * length all collide and each lookup compares whole texts (20 keys of 1 MB differing at their
 * end cost 60 ms). Equal hashes are only a hint: the texts are compared before two answers
 * are grouped, so a collision costs a comparison, never a wrong vote.
 */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

const sameText: AgreeFn<unknown> = (a, b) => agreementKey(a, false).text === agreementKey(b, false).text;
const sameJson: AgreeFn<unknown> = (a, b) => agreementKey(a, true).text === agreementKey(b, true).text;

/** Whether `agree` is a default, and for which kind of answer; null for a custom one. */
function defaultKind(agree: AgreeFn<unknown>): { readonly typed: boolean } | null {
  if (agree === sameText) return { typed: false };
  if (agree === sameJson) return { typed: true };
  return null;
}

/**
 * Groups the voters: each joins the first cluster whose first answer it agrees with. A
 * custom `agree` that throws or returns anything but `true` counts the pair as different,
 * and its first failure is kept, so a broken comparator shows in the history, not as a throw.
 *
 * The default `agree` is equality of `agreementKey`, so joining the first cluster whose first
 * answer agrees is joining the cluster of the same key: the voters are grouped by key, one key
 * each, and a vote costs the length of its answers once, not once per pair (20 distinct 1 MB
 * answers held the event loop for 14.6 s). A custom `agree` is asked pair by pair, as documented.
 */
export function voteOf(voters: readonly Voter[], agree: AgreeFn<unknown>): Vote {
  const kind = defaultKind(agree);
  return kind ? clustered(keyedGroups(voters, kind.typed), null) : pairwise(voters, agree);
}

function keyedGroups(voters: readonly Voter[], typed: boolean): Voter[][] {
  // In the order their first voter came, the order the pairwise loop makes them.
  const groups: Voter[][] = [];
  // Hash → the groups whose key has that hash, each with its key's text.
  const byHash = new Map<number, Array<{ readonly text: string; readonly members: Voter[] }>>();
  for (const voter of voters) {
    const { text, hash } = voter.key ?? agreementKey(voter.answer, typed);
    const bucket = byHash.get(hash);
    const group = bucket?.find((candidate) => candidate.text === text);
    if (group) {
      group.members.push(voter);
      continue;
    }
    const members = [voter];
    groups.push(members);
    if (bucket) bucket.push({ text, members });
    else byHash.set(hash, [{ text, members }]);
  }
  return groups;
}

function pairwise(voters: readonly Voter[], agree: AgreeFn<unknown>): Vote {
  const groups: Voter[][] = [];
  let agreeError: string | null = null;
  const same = (a: unknown, b: unknown): boolean => {
    try {
      const verdict: unknown = agree(a, b);
      if (typeof verdict === 'boolean') return verdict;
      agreeError ??= `agree returned ${typeof verdict}, expected a boolean`;
    } catch (error) {
      const { name, message } = describeThrown(error);
      agreeError ??= `agree threw ${name}: ${message}`;
    }
    return false;
  };
  for (const voter of voters) {
    const group = groups.find((members) => same(members[0]!.answer, voter.answer));
    if (group) group.push(voter);
    else groups.push([voter]);
  }
  return clustered(groups, agreeError);
}

/** The groups as clusters, winner first. */
function clustered(groups: readonly Voter[][], agreeError: string | null): Vote {
  const plain = new Map<Cluster<unknown>, boolean>();
  const isPlain = (cluster: Cluster<unknown>) => plain.get(cluster) === true;
  const clusters = groups.map(
    (members): Cluster<unknown> =>
      Object.freeze({
        answer: members[0]!.answer,
        count: members.length,
        meanConfidence: members.reduce((sum, m) => sum + m.confidence, 0) / members.length,
        samples: Object.freeze(members.map((m) => m.index)),
      }),
  );
  clusters.forEach((cluster, i) => plain.set(cluster, groups[i]!.some((m) => m.ambiguous !== true)));
  // A stable sort keeps the earlier of two equal clusters first.
  clusters.sort((a, b) => Number(isPlain(b)) - Number(isPlain(a)) || b.count - a.count || b.meanConfidence - a.meanConfidence);
  return { clusters: Object.freeze(clusters), agreeError };
}

/** The winning cluster's share of the parsed samples. */
export function agreementOf(clusters: readonly Cluster<unknown>[]): number {
  const parsed = clusters.reduce((sum, c) => sum + c.count, 0);
  return clusters[0]!.count / parsed;
}

/** The attempt's confidence, from the vote: the threshold applies to this figure. */
export function combinedConfidence(clusters: readonly Cluster<unknown>[], source: ConfidenceSource): number {
  const winner = clusters[0]!;
  switch (source) {
    case 'self':
      return winner.meanConfidence;
    case 'agreement':
      return agreementOf(clusters);
    case 'hybrid':
      return agreementOf(clusters) * winner.meanConfidence;
  }
}
