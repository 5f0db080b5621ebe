import { acheck } from '../api/acheck.js';
import { clarify, type ClarifyOptions } from '../api/clarify.js';
import type { AsyncCallFn } from '../decide/model-call.js';
import type { Sample } from '../decide/attempt.js';
import type { AnswerSchema } from '../decide/schema.js';
import { askSpentLines } from './spent.js';
import { numberText } from '../util/numbers.js';
import { terminalText } from '../util/values.js';
import { toHtml } from '../visualize/index.js';
import { type EndpointFlags, OUTAGE } from './flags.js';
import { writePage } from './batch/input.js';
import { INTERRUPTED } from './batch/command.js';
import { askPerson } from './clarify/person.js';
import type { SamplesFlag } from './spend-flags.js';
import { type StreamShow, streamShow } from './ask-stream.js';

/** `booth ask`'s output: the answer, or why it was not accepted. */

/** `ask`'s output: the result as lines (or JSON, or an HTML page too), and its exit code. */
export async function printAnswer(
  result: Awaited<ReturnType<typeof acheck>>,
  flags: EndpointFlags & { json?: boolean; html?: string; stream?: boolean },
  schema: AnswerSchema | undefined,
): Promise<void> {
  // A script can branch on the exit code alone: 0 accepted (VERIFIED, REPAIRED), 1 not, 3 no call returned.
  process.exitCode = result.status === 'VERIFIED' || result.status === 'REPAIRED' ? 0 : result.callFailed ? OUTAGE : 1;
  if (flags.html) writePage('page', flags.html, await toHtml(result));
  const print = printer();
  // --stream --json: JSON lines, the partial replies' then the result's, one line each.
  if (flags.json && flags.stream) return print(JSON.stringify({ result }));
  if (flags.json) {
    for (const line of JSON.stringify(result, null, 2).split('\n')) print(line);
    return;
  }
  for (const line of verdictLines(result, schema !== undefined)) print(line);
  if (result.agreement !== null) {
    print(`agreement   ${numberText(result.agreement)} (${samplesNote(result, flags.samples)}, confidence from ${result.settings?.confidenceFrom})`);
  }
  if (result.interpretations.length > 0) print(`readings    ${result.interpretations.join(' | ')}`);
  // With a cascade: who answered, and what each model was asked.
  if (flags.escalateModel.length > 0 || flags.escalateBaseUrl.length > 0) {
    print(`model       ${result.model ?? '—'}`);
    print(`models      ${result.models.map((m) => `${m.model ?? '—'}: ${plural(m.attempts, 'attempt')}, ${plural(m.calls, 'call')}`).join('; ')}`);
  }
  print(`attempts    ${result.nAttempts} (${result.method})`);
  if (result.method === 'budget' && result.detail) print(`budget      ${result.detail}`);
  for (const line of askSpentLines(result)) print(line);
  print(`path        ${result.trace.map((step) => step.state).join(' → ')}`);
  for (const line of problems(result)) print(line);
  if (flags.html) print(`html        ${flags.html}`);
}

/**
 * `ask --stream`'s acheck() options and what ends a check's stream before its result is
 * printed. Printed: the answer as it arrives (see streamShow); with --json, each partial reply
 * as a JSON line `{"partial": …}`, which printAnswer follows with `{"result": …}`.
 */
export function streamingOptions(flags: { json?: boolean; threshold: number }): Pick<StreamShow, 'onPartial' | 'onAttempt' | 'end'> {
  if (flags.json) {
    const print = printer();
    return { onPartial: (partial) => print(JSON.stringify({ partial })), onAttempt: () => undefined, end: () => undefined };
  }
  return streamShow({ write: (text) => void process.stdout.write(text), terminal: process.stdout.isTTY === true }, flags.threshold);
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** How many samples the attempts gathered: K per attempt, or with the adaptive form, how many were asked and how many skipped. */
function samplesNote(result: AskResult, samples: SamplesFlag): string {
  if (typeof samples === 'number') return `${samples} samples per attempt`;
  const gathered = result.attempts.flatMap((attempt) => attempt.samples ?? []);
  const skipped = gathered.filter((sample) => sample.skipped === true).length;
  const stop = samples.stop === undefined || samples.stop === 'decided' ? 'decided' : String(samples.stop.confidence);
  // Skipped samples were asked too: their calls were aborted once the vote was settled.
  return `${plural(gathered.length, 'sample')} asked${skipped === 0 ? '' : `, ${skipped} skipped`}, of at most ${samples.max} per attempt, stop=${stop}`;
}

/** The first lines of `ask`'s output, which `booth clarify` prints after each check: status, answer, confidence. */
export function verdictLines(result: Pick<AskResult, 'status' | 'answer' | 'confidence'>, typed: boolean): string[] {
  const { answer } = result;
  return [
    `status      ${result.status}`,
    // With --schema the answer may be any JSON value: shown as JSON, as `batch` writes it, so "42" is not 42.
    `answer      ${answer === null ? '—' : typed ? JSON.stringify(answer) : String(answer)}`,
    `confidence  ${result.confidence === null ? '—' : numberText(result.confidence)}`,
  ];
}

type AskResult = Awaited<ReturnType<typeof acheck>>;

/** What an empty line and Ctrl-D do at `ask`'s prompt. */
export const ASK_HINT = 'An empty line or Ctrl-D leaves it AMBIGUOUS.';

/**
 * `ask` with a person at the terminal: while the answer is AMBIGUOUS and `maxClarifications`
 * leaves a round, the readings are listed and the person picks one or rephrases the question;
 * clarify() then checks again with the options the first check had, and `show` prints the new
 * result as the first was printed (its exit code with it). An empty line or Ctrl-D leaves the
 * last result standing; Ctrl-C at the prompt ends the command with 130.
 */
export async function clarifyAtTerminal(
  first: AskResult,
  callFn: AsyncCallFn,
  options: ClarifyOptions<unknown> & { readonly maxClarifications: number },
  show: (result: AskResult) => Promise<void>,
): Promise<void> {
  let result = first;
  while (result.status === 'AMBIGUOUS' && result.clarifications.length < options.maxClarifications) {
    const reply = await askPerson(result.interpretations, ASK_HINT);
    if (reply.kind === 'interrupted') {
      process.exitCode = INTERRUPTED;
      return;
    }
    if (reply.kind !== 'choice') return;
    // clarify() has no overload for a schema that may be absent, as acheck() has: the options are acheck()'s, whose answer type is known at run time only.
    result = await clarify(result, reply.choice, callFn, options as ClarifyOptions);
    await show(result);
  }
  if (result.status === 'AMBIGUOUS' && result !== first) {
    printer()(`still AMBIGUOUS after ${result.clarifications.length} clarification${result.clarifications.length === 1 ? '' : 's'}, the most --max-clarifications allows`);
  }
}

/**
 * How `ask` prints a line. To a terminal, the model's text in it (answer, readings, the
 * causes of refused replies) is shown through terminalText: a reply could otherwise clear the
 * screen, retitle the window or print a line that passes for Booth's. To a pipe or a file it
 * is written as it is, for the script reading it.
 */
export function printer(): (line: string) => void {
  const terminal = process.stdout.isTTY === true;
  return (line) => console.log(terminal ? terminalText(line) : line);
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
    // A skipped sample is no problem: the vote was settled without it (the samples line counts it).
    else samples.forEach((sample, n) => sample.skipped !== true && lines.push(...replyProblems(`${which}, sample ${n + 1} of ${samples.length}`, sample)));
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
