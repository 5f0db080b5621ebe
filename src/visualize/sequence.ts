import { answerText } from '../values.js';
import type { Cluster } from '../agreement.js';
import type { Attempt, Sample } from '../attempt.js';
import type { SentPrompt } from '../prompts.js';
import type { BoothResult } from '../result.js';
import { mermaidText } from './render.js';

const PROMPT_KINDS: Readonly<Record<SentPrompt['kind'], string>> = {
  first: 'first prompt',
  repeat: 'the first prompt again',
  parse: 'parse retry',
  validation: 'validation retry',
  disagreement: 'disagreement retry',
  confidence: 'confidence retry',
};

/** How a prompt is named in pictures: `first prompt`, `parse retry`, … */
export function promptKindName(kind: SentPrompt['kind']): string {
  return PROMPT_KINDS[kind];
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
  const lines = ['sequenceDiagram', '  participant App', '  participant Booth', '  participant Model'];
  if (result.attempts.length === 0) {
    lines.push('  App->>Booth: answer and evidence');
    lines.push(`  Note over Booth: ${gates(result, 0, false)}`);
  } else {
    lines.push('  App->>Booth: prompt');
  }
  result.attempts.forEach((attempt, index) => {
    const kind = promptKindName(result.prompts[index]?.kind ?? 'first');
    if (attempt.samples === undefined) {
      lines.push(`  Booth->>Model: attempt ${index}, ${kind}`);
      lines.push(replyLine(attempt));
    } else {
      attempt.samples.forEach((sample, s) => {
        lines.push(`  Booth->>Model: attempt ${index}, ${kind}, sample ${s}`);
        lines.push(replyLine(sample));
      });
      lines.push(`  Note over Booth: ${vote(attempt)}`);
    }
    lines.push(`  Note over Booth: ${gates(result, index, true)}`);
  });
  const verdict = [result.status, result.answer === null ? '' : answerText(result.answer), result.reason ?? '']
    .filter(Boolean)
    .join(' ');
  lines.push(`  Booth-->>App: ${text(verdict)}`);
  return `${lines.join('\n')}\n`;
}

/** What a reply needs to be drawn: an attempt's own fields, or one sample's. */
type Reply = Pick<Sample<unknown>, 'answer' | 'confidence' | 'parseOk' | 'error' | 'callFailed' | 'ambiguous'>;

function replyLine(reply: Reply): string {
  return `  ${reply.callFailed ? 'Model--xBooth' : 'Model-->>Booth'}: ${text(replyText(reply))}`;
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
function vote(attempt: Attempt<unknown>): string {
  const clusters = attempt.clusters ?? [];
  const share = shareText(clusters);
  if (share === null) return 'no vote: no sample parsed';
  return `${text(`vote ${tallyText(clusters)}`)}${mermaidText(`: agreement ${share}, confidence ${attempt.confidence}`)}`;
}

/** The states an attempt passed after its call, the gates' verdicts in order. */
function gates(result: BoothResult, attempt: number, skipCalling: boolean): string {
  const states = result.trace
    .filter((step) => step.attempt === attempt && !(skipCalling && step.state === 'calling'))
    .map((step) => step.state);
  return text(states.join(' → '));
}

/** Keeps model text from breaking the diagram: one line, entities for Mermaid's specials, at most 80 characters. */
function text(value: string): string {
  const chars = [...value];
  const line = chars.length > 80 ? `${chars.slice(0, 79).join('')}…` : value;
  return mermaidText(line);
}
