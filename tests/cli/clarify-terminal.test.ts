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
    expect(after).toMatch(/path {8}calling → parsing → ambiguityGate → ambiguous → calling → parsing → ambiguityGate → confidenceGate → verified/);
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

  it('an empty line leaves the answer AMBIGUOUS, exit 1; so does Ctrl-D', async () => {
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
