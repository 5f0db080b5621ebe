import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT } from '../../src/cli/clarify/person.js';
import { CLARIFICATION_MARKER } from '../../src/decide/constants.js';
import { envelope } from '../fixtures/helpers.js';
import { booth, dir, questionNumber, resultsIn, useProvider } from '../fixtures/booth-process.js';
import { Terminal } from '../fixtures/terminal.js';

/**
 * `booth ask` and `booth clarify` with a person at a real terminal: each test starts the
 * command in a tmux pane of its own tmux server, types into it, and reads the pane, against
 * the loopback provider.
 */

const server = useProvider();
const terminals: Terminal[] = [];
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.close();
});

function open(args: readonly string[]): Terminal {
  const terminal = Terminal.start(args);
  terminals.push(terminal);
  return terminal;
}

const READINGS = ['Mercury the planet', 'mercury the element'];
const ambiguous = (readings: readonly string[] = READINGS) => ({
  text: envelope('4,879 km', 0.9, { ambiguous: true, interpretations: readings, chosen_interpretation: readings[0] ?? null }),
});
const sure = (answer = '4,879 km') => ({ text: envelope(answer, 0.95) });

/** The text of the last (user) message of the nth request the provider received. */
const asked = (n: number): string => {
  const messages = server.provider.received[n]?.body['messages'] as Array<{ content: string }> | undefined;
  return messages?.at(-1)?.content ?? '';
};

describe('booth ask at a terminal, when the answer is AMBIGUOUS', () => {
  it('lists the readings from 1; a number picks one, and the clarified question is checked again', async () => {
    server.provider.script.push(ambiguous(), sure());
    const terminal = open(['ask', 'How big is Mercury?', ...server.endpoint]);
    const screen = await terminal.waitFor(PROMPT);
    expect(screen).toContain('status      AMBIGUOUS');
    expect(screen).toContain('The model read the question 2 ways:\n  1. Mercury the planet\n  2. mercury the element\n');
    expect(screen).toContain("Type a reading's number, or the question in other words. An empty line or Ctrl-D leaves it AMBIGUOUS.");
    terminal.type('1');
    expect(await terminal.exitCode()).toBe(0);
    const after = terminal.screen();
    expect(after).toContain('status      VERIFIED');
    expect(after).toContain('answer      4,879 km');
    expect(after).toMatch(/path {8}calling → parsing → ambiguityGate → awaitingClarification → calling → parsing → ambiguityGate → confidenceGate → verified/);
    expect(server.provider.received).toHaveLength(2);
    expect(asked(1)).toContain(`How big is Mercury?\n\n${CLARIFICATION_MARKER}: they mean "Mercury the planet", one of the readings you offered.`);
  }, 60_000);

  it('a typed line is the question in other words; a number that is no reading is asked again', async () => {
    server.provider.script.push(ambiguous(), sure('2,440 km'));
    const terminal = open(['ask', 'How big is Mercury?', ...server.endpoint]);
    await terminal.waitFor(PROMPT);
    terminal.type('3');
    await terminal.waitFor('There is no reading 3: type a number from 1 to 2, or the question in other words.');
    terminal.type('  What is the radius of the planet Mercury?  ');
    expect(await terminal.exitCode()).toBe(0);
    expect(terminal.screen()).toContain('answer      2,440 km');
    expect(server.provider.received).toHaveLength(2);
    expect(asked(1)).toContain(`${CLARIFICATION_MARKER}, rephrasing it as "What is the radius of the planet Mercury?". Answer the question as rephrased.`);
  }, 60_000);

  it('an empty line leaves the answer AMBIGUOUS, exit 1; so does Ctrl-D; Ctrl-C exits 130', async () => {
    server.provider.script.push(ambiguous());
    const empty = open(['ask', 'How big is Mercury?', ...server.endpoint]);
    await empty.waitFor(PROMPT);
    empty.type('');
    expect(await empty.exitCode()).toBe(1);
    expect(empty.screen().match(/status {6}\w+/g)).toEqual(['status      AMBIGUOUS']);
    expect(server.provider.received).toHaveLength(1);

    server.provider.script.push(ambiguous());
    const ended = open(['ask', 'How big is Mercury?', ...server.endpoint]);
    await ended.waitFor(PROMPT);
    ended.press('C-d');
    expect(await ended.exitCode()).toBe(1);
    expect(ended.screen().match(/status {6}\w+/g)).toEqual(['status      AMBIGUOUS']);
    expect(server.provider.received).toHaveLength(2);

    server.provider.script.push(ambiguous());
    const interrupted = open(['ask', 'How big is Mercury?', ...server.endpoint]);
    await interrupted.waitFor(PROMPT);
    interrupted.press('C-c');
    expect(await interrupted.exitCode()).toBe(130);
    expect(server.provider.received).toHaveLength(3);
  }, 60_000);

  it('asks again while the clarified question is still ambiguous, up to --max-clarifications', async () => {
    server.provider.script.push(ambiguous(), ambiguous(['in kilometres', 'in miles']), sure('1,516 mi'));
    const twice = open(['ask', 'How big is Mercury?', ...server.endpoint]);
    await twice.waitFor(PROMPT);
    twice.type('1');
    await twice.waitFor('  2. in miles');
    twice.type('2');
    expect(await twice.exitCode()).toBe(0);
    expect(twice.screen()).toContain('answer      1,516 mi');
    expect(asked(2)).toContain(`${CLARIFICATION_MARKER}: they mean "in miles"`);
    // The round before is kept in the question: both clarifications are spelled out.
    expect(asked(2)).toContain(`${CLARIFICATION_MARKER}: they mean "Mercury the planet"`);

    server.provider.script.push(ambiguous(), ambiguous(['in kilometres', 'in miles']));
    const once = open(['ask', 'How big is Mercury?', ...server.endpoint, '--max-clarifications', '1']);
    await once.waitFor(PROMPT);
    once.type('1');
    expect(await once.exitCode()).toBe(1);
    expect(once.screen()).toContain('still AMBIGUOUS after 1 clarification, the most --max-clarifications allows');
    expect(once.screen().split(PROMPT)).toHaveLength(2);
  }, 60_000);

  it("shows a reading's escape sequences and line breaks inert: no cleared screen, no title, no forged reading", async () => {
    const hostile = ['\u001b[2J\u001b[H\u001b]0;pwned\u0007the planet', 'the element\n  3. rm -rf ~', '\u009b31mred\u202eevil'];
    server.provider.script.push(ambiguous(hostile), sure());
    const terminal = open(['ask', 'How big is Mercury?', ...server.endpoint]);
    const screen = await terminal.waitFor(PROMPT);
    expect(screen).toContain('  1. \\u001b[2J\\u001b[H\\u001b]0;pwned\\u0007the planet\n');
    expect(screen).toContain('  2. the element\\n  3. rm -rf ~\n');
    expect(screen).toContain('  3. \\u009b31mred\\u202eevil\n');
    expect(screen).not.toMatch(/^ {2}3\. rm/m);
    expect(terminal.title()).not.toContain('pwned');
    // The result's readings line is shown escaped too.
    expect(screen).toContain('readings    \\u001b[2J');
    terminal.type('2');
    expect(await terminal.exitCode()).toBe(0);
    // The reading chosen reaches the model as it was offered, quoted as JSON.
    expect(asked(1)).toContain(`they mean ${JSON.stringify(hostile[1])}, one of the readings you offered`);
  }, 60_000);

  it('--no-input never asks, and neither does a command whose input is not a terminal: AMBIGUOUS, exit 1, as before', async () => {
    server.provider.script.push(ambiguous());
    const terminal = open(['ask', 'How big is Mercury?', ...server.endpoint, '--no-input']);
    expect(await terminal.exitCode()).toBe(1);
    expect(terminal.screen()).toContain('readings    Mercury the planet | mercury the element');
    expect(terminal.screen()).not.toContain(PROMPT);

    server.provider.script.push(ambiguous());
    const piped = await booth(['ask', 'How big is Mercury?', ...server.endpoint]);
    expect(piped.code).toBe(1);
    expect(piped.stdout).toContain('status      AMBIGUOUS');
    expect(piped.stdout).toContain('readings    Mercury the planet | mercury the element');
    expect(piped.stdout).not.toContain(PROMPT);
    expect(server.provider.received).toHaveLength(2);
  }, 60_000);
});

describe('booth clarify at a terminal', () => {
  /** A provider for a batch: questions 1 and 2 are ambiguous, the rest answered; a clarified question is answered for sure. */
  const batchModel = (body: Record<string, unknown>) => {
    const messages = body['messages'] as Array<{ content: string }>;
    if (messages.at(-1)?.content.includes(CLARIFICATION_MARKER)) return sure('clarified answer');
    const n = questionNumber(body);
    return n === 1 || n === 2 ? ambiguous() : sure(`answer ${n}`);
  };

  /** A batch of `prompts` checked by a real `booth batch`: its questions file and result lines. */
  async function batchOf(prompts: readonly string[], ...flags: string[]) {
    const work = dir();
    const questions = join(work, 'questions.jsonl');
    const results = join(work, 'results.jsonl');
    writeFileSync(questions, prompts.map((prompt, id) => JSON.stringify({ id, prompt })).join('\n'));
    server.provider.fallback = batchModel;
    const run = await booth(['batch', questions, '-o', results, ...server.endpoint, '--concurrency', '1', ...flags]);
    expect(run.code, run.stderr).toBe(0);
    return { questions, results, clarified: join(work, 'clarified.jsonl'), lines: resultsIn(results) };
  }

  it('asks about the one ambiguous line of three, checks it again and writes the whole batch, the others unchanged', async () => {
    const hostile = 'question 1: how big is \u001b]0;pwned\u0007Mercury?';
    const batch = await batchOf(['question 0', hostile, 'question 3']);
    expect(batch.lines.map((line) => line.status)).toEqual(['VERIFIED', 'AMBIGUOUS', 'VERIFIED']);
    const before = server.provider.received.length;

    // The lines of a batch run without --with-prompts do not hold their question.
    const questionless = open(['clarify', batch.results, '-o', batch.clarified, ...server.endpoint]);
    expect(await questionless.exitCode()).toBe(2);
    expect(questionless.screen()).toContain(`error: 1 ambiguous line of ${batch.results} does not hold its question (booth batch keeps the prompts only with --with-prompts): give --questions FILE`);

    const terminal = open(['clarify', batch.results, '-o', batch.clarified, '--questions', batch.questions, ...server.endpoint]);
    const screen = await terminal.waitFor(PROMPT);
    expect(screen).toContain('question 1 of 1, id 1: question 1: how big is \\u001b]0;pwned\\u0007Mercury?\nThe model read the question 2 ways:\n  1. Mercury the planet\n  2. mercury the element\n');
    expect(screen).toContain('An empty line skips it (it stays AMBIGUOUS); Ctrl-D stops here, and the same command goes on from it.');
    expect(terminal.title()).not.toContain('pwned');
    terminal.type('2');
    expect(await terminal.exitCode()).toBe(0);
    const after = terminal.screen();
    expect(after).toContain('status      VERIFIED\nanswer      clarified answer\nconfidence  0.95\n');
    expect(after).toContain('clarified 1 question (VERIFIED 1), skipped 0, copied 2 other lines');

    expect(server.provider.received).toHaveLength(before + 1);
    expect(asked(before)).toContain(`${CLARIFICATION_MARKER}: they mean "mercury the element"`);
    const written = resultsIn(batch.clarified);
    expect(written.map((line) => line.id)).toEqual([0, 1, 2]);
    expect(written[0]).toEqual(batch.lines[0]);
    expect(written[2]).toEqual(batch.lines[2]);
    const line = written[1] as unknown as Record<string, unknown> & { clarifications: unknown[]; attempts: unknown[]; latencyMs: number };
    expect(line).toMatchObject({ id: 1, status: 'VERIFIED', answer: 'clarified answer', run: batch.lines[1]?.['run'] });
    expect(line.clarifications).toEqual([{ question: hostile, readings: READINGS, chosen: 'mercury the element', rephrased: null, attempt: 1 }]);
    expect(line.attempts).toHaveLength(2);
    // As booth batch writes a line: without the prompts, since the batch's line had none.
    expect(line).not.toHaveProperty('prompts');
    expect(line.latencyMs).toBeGreaterThanOrEqual(batch.lines[1]?.['latencyMs'] as number);
  }, 60_000);

  it('goes on where it stopped: the lines in the output are kept and not asked again; an empty line skips, Ctrl-D stops', async () => {
    const batch = await batchOf(['question 0', 'question 1', 'question 2', 'question 3'], '--with-prompts');
    const args = ['clarify', batch.results, '-o', batch.clarified, ...server.endpoint];
    const before = server.provider.received.length;

    const first = open(args);
    await first.waitFor(`question 1 of 2, id 1: question 1\n`);
    first.type("What is the planet's radius?");
    await first.waitFor(`question 2 of 2, id 2: question 2\n`);
    first.press('C-d');
    expect(await first.exitCode()).toBe(1);
    expect(first.screen()).toContain(`stopped: the lines so far are in ${batch.clarified}; run the same command again to go on from this question.`);
    const stopped = resultsIn(batch.clarified);
    expect(stopped.map((line) => [line.id, line.status])).toEqual([[0, 'VERIFIED'], [1, 'VERIFIED']]);
    // The batch's line kept its prompts: so does the clarified one, both rounds'.
    expect((stopped[1]?.['prompts'] as Array<{ kind: string }>).map((prompt) => prompt.kind)).toEqual(['first', 'clarification']);
    expect(asked(before)).toContain(`${CLARIFICATION_MARKER}, rephrasing it as "What is the planet's radius?"`);
    expect(server.provider.received).toHaveLength(before + 1);

    const second = open(args);
    const screen = await second.waitFor(PROMPT);
    expect(screen).toContain('question 1 of 1, id 2: question 2\n');
    second.type('');
    expect(await second.exitCode()).toBe(0);
    expect(second.screen()).toContain(`clarified 0 questions, skipped 1, copied 1 other line, kept the 2 already in ${batch.clarified}`);
    const written = resultsIn(batch.clarified);
    expect(written.map((line) => line.id)).toEqual([0, 1, 2, 3]);
    expect(written[1]).toEqual(stopped[1]);
    // Skipped: the line stays as the batch wrote it, AMBIGUOUS.
    expect(written[2]).toEqual(batch.lines[2]);
    expect(server.provider.received).toHaveLength(before + 1);

    const third = open(args);
    expect(await third.exitCode()).toBe(0);
    expect(third.screen()).not.toContain(PROMPT);
    expect(third.screen()).toContain(`every line is in ${batch.clarified}`);
    expect(resultsIn(batch.clarified)).toEqual(written);
    expect(server.provider.received).toHaveLength(before + 1);
  }, 60_000);

  it('stopped at a later round of a question, keeps the check it paid for and says the next run goes on from the next question', async () => {
    const batch = await batchOf(['question 0', 'question 1', 'question 3'], '--with-prompts');
    const args = ['clarify', batch.results, '-o', batch.clarified, ...server.endpoint];
    // The clarified question comes back ambiguous again: a second round is asked for.
    server.provider.fallback = (body) => ((body['messages'] as Array<{ content: string }>).at(-1)?.content.includes(CLARIFICATION_MARKER) ? ambiguous(['its radius', 'its mass']) : batchModel(body));
    const first = open(args);
    await first.waitFor(PROMPT);
    first.type('1');
    await first.waitFor('  1. its radius\n');
    first.press('C-d');
    expect(await first.exitCode()).toBe(1);
    expect(first.screen()).toContain(`this question's clarified check is written (AMBIGUOUS again); to clarify it further, run booth clarify on ${batch.clarified} into a new file.`);
    expect(first.screen()).toContain(`stopped: the lines so far are in ${batch.clarified}; run the same command again to go on from the next question.`);
    const written = resultsIn(batch.clarified);
    expect(written.map((line) => [line.id, line.status, (line['clarifications'] as unknown[]).length])).toEqual([[0, 'VERIFIED', 0], [1, 'AMBIGUOUS', 1]]);

    server.provider.fallback = batchModel;
    const second = open(args);
    expect(await second.exitCode()).toBe(0);
    expect(second.screen()).not.toContain(PROMPT);
    expect(resultsIn(batch.clarified).map((line) => line.id)).toEqual([0, 1, 2]);
  }, 60_000);

  it('writes no line for a question whose clarified round heard nothing from the model: exit 3, and the next run asks again', async () => {
    const batch = await batchOf(['question 0', 'question 1', 'question 3'], '--with-prompts');
    const args = ['clarify', batch.results, '-o', batch.clarified, ...server.endpoint];
    server.provider.fallback = () => ({ status: 503, body: { error: { message: 'down for maintenance' } } });
    const down = open(args);
    await down.waitFor(PROMPT);
    down.type('1');
    expect(await down.exitCode()).toBe(3);
    expect(down.screen()).toContain('the model could not be reached');
    expect(down.screen()).toContain('stopped: the endpoint answered no call of the last check, so this question is not written; run the same command again once it answers.');
    expect(resultsIn(batch.clarified).map((line) => line.id)).toEqual([0]);

    server.provider.fallback = batchModel;
    const up = open(args);
    expect(await up.waitFor(PROMPT)).toContain('question 1 of 1, id 1: question 1\n');
    up.type('1');
    expect(await up.exitCode()).toBe(0);
    expect(resultsIn(batch.clarified).map((line) => [line.id, line.status])).toEqual([[0, 'VERIFIED'], [1, 'VERIFIED'], [2, 'VERIFIED']]);
  }, 60_000);

  it('needs a terminal, and the flags the batch was run with, before asking anything', async () => {
    const batch = await batchOf(['question 0', 'question 1'], '--with-prompts');
    const before = server.provider.received.length;
    const piped = await booth(['clarify', batch.results, '-o', batch.clarified, ...server.endpoint]);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('error: booth clarify asks you which reading each ambiguous question means, so its input and output must be a terminal, not a pipe or a file.');

    const changed = open(['clarify', batch.results, '-o', batch.clarified, ...server.endpoint, '--threshold', '0.9']);
    expect(await changed.exitCode()).toBe(2);
    expect(changed.screen()).toContain(
      `error: ${batch.results} holds results of 1 question made with other settings than this run's: --threshold 0.7 → 0.9 (1 line). Give booth clarify the flags the batch was run with, so that both rounds of a question are judged alike.`,
    );
    expect(changed.screen()).not.toContain(PROMPT);
    expect(server.provider.received).toHaveLength(before);
    expect(() => readFileSync(batch.clarified)).toThrow(/ENOENT/);
  }, 60_000);
});
