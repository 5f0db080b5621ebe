import { acheck } from '../api/acheck.js';
import type { Sample } from '../decide/attempt.js';
import type { AnswerSchema } from '../decide/schema.js';
import { askSpentLines } from './spent.js';
import { numberText } from '../util/numbers.js';
import { toHtml } from '../visualize/index.js';
import { type EndpointFlags, OUTAGE } from './flags.js';
import { writePage } from './batch/input.js';

/** `booth ask`'s output: the answer, or why it was not accepted. */

/** `ask`'s output: the result as lines (or JSON, or an HTML page too), and its exit code. */
export async function printAnswer(result: Awaited<ReturnType<typeof acheck>>, flags: EndpointFlags & { json?: boolean; html?: string }, schema: AnswerSchema | undefined): Promise<void> {
  // A script can branch on the exit code alone: 0 accepted (VERIFIED, REPAIRED), 1 not, 3 no call returned.
  process.exitCode = result.status === 'VERIFIED' || result.status === 'REPAIRED' ? 0 : result.callFailed ? OUTAGE : 1;
  if (flags.html) writePage('page', flags.html, await toHtml(result));
  if (flags.json) return console.log(JSON.stringify(result, null, 2));
  console.log(`status      ${result.status}`);
  // With --schema the answer may be any JSON value: shown as JSON, as `batch` writes it, so "42" is not 42.
  const { answer } = result;
  console.log(`answer      ${answer === null ? '—' : schema === undefined ? String(answer) : JSON.stringify(answer)}`);
  console.log(`confidence  ${result.confidence === null ? '—' : numberText(result.confidence)}`);
  if (result.agreement !== null) {
    console.log(`agreement   ${numberText(result.agreement)} (${flags.samples} samples per attempt, confidence from ${result.settings?.confidenceFrom})`);
  }
  if (result.interpretations.length > 0) console.log(`readings    ${result.interpretations.join(' | ')}`);
  console.log(`attempts    ${result.nAttempts} (${result.method})`);
  for (const line of askSpentLines(result)) console.log(line);
  console.log(`path        ${result.trace.map((step) => step.state).join(' → ')}`);
  for (const line of problems(result)) console.log(line);
  if (flags.html) console.log(`html        ${flags.html}`);
}

/**
 * Each failed call and each unparseable reply of a run, with its cause; when sampling, sample
 * by sample. Counted from 1, as a person counts ("attempt 1 of 2, sample 3 of 3, try 2"),
 * though `result.attempts` and `info.attempt` count from 0: see docs/cli.md.
 */
export function problems(result: Awaited<ReturnType<typeof acheck>>): string[] {
  const lines: string[] = [];
  const total = result.attempts.length;
  result.attempts.forEach((attempt, index) => {
    const which = `attempt ${index + 1} of ${total}`;
    const { samples } = attempt;
    if (samples === undefined) lines.push(...replyProblems(which, attempt));
    else samples.forEach((sample, n) => lines.push(...replyProblems(`${which}, sample ${n + 1} of ${samples.length}`, sample)));
    if (attempt.validationError !== null) lines.push(`failed validation ${which}: ${attempt.validationError}`);
  });
  return lines;
}

/** The failed calls and the refusal of one reply: an attempt's, or one sample's. */
export function replyProblems(which: string, reply: Pick<Sample<unknown>, 'callTries' | 'callFailed' | 'parseOk' | 'error'>): string[] {
  const lines: string[] = [];
  // The failed tries come first (a try follows only a failure), so the nth failed one is try n + 1.
  const tries = reply.callTries.filter((t) => t.error !== null);
  tries.forEach((t, n) => lines.push(`call failed ${tries.length > 1 || reply.callTries.length > 1 ? `${which}, try ${n + 1}` : which}: ${t.error}`));
  if (reply.callFailed && tries.length === 0) lines.push(`call failed ${which}: ${reply.error}`);
  if (!reply.callFailed && !reply.parseOk) lines.push(`unparseable ${which}: ${reply.error}`);
  return lines;
}
