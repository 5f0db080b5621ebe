import { check } from '../../../src/api/check.js';
import { parseReply } from '../../../src/reply/parse.js';
import { oracle, type Verdict, whyOf } from './oracle.js';

/** What Booth made of a reply, in the oracle's terms. */
function booth(reply: string): Verdict | { readonly parseOk: false; readonly why: string } {
  const reading = parseReply(reply);
  if (!reading.ok) return { parseOk: false, why: whyOf(reading.error) };
  const { answer, confidence, ambiguous, interpretations, chosenInterpretation, parsed } = reading;
  return { parseOk: true, answer, confidence, ambiguous, interpretations, chosenInterpretation, parsed };
}

/** The status check() must give a reply with the defaults and no retry. */
function expectedStatus(verdict: Verdict): string {
  if (!verdict.parseOk) return 'UNCERTAIN';
  if (verdict.ambiguous) return 'AMBIGUOUS';
  return verdict.confidence >= 0.7 ? 'VERIFIED' : 'UNCERTAIN';
}

/**
 * Every field on which Booth and the oracle disagree for this reply, as readable lines;
 * empty when they agree. `parsed` is compared as JSON text, which keeps an own
 * `"__proto__"` key visible and tells -0 from 0 nowhere it matters.
 */
export function differences(reply: string): string[] {
  const expected = oracle(reply);
  const actual = booth(reply);
  const out: string[] = [];
  const differ = (field: string, want: unknown, got: unknown) => {
    if (!Object.is(want, got)) out.push(`${field}: oracle ${JSON.stringify(want)}, booth ${JSON.stringify(got)}`);
  };
  differ('parseOk', expected.parseOk, actual.parseOk);
  if (!expected.parseOk || !actual.parseOk) {
    if (!expected.parseOk && !actual.parseOk) differ('why', expected.why, actual.why);
  } else {
    differ('answer', expected.answer, actual.answer);
    differ('confidence', expected.confidence, actual.confidence);
    differ('ambiguous', expected.ambiguous, actual.ambiguous);
    differ('interpretations', JSON.stringify(expected.interpretations), JSON.stringify(actual.interpretations));
    differ('chosenInterpretation', expected.chosenInterpretation, actual.chosenInterpretation);
    differ('parsed', JSON.stringify(expected.parsed), JSON.stringify(actual.parsed));
  }
  differ('status', expectedStatus(expected), check(() => reply, 'q', { maxRetries: 0 }).status);
  return out;
}

export { oracle };
