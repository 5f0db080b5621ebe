import type { Attempt } from '../decide/attempt.js';
import type { PartialReply } from '../engine/partial-reply.js';
import { numberText } from '../util/numbers.js';
import { terminalText } from '../util/values.js';

/**
 * `booth ask --stream`: the answer printed as it arrives, the verdict held. The status line
 * and the rest of the result are printed by printAnswer once acheck() resolves; until then
 * only the model's answer so far is shown (`partial.answerSoFar`, as deltas), so nothing on
 * the screen says whether it will be accepted.
 *
 * When a stream replaces the one shown (`partial.replaces`: a retry, a call retry, an
 * escalation), the text already printed cannot be taken back from a pipe: a line
 * `— replaced: <why> —` follows it (dimmed on a terminal), and the new stream starts on the
 * next line. The why comes from `onAttempt`, which reports each finished attempt before the
 * next one is called.
 *
 * With --samples above 1 the samples stream side by side: only the first sample of each
 * attempt is shown (the vote decides the answer, which the result prints).
 *
 * The model's text goes through terminalText to a terminal, as printer()'s lines do: no escape
 * sequence, control character or line break of it reaches the screen as such. To a pipe it is
 * written as it is, as printer() writes it.
 */
export interface StreamShow {
  readonly onPartial: (partial: PartialReply) => void;
  readonly onAttempt: (index: number, attempt: Attempt<unknown>) => void;
  /** Ends the streamed text with a line break (when it left one open) before the result's lines; the next check starts afresh. */
  readonly end: () => void;
}

/** What the stream is written to: stdout, and whether it is a terminal. */
export interface StreamOut {
  readonly write: (text: string) => void;
  readonly terminal: boolean;
}

/** SGR faint on, and normal intensity: Booth's own escapes, to a terminal only. */
const DIM = '\u001b[2m';
const UNDIM = '\u001b[22m';

/** The most a reason in a `— replaced —` line shows of an error: one line, not the reply quoted whole. */
const MAX_REASON = 160;

export function streamShow(out: StreamOut, threshold: number): StreamShow {
  /** The answer text printed for the stream shown, to print only what each partial adds. */
  let shown = '';
  /** Whether the cursor is at the start of a line. */
  let lineStart = true;
  /** The stream shown: its attempt and model; null before the first partial of a check. */
  let current: { attempt: number; model: string | undefined } | null = null;
  /** The last finished attempt, from onAttempt: why the next stream replaces it. */
  let finished: { index: number; attempt: Attempt<unknown> } | null = null;

  const write = (text: string, model: boolean) => {
    if (text === '') return;
    out.write(model && out.terminal ? terminalText(text) : text);
    lineStart = text.endsWith('\n');
  };
  const newline = () => {
    if (!lineStart) write('\n', false);
  };

  return {
    onPartial(partial) {
      // Samples stream side by side: the first of each attempt is the one shown.
      if (partial.sample !== undefined && partial.sample !== 0) return;
      if (partial.replaces || current === null || current.attempt !== partial.attempt || current.model !== partial.model) {
        if (shown !== '' && current !== null) {
          newline();
          const line = `— replaced: ${replacedWhy(current, partial, finished, threshold)} —`;
          write(out.terminal ? `${DIM}${terminalText(line)}${UNDIM}\n` : `${line}\n`, false);
        }
        shown = '';
        current = { attempt: partial.attempt, model: partial.model };
      }
      const answer = partial.answerSoFar;
      if (answer === null || answer === shown) return;
      if (answer.startsWith(shown)) write(answer.slice(shown.length), true);
      else {
        // Not a continuation of what is shown (a reader never takes text back; this is a guard): shown again whole.
        newline();
        write(answer, true);
      }
      shown = answer;
    },
    onAttempt(index, attempt) {
      finished = { index, attempt };
    },
    end() {
      newline();
      shown = '';
      current = null;
      finished = null;
    },
  };
}

/** Why the stream shown is replaced: the attempt's failure, a failed call tried again, or the next model of a cascade. */
function replacedWhy(
  was: { attempt: number; model: string | undefined },
  now: PartialReply,
  finished: { index: number; attempt: Attempt<unknown> } | null,
  threshold: number,
): string {
  const escalated = now.model !== undefined && now.model !== was.model ? `; asking ${now.model}` : '';
  // The same attempt again: its call failed (or timed out) mid-reply, and --call-retries calls again.
  if (now.attempt === was.attempt) return `the call of attempt ${was.attempt + 1} failed; calling again${escalated}`;
  if (finished === null || finished.index !== was.attempt) return `attempt ${was.attempt + 1} was not accepted${escalated}`;
  return `attempt ${was.attempt + 1}: ${attemptFailure(finished.attempt, threshold)}${escalated}`;
}

/** What was wrong with an attempt that was not accepted, in the words of ask's problem lines. */
export function attemptFailure(attempt: Attempt<unknown>, threshold: number): string {
  if (attempt.callFailed) return `call failed: ${cut(attempt.error ?? 'no reply')}`;
  if (!attempt.parseOk) return `unparseable: ${cut(attempt.error ?? 'no reply')}`;
  const issue = attempt.schemaIssues?.[0];
  if (issue !== undefined) return `the schema refused the answer: ${cut(`${issue.path}: ${issue.message}`)}`;
  if (attempt.validationError !== null) return `failed validation: ${cut(attempt.validationError)}`;
  if (attempt.confidence !== null && attempt.confidence < threshold) {
    return `confidence ${numberText(attempt.confidence)}, below the threshold ${numberText(threshold)}`;
  }
  return 'not accepted';
}

/** One line of at most MAX_REASON characters, cut between code points. */
function cut(text: string): string {
  const points = [...text.replace(/\s+/g, ' ')];
  return points.length <= MAX_REASON ? points.join('') : `${points.slice(0, MAX_REASON - 1).join('')}…`;
}
