import { answerText } from '../values.js';
import type { Cluster } from '../agreement.js';
import type { Attempt, Sample } from '../attempt.js';
import type { SentPrompt } from '../prompts.js';
import type { BoothResult } from '../result.js';
import { join, type Mermaid, mermaid } from './escape.js';

const PROMPT_KINDS: Readonly<Record<SentPrompt['kind'], string>> = {
  first: 'first prompt',
  repeat: 'the first prompt again',
  parse: 'parse retry',
  validation: 'validation retry',
  disagreement: 'disagreement retry',
  confidence: 'confidence retry',
};

/**
 * How a prompt is named in pictures: `first prompt`, `parse retry`, … A kind Booth does not
 * know (from a stored run) is shown as it is, never looked up on the table's prototype.
 */
export function promptKindName(kind: SentPrompt['kind']): string {
  return Object.hasOwn(PROMPT_KINDS, kind) ? PROMPT_KINDS[kind] : String(kind);
}

/** A sampling attempt's clusters, winner first, as answer and size: `"Paris" ×2, "Lyon" ×1`. */
export function tallyText(clusters: readonly Cluster<unknown>[]): string {
  return clusters.map((c) => `${answerText(c.answer)} ×${c.count}`).join(', ');
}

/**
 * The winning cluster's share of the parsed samples, as counted: `2 of 3`. Counts rather
 * than a fraction: beside the number of samples they show how many replies did not vote.
 */
export function shareText(clusters: readonly Cluster<unknown>[]): string | null {
  const winner = clusters[0];
  return winner === undefined ? null : `${winner.count} of ${clusters.reduce((sum, c) => sum + c.count, 0)}`;
}

/** A Mermaid sequence diagram of a run, one block per attempt. */
export function sequence(result: BoothResult): string {
  const lines = [mermaid`sequenceDiagram`, mermaid`  participant App`, mermaid`  participant Booth`, mermaid`  participant Model`];
  if (result.attempts.length === 0) {
    lines.push(mermaid`  App->>Booth: answer and evidence`);
    lines.push(mermaid`  Note over Booth: ${gates(result, 0, false)}`);
  } else {
    lines.push(mermaid`  App->>Booth: prompt`);
  }
  result.attempts.forEach((attempt, index) => {
    const kind = promptKindName(result.prompts[index]?.kind ?? 'first');
    if (attempt.samples === undefined) {
      lines.push(mermaid`  Booth->>Model: attempt ${index}, ${kind}`);
      lines.push(replyLine(attempt));
    } else {
      attempt.samples.forEach((sample, s) => {
        lines.push(mermaid`  Booth->>Model: attempt ${index}, ${kind}, sample ${s}`);
        lines.push(replyLine(sample));
      });
      lines.push(mermaid`  Note over Booth: ${vote(attempt)}`);
    }
    lines.push(mermaid`  Note over Booth: ${gates(result, index, true)}`);
  });
  const verdict = [result.status, result.answer === null ? '' : answerText(result.answer), result.reason ?? '']
    .filter(Boolean)
    .join(' ');
  lines.push(mermaid`  Booth-->>App: ${label(verdict)}`);
  return `${join(lines, mermaid`\n`).text}\n`;
}

/** What a reply needs to be drawn: an attempt's own fields, or one sample's. */
type Reply = Pick<Sample<unknown>, 'answer' | 'confidence' | 'parseOk' | 'error' | 'callFailed' | 'ambiguous'>;

function replyLine(reply: Reply): Mermaid {
  return mermaid`  ${reply.callFailed ? mermaid`Model--xBooth` : mermaid`Model-->>Booth`}: ${label(replyText(reply))}`;
}

function replyText(reply: Reply): string {
  if (reply.callFailed) return `call failed: ${reply.error}`;
  if (!reply.parseOk) return `unparseable: ${reply.error}`;
  return `${answerText(reply.answer)} at confidence ${reply.confidence}${reply.ambiguous ? ', ambiguous' : ''}`;
}

/**
 * How the samples voted. The tally alone is shortened: however many answers there were,
 * the share and the confidence the gates judged stay readable.
 */
function vote(attempt: Attempt<unknown>): Mermaid {
  const clusters = attempt.clusters ?? [];
  const share = shareText(clusters);
  if (share === null) return mermaid`no vote: no sample parsed`;
  return mermaid`${label(`vote ${tallyText(clusters)}`)}: agreement ${share}, confidence ${attempt.confidence}`;
}

/** The states an attempt passed after its call, the gates' verdicts in order. */
function gates(result: BoothResult, attempt: number, skipCalling: boolean): Mermaid {
  const states = result.trace
    .filter((step) => step.attempt === attempt && !(skipCalling && step.state === 'calling'))
    .map((step) => step.state);
  return label(states.join(' → '));
}

/** Keeps model text from breaking the diagram: one line, entities for Mermaid's specials, at most 80 characters. */
function label(value: string): Mermaid {
  const chars = [...value];
  return mermaid`${chars.length > 80 ? `${chars.slice(0, 79).join('')}…` : value}`;
}
