import { answerText } from '../util/values.js';
import type { Cluster } from '../decide/agreement.js';
import type { Attempt, Sample } from '../decide/attempt.js';
import type { SentPrompt } from '../decide/prompts.js';
import type { BoothResult } from '../results/result.js';
import { numberText } from '../util/numbers.js';
import { redactUrls } from '../util/urls.js';
import { roundAt, saidText } from './clarifications.js';
import { join, type Mermaid, mermaid } from './escape.js';

const PROMPT_KINDS: Readonly<Record<SentPrompt['kind'], string>> = {
  first: 'first prompt',
  repeat: 'the first prompt again',
  parse: 'parse retry',
  validation: 'validation retry',
  disagreement: 'disagreement retry',
  confidence: 'confidence retry',
  clarification: 'the clarified question',
  escalation: 'first prompt, to the next model',
};

/**
 * How a prompt is named in pictures: `first prompt`, `parse retry`, … A kind Booth does not
 * know (from a stored run) is shown as it is, never looked up on the table's prototype.
 */
export function promptKindName(kind: SentPrompt['kind']): string {
  return Object.hasOwn(PROMPT_KINDS, kind) ? PROMPT_KINDS[kind] : String(kind);
}

/** A sampling attempt's clusters, winner first, as answer and size: `"Paris" ×2, "Lyon" ×1`. */
function tallyText(attempt: Attempt<unknown>, show: (answer: unknown) => string): string {
  return (attempt.clusters ?? []).map((c) => `${show(shownAnswer(c, attempt.samples ?? []))} ×${c.count}`).join(', ');
}

/**
 * The answer a cluster is shown by: the form most of its samples gave, the first given among
 * equals. The cluster's own `answer` is its first sample's, which may be the rarer spelling:
 * `"paris."` for a cluster that said `"Paris"` twice. Strings are counted as they are, other
 * answers by their JSON, so a long answer is not copied to be counted.
 */
export function shownAnswer(cluster: Cluster<unknown>, samples: readonly Sample<unknown>[]): unknown {
  // In the order first given, so the first of equals is met first.
  const forms = new Map<unknown, { answer: unknown; count: number }>();
  for (const index of cluster.samples) {
    const sample = samples[index];
    // A sample the cluster names but the attempt lacks (a tampered stored run) gives no form.
    if (sample === undefined) continue;
    const key = typeof sample.answer === 'string' ? sample.answer : answerText(sample.answer);
    const form = forms.get(key) ?? { answer: sample.answer, count: 0 };
    form.count += 1;
    forms.set(key, form);
  }
  let shown = { answer: cluster.answer, count: 0 };
  for (const form of forms.values()) if (form.count > shown.count) shown = form;
  return shown.answer;
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
    const round = roundAt(result, index);
    if (round !== undefined) {
      // The round boundary: the readings went back to the app, and the person's answer came in.
      const { readings } = round.clarification;
      lines.push(mermaid`  Booth-->>App: ${label(`AMBIGUOUS, ${readings.length} reading${readings.length === 1 ? '' : 's'}: ${readings.map(answerHead).join(', ')}`)}`);
      lines.push(mermaid`  App->>Booth: ${label(saidText(round.clarification, answerHead))}`);
    }
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
  const verdict = [result.status, result.answer === null ? '' : answerHead(result.answer), result.reason ?? '']
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
  // URLs redacted, as on the page: a callFn of the caller's own may quote an endpoint with its key.
  if (reply.callFailed) return `call failed: ${redactUrls(String(reply.error))}`;
  if (!reply.parseOk) return `unparseable: ${reply.error}`;
  return `${answerHead(reply.answer)} at confidence ${numberText(reply.confidence!)}${reply.ambiguous ? ', ambiguous' : ''}`;
}

/**
 * How the samples voted. The tally alone is shortened: however many answers there were,
 * the share and the confidence the gates judged stay readable.
 */
function vote(attempt: Attempt<unknown>): Mermaid {
  const clusters = attempt.clusters ?? [];
  const share = shareText(clusters);
  if (share === null) return mermaid`no vote: no sample parsed`;
  return mermaid`${label(`vote ${tallyText(attempt, answerHead)}`)}: agreement ${share}, confidence ${numberText(attempt.confidence!)}`;
}

/** The states an attempt passed after its call, the gates' verdicts in order. */
function gates(result: BoothResult, attempt: number, skipCalling: boolean): Mermaid {
  const states = result.trace
    .filter((step) => step.attempt === attempt && !(skipCalling && step.state === 'calling'))
    .map((step) => step.state);
  return label(states.join(' → '));
}

const LABEL_MAX = 80;

/**
 * Keeps model text from breaking the diagram: at most 80 characters (code points), then
 * one line with entities for Mermaid's specials. Cut before escaping, so an entity is never
 * cut in half, and cut without reading past the 81st code point, so a 64 MB answer costs
 * what an 80-character one does (spreading it into code points first took 8.7 s and 1 GB).
 */
function label(value: string): Mermaid {
  return mermaid`${clip(String(value), LABEL_MAX)}`;
}

/** `text` if it has at most `max` code points, else its first `max - 1` and `…`; never splits a surrogate pair. */
export function clip(text: string, max: number): string {
  const end = codePointsEnd(text, max - 1);
  return codePointsEnd(text, 1, end) === text.length ? text : `${text.slice(0, end)}…`;
}

/**
 * Where the first `count` code points from `start` end, in UTF-16 units; the text's length
 * if it has fewer. Reads only those code points: a pair counts as one, a lone surrogate as one.
 */
function codePointsEnd(text: string, count: number, start = 0): number {
  let index = start;
  for (let points = 0; points < count && index < text.length; points += 1) {
    index += text.codePointAt(index)! > 0xffff ? 2 : 1;
  }
  return index;
}

/**
 * `answerText(answer)` as a label shows it. A string answer longer than a label is quoted
 * from its first code points only: its JSON then still has more than a label's 80, so the
 * cut falls inside it, and the label is the same as from the whole answer's JSON, which for
 * a 64 MB answer would be another 64 MB copy.
 */
function answerHead(answer: unknown): string {
  if (typeof answer !== 'string' || answer.length <= 2 * LABEL_MAX) return answerText(answer);
  return JSON.stringify(answer.slice(0, codePointsEnd(answer, LABEL_MAX)));
}
