import { CommanderError } from 'commander';
import type { CheckpointOutput } from '../../../machines/checkpoint/types.js';
import { clarify, type ClarifyOptions } from '../../api/clarify.js';
import { readCheckArguments } from '../../api/options.js';
import { AMBIGUOUS } from '../../decide/constants.js';
import { firstPrompt, type SentPrompt } from '../../decide/prompts.js';
import type { AsyncCallFn } from '../../decide/model-call.js';
import type { CheckResult } from '../../results/result.js';
import type { JsonValue } from '../../reply/json-objects.js';
import { quotedText } from '../../util/values.js';
import { printer, verdictLines } from '../ask.js';
import { INTERRUPTED } from '../batch/command.js';
import { checkNotRead, readEarlierResults, readQuestions } from '../batch/input.js';
import { lockOutput, ResultLines, resultRow } from '../batch/output.js';
import { RerunCheck, RunChangedError, runRecord } from '../batch/run-record.js';
import { callsFrom, checkOptions, type EndpointFlags, OUTAGE, schemaFrom, USAGE_ERROR, warn } from '../flags.js';
import { startOtel } from '../otel.js';
import { readResultLines, type ReadLine } from '../report/model.js';
import { askPerson, personAtTerminal } from './person.js';

/**
 * `booth clarify results.jsonl -o clarified.jsonl`: the ambiguous questions of a batch, one by
 * one, put to the person at the terminal as `booth ask` puts one; each answered one is checked
 * again with clarify() and its line written as `booth batch` writes lines. The other lines are
 * copied as they are, so the output is the whole batch, clarified. A rerun into the same output
 * keeps the lines already there, by id, and asks only about the rest.
 */

export interface ClarifyFlags extends EndpointFlags {
  readonly output: string;
  /** The batch's questions file: the question of each line that did not keep its prompts. */
  readonly questions?: string;
  readonly maxClarifications: number;
}

/** What an empty line and Ctrl-D do at `booth clarify`'s prompt. */
export const CLARIFY_HINT = 'An empty line skips it (it stays AMBIGUOUS); Ctrl-D stops here, and the same command goes on from it.';

/** A line of the input, and what the walk does with it. */
type Step =
  | { readonly kind: 'copy'; readonly line: ReadLine }
  | { readonly kind: 'ask'; readonly line: ReadLine; readonly where: string; readonly question: string; readonly given: CheckpointOutput<unknown> };

/** How a walk ended: every line handled, or stopped by the person (Ctrl-D, Ctrl-C) or by an endpoint that answers no call. */
type Ending = 'done' | Stop | `${Stop}-written` | 'outage';
/** The person stopped (Ctrl-D, Ctrl-C); `-written` when the question under way had a clarified check, which was kept. */
type Stop = 'ended' | 'interrupted';

export async function clarifyBatch(input: string, flags: ClarifyFlags): Promise<void> {
  if (!personAtTerminal()) {
    throw new CommanderError(
      USAGE_ERROR,
      'booth.clarify',
      'error: booth clarify asks you which reading each ambiguous question means, so its input and output must be a terminal, not a pipe or a file. Run it in a terminal (booth report shows the readings without asking).',
    );
  }
  checkNotRead('results', flags.output, [input, flags.questions]);
  const schema = await schemaFrom(flags);
  const { callFn, modelName, escalate } = callsFrom(flags);
  const run = runRecord(flags);
  // The instructions clarify() reads the question off a first prompt with, and rebuilds one with.
  const { instructions } = readCheckArguments('clarify', () => '', 'question', { schema });
  const read = readResultLines(input, warn);
  const asked = new Map(flags.questions === undefined ? [] : readQuestions(flags.questions, () => undefined).map((q) => [String(q.id), q.prompt] as const));
  const release = lockOutput(flags.output);
  let otel: Awaited<ReturnType<typeof startOtel>> | null = null;
  try {
    // A line cut short by a kill is dropped here, and its question asked again.
    const done = readEarlierResults(flags.output, false, new Set(), warn).done;
    const steps = plan(input, read, done, asked, instructions, flags);
    const toAsk = steps.filter((step) => step.kind === 'ask');
    // Both rounds of a question are to be judged alike: the lines to ask about must have been made with these flags.
    const check = new RerunCheck(flags, run, false, () => 'Give booth clarify the flags the batch was run with, so that both rounds of a question are judged alike.');
    try {
      for (const step of toAsk) check.redo(step.line.row, step.where);
      check.finish(input, warn);
    } catch (error) {
      if (error instanceof RunChangedError) throw new CommanderError(USAGE_ERROR, 'booth.rerun', `error: ${error.message}`);
      throw error;
    }
    otel = flags.otel ? await startOtel(flags.model, USAGE_ERROR, warn) : null;
    const options = { ...checkOptions(flags), modelName, escalate, schema, telemetry: otel?.telemetry, maxClarifications: flags.maxClarifications };
    const lines = new ResultLines(flags.output, [], steps.length, () => undefined);
    let ending: Ending;
    const tally = { answered: 0, skipped: 0, copied: 0, statuses: new Map<string, number>() };
    try {
      ending = await walk(steps, toAsk.length, { lines, callFn, options, run, tally, typed: schema !== undefined, output: flags.output });
    } finally {
      lines.close();
    }
    report(ending, tally, done.size, flags.output);
  } finally {
    release();
    await otel?.shutdown();
  }
}

/**
 * What to do with each line, decided before anyone is asked anything: a line already in the
 * output is left there (as is a second line of one id); an ambiguous one whose question is
 * known and that clarify() can continue is asked about; any other is copied, with a warning
 * when it is ambiguous. Lines that do not hold their question, without `--questions`, are bad usage.
 */
function plan(input: string, read: readonly ReadLine[], done: ReadonlySet<string>, asked: ReadonlyMap<string, string>, instructions: string, flags: ClarifyFlags): Step[] {
  const steps: Step[] = [];
  const seen = new Set(done);
  let questionless = 0;
  for (const line of read) {
    const id = String(line.row['id']);
    const where = `${input} (id ${shownId(line.row['id'])})`;
    if (seen.has(id)) {
      if (!done.has(id)) warn(`${where}: a second line with this id; left out, as the first one is written`);
      continue;
    }
    seen.add(id);
    const step = stepFor(line, where, asked.get(id), instructions, flags);
    if (typeof step === 'string') {
      if (step === 'no question') questionless += 1;
      else warn(`${where}: ${step}; copied as it is`);
      steps.push({ kind: 'copy', line });
    } else steps.push(step);
  }
  if (questionless > 0) {
    throw new CommanderError(
      USAGE_ERROR,
      'booth.clarify',
      `error: ${questionless} ambiguous line${questionless === 1 ? '' : 's'} of ${input} ${questionless === 1 ? 'does' : 'do'} not hold ${questionless === 1 ? 'its' : 'their'} question (booth batch keeps the prompts only with --with-prompts): give --questions FILE, the questions file the batch read.`,
    );
  }
  return steps;
}

/** One line's step; for an ambiguous line that cannot be asked about, why not ('no question': its question is nowhere). */
function stepFor(line: ReadLine, where: string, listed: string | undefined, instructions: string, flags: ClarifyFlags): Step | string {
  const { result, row, hasPrompts } = line;
  if (result.status !== AMBIGUOUS) return { kind: 'copy', line };
  const rounds = result.clarifications.length;
  if (rounds >= flags.maxClarifications) return `clarified ${rounds} time${rounds === 1 ? '' : 's'} already, the most --max-clarifications allows`;
  if (hasPrompts) {
    // As clarify() reads it: the question of the first clarification, or the first prompt without its instructions.
    const tail = `\n\n${instructions}`;
    const first = result.prompts[0];
    const question = result.clarifications[0]?.question ?? (first?.kind === 'first' && first.text.endsWith(tail) ? first.text.slice(0, -tail.length) : null);
    if (question === null) return 'its first prompt does not end with the instructions these flags give (was the batch run with another --schema?)';
    return { kind: 'ask', line, where, question, given: asOutput(row) };
  }
  // booth batch keeps a line's prompts only with --with-prompts, and clarify() continues a run
  // from its prompts. The one prompt of a one-attempt run is the question and the instructions,
  // rebuilt exactly as acheck() built it from the question in --questions; a retry's cannot be.
  if (result.nAttempts !== 1 || rounds > 0) {
    return `its line holds ${result.nAttempts} attempts but not the prompts they were sent (booth batch --with-prompts keeps them), and a run is continued from its prompts`;
  }
  if (listed === undefined) return flags.questions === undefined ? 'no question' : `${flags.questions} holds no question with this id`;
  const prompts: SentPrompt[] = [{ kind: 'first', text: firstPrompt(listed, null, instructions) }];
  return { kind: 'ask', line, where, question: listed.trimEnd(), given: asOutput({ ...row, prompts }) };
}

interface Walk {
  readonly lines: ResultLines;
  readonly callFn: AsyncCallFn;
  readonly options: ClarifyOptions<unknown> & { readonly maxClarifications: number };
  readonly run: ReturnType<typeof runRecord>;
  readonly tally: { answered: number; skipped: number; copied: number; readonly statuses: Map<string, number> };
  readonly typed: boolean;
  readonly output: string;
}

/** Each line in the order of the input: copied, or asked about and written once the person is done with it. */
async function walk(steps: readonly Step[], total: number, context: Walk): Promise<Ending> {
  const { lines, tally } = context;
  const print = printer();
  let asked = 0;
  for (const step of steps) {
    if (step.kind === 'copy') {
      lines.write({ ...step.line.row });
      tally.copied += 1;
      continue;
    }
    asked += 1;
    print('');
    print(`question ${asked} of ${total}, id ${shownId(step.line.row['id'])}: ${step.question}`);
    const { ending, clarified, ms } = await askAbout(step, context);
    const row = step.line.row;
    if (clarified !== null) {
      const latency = typeof row['latencyMs'] === 'number' && Number.isFinite(row['latencyMs']) ? row['latencyMs'] : 0;
      const question = { id: row['id'] as string | number, prompt: step.question, ...(row['expected'] === undefined ? {} : { expected: row['expected'] as JsonValue }) };
      lines.write(resultRow(question, Math.round(latency + ms), clarified, step.line.hasPrompts, context.run));
      tally.answered += 1;
      tally.statuses.set(clarified.status, (tally.statuses.get(clarified.status) ?? 0) + 1);
    } else if (ending === 'done') {
      // Skipped: the line stays as it was, AMBIGUOUS, and a rerun into this output does not ask again.
      lines.write({ ...row });
      tally.skipped += 1;
    }
    if (ending === 'done') continue;
    // Its checks were paid for: kept, and so not asked again; a later round is one more booth clarify over the output.
    if (clarified !== null) print(`this question's clarified check is written (AMBIGUOUS again); to clarify it further, run booth clarify on ${context.output} into a new file.`);
    return clarified === null || ending === 'outage' ? ending : `${ending}-written`;
  }
  return 'done';
}

/**
 * One question, round after round while the answer stays AMBIGUOUS and rounds remain: the
 * readings, the person's reply, and clarify(). `clarified` is the last result checked (null
 * when the person gave no choice), `ms` the time the checks took, the person's excluded.
 */
async function askAbout(step: Extract<Step, { kind: 'ask' }>, { callFn, options, typed }: Walk): Promise<{ ending: 'done' | Stop | 'outage'; clarified: CheckResult<unknown, unknown> | null; ms: number }> {
  const print = printer();
  let current: CheckResult<unknown, unknown> | null = null;
  let ms = 0;
  for (;;) {
    const readings = current?.interpretations ?? step.line.result.interpretations;
    const reply = await askPerson(readings, CLARIFY_HINT);
    if (reply.kind === 'empty') return { ending: 'done', clarified: current, ms };
    if (reply.kind !== 'choice') return { ending: reply.kind, clarified: current, ms };
    const started = performance.now();
    // clarify() checks the line field by field again: what it holds came from a file anyone may have written.
    const next: CheckResult<unknown, unknown> = await clarify(current ?? step.given, reply.choice, callFn, options as ClarifyOptions);
    ms += performance.now() - started;
    for (const line of verdictLines(next, typed)) print(line);
    // A round that heard nothing is not written, an earlier round of this question neither: the next run asks it again from the input's line.
    if (next.callFailed) {
      print(`every call of this round failed (${next.attempts.at(-1)?.error ?? 'no reply'}): the model could not be reached.`);
      return { ending: 'outage', clarified: null, ms };
    }
    current = next;
    if (next.status !== AMBIGUOUS) return { ending: 'done', clarified: current, ms };
    if (next.clarifications.length >= options.maxClarifications) {
      print(`still AMBIGUOUS after ${next.clarifications.length} clarification${next.clarifications.length === 1 ? '' : 's'}, the most --max-clarifications allows`);
      return { ending: 'done', clarified: current, ms };
    }
  }
}


/** The walk's end: what was written, and the exit code. */
function report(ending: Ending, tally: Walk['tally'], kept: number, output: string): void {
  const print = printer();
  const statuses = [...tally.statuses].map(([status, n]) => `${status} ${n}`).join(', ');
  print('');
  print(
    `clarified ${tally.answered} question${tally.answered === 1 ? '' : 's'}${statuses === '' ? '' : ` (${statuses})`}, skipped ${tally.skipped}, copied ${tally.copied} other line${tally.copied === 1 ? '' : 's'}` +
      `${kept > 0 ? `, kept the ${kept} already in ${output}` : ''}`,
  );
  switch (ending) {
    case 'done':
      return print(`every line is in ${output}`);
    case 'ended':
    case 'ended-written':
      console.error(`stopped: the lines so far are in ${output}; run the same command again to go on from ${ending === 'ended' ? 'this question' : 'the next question'}.`);
      process.exitCode = 1;
      return;
    case 'interrupted':
    case 'interrupted-written':
      console.error(`stopped by Ctrl-C: the lines so far are in ${output}; run the same command again to go on from ${ending === 'interrupted' ? 'this question' : 'the next question'}.`);
      process.exitCode = INTERRUPTED;
      return;
    case 'outage':
      console.error(`stopped: the endpoint answered no call of the last check, so this question is not written; run the same command again once it answers.`);
      process.exitCode = OUTAGE;
  }
}

/**
 * A line as clarify() takes it. It was checked as a stored output when read (readResultLines),
 * and clarify() checks it field by field again: the type only says what both make sure of.
 */
function asOutput(row: Readonly<Record<string, unknown>>): CheckpointOutput<unknown> {
  return row as unknown as CheckpointOutput<unknown>;
}

/** A line's id as a message shows it: a number as it is, a string quoted and escaped (a results file may hold anything). */
function shownId(id: unknown): string {
  return typeof id === 'number' ? String(id) : quotedText(String(id), 60);
}
