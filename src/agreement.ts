import { describeThrown } from './values.js';

/**
 * Confidence from agreement: several answers sampled for one prompt, grouped into
 * clusters of answers that count as the same, and a confidence made from the vote.
 * Verbalized confidence is overconfident; agreement among independent samples flags wrong
 * answers better, and the two combined better still (Xiong et al., ICLR 2024).
 */

/** Where an attempt's confidence comes from when it samples several answers. */
export type ConfidenceSource = 'self' | 'agreement' | 'hybrid';

export const CONFIDENCE_SOURCES: readonly ConfidenceSource[] = ['self', 'agreement', 'hybrid'];

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
  return text.normalize('NFKC').trim().toUpperCase().toLowerCase().replace(/\s+/g, ' ').replace(/\.$/, '').trim();
}

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

const sameText: AgreeFn<unknown> = (a, b) => normalizedText(String(a)) === normalizedText(String(b));
const sameJson: AgreeFn<unknown> = (a, b) => canonicalJson(a) === canonicalJson(b);

/**
 * Groups the voters: each joins the first cluster whose first answer it agrees with. A
 * custom `agree` that throws or returns anything but `true` counts the pair as different,
 * and its first failure is kept, so a broken comparator shows in the history, not as a throw.
 */
export function voteOf(voters: readonly Voter[], agree: AgreeFn<unknown>): Vote {
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
