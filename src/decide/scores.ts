import { describeThrown } from '../util/values.js';

/** How far a comparator's return value says the answer agrees with the evidence. */
export type Score =
  | { readonly kind: 'boolean'; readonly value: 0 | 1 }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'invalid'; readonly returned: unknown };

/** A boolean is pass/fail; a finite number in [0, 1] is an agreement score; nothing else is. */
export function readScore(returned: unknown): Score {
  if (typeof returned === 'boolean') return { kind: 'boolean', value: returned ? 1 : 0 };
  if (typeof returned === 'number' && Number.isFinite(returned) && returned >= 0 && returned <= 1) {
    return { kind: 'number', value: returned };
  }
  return { kind: 'invalid', returned };
}

const DETAIL_LIMIT = 200;

/** First `limit` characters, counted in code points so a surrogate pair is never split. */
function head(text: string, limit = DETAIL_LIMIT): string {
  if (text.length <= limit) return text;
  let out = '';
  let count = 0;
  for (const char of text) {
    if (count === limit) break;
    out += char;
    count += 1;
  }
  return out;
}

export function compareFailedDetail(thrown: unknown): string {
  const { name, message } = describeThrown(thrown);
  return `${name}: ${head(message)}`;
}

export function invalidScoreDetail(returned: unknown): string {
  let shown: string | undefined;
  try {
    shown = JSON.stringify(returned);
  } catch {
    // Cycles and BigInts cannot be JSON-encoded; String() below says what it was.
  }
  if (shown === undefined || (typeof returned === 'number' && !Number.isFinite(returned))) {
    try {
      shown = String(returned);
    } catch {
      shown = '<unprintable value>';
    }
  }
  return `the comparator returned ${head(shown)}; expected a boolean or a number from 0 to 1`;
}

export const FALSE_DETAIL = 'the comparator returned false: the answer disagrees with the evidence';

export function belowThresholdDetail(score: number, threshold: number): string {
  return `evidence agreement ${score} is below the threshold ${threshold}`;
}

export const EMPTY_ANSWER_DETAIL = 'the answer is empty';
export const NO_EVIDENCE_DETAIL = 'no evidence was given';
