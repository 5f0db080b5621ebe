import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROMPT } from '../../src/cli/clarify/person.js';
import { envelope } from '../fixtures/helpers.js';
import { booth, dir, useProvider } from '../fixtures/booth-process.js';
import { Terminal } from '../fixtures/terminal.js';

/**
 * `booth ask --stream` in a real terminal (a tmux pane, as tests/fixtures/terminal.ts makes
 * one) against the loopback provider streaming its replies as server-sent events, a few
 * characters every few tens of milliseconds: the answer shows as it arrives, the verdict
 * only once decided. Then the same through pipes, where the output is plain text.
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

const ANSWER = 'Paris is the capital of France; it stands on the Seine.';
/** A reply streamed 3 characters every 40 ms (or `delayMs`): 150 characters take about 2 s. */
const slowly = (text: string, delayMs = 40) => ({ text, stream: { chunkSizes: 3, delayMs } });
/** The pane's lines from the first that holds `text`. */
const from = (screen: string, text: string) => screen.slice(screen.indexOf(text));

describe('booth ask --stream at a terminal', () => {
  it('prints the answer as it arrives; the status line only once the reply is decided', async () => {
    server.provider.script.push(slowly(envelope(ANSWER, 0.95), 60));
    const terminal = open(['ask', 'What is the capital of France?', ...server.endpoint, '--stream']);
    // The answer has begun and is not finished (about 1 s of it is still to come): no verdict is on the screen yet.
    const early = await terminal.waitFor('Paris is');
    expect(early).not.toContain('on the Seine.');
    expect(early).not.toMatch(/status|confidence/);
    expect(await terminal.exitCode()).toBe(0);
    const screen = terminal.screen();
    // The streamed answer, on a line of its own, then the result's lines as `ask` prints them.
    expect(screen).toMatch(new RegExp(`^${ANSWER.replace(/[.;]/g, '\\$&')}\\nstatus {6}VERIFIED\\nanswer {6}${ANSWER.replace(/[.;]/g, '\\$&')}\\nconfidence  0\\.95\\n`, 'm'));
    expect(server.provider.received).toHaveLength(1);
    expect(server.provider.received[0]?.body['stream']).toBe(true);
  }, 60_000);

  it('marks the text of a rejected attempt replaced, with why, and streams the retry after it', async () => {
    server.provider.script.push(slowly(envelope('Lyon, I think', 0.4), 20), slowly(envelope('Paris', 0.95), 20));
    const terminal = open(['ask', 'What is the capital of France?', ...server.endpoint, '--stream']);
    expect(await terminal.exitCode()).toBe(0);
    const screen = terminal.screen();
    expect(from(screen, 'Lyon')).toMatch(/^Lyon, I think\n— replaced: attempt 1: confidence 0\.4, below the threshold 0\.7 —\nParis\nstatus {6}REPAIRED\nanswer {6}Paris\n/);
    expect(screen.match(/^status/gm)).toHaveLength(1);
    // The marker is dimmed (SGR 2), the text around it is not.
    const styled = terminal.screen(true);
    expect(styled).toMatch(/\u001b\[2m— replaced: attempt 1/);
    expect(styled).toMatch(/^Lyon, I think$/m);
    expect(server.provider.received).toHaveLength(2);
  }, 60_000);

  it('stops an ambiguous reply at its readings: the rest is never sent, AMBIGUOUS exits 1', async () => {
    // Once the readings are in, the answer would take 10 s more to arrive.
    const readings = ['Mercury the planet', 'mercury the element'];
    const long = `${'The planet Mercury has a radius of 2,440 km. '.repeat(20)}`;
    server.provider.script.push({ text: envelope(long, 0.9, { ambiguous: true, interpretations: readings, chosen_interpretation: readings[0] }), stream: { chunkSizes: 4, delayMs: 40 } });
    const terminal = open(['ask', 'How big is Mercury?', ...server.endpoint, '--stream', '--no-input']);
    expect(await terminal.exitCode()).toBe(1);
    const screen = terminal.screen();
    expect(screen).toContain('status      AMBIGUOUS');
    expect(screen).toContain('readings    Mercury the planet | mercury the element');
    expect(screen).not.toContain('radius');
    // The provider saw the connection closed before its reply was over, the answer's chunks unsent.
    await expect.poll(() => server.provider.streams[0]?.clientClosed).toBe(true);
    const [stream] = server.provider.streams;
    expect(stream?.sent).toBeLessThan((stream?.of ?? 0) / 2);
  }, 60_000);

  it('on a terminal, an early AMBIGUOUS asks which reading is meant, and the clarified question streams too', async () => {
    const readings = ['Mercury the planet', 'mercury the element'];
    server.provider.script.push(
      { text: envelope('x'.repeat(400), 0.9, { ambiguous: true, interpretations: readings, chosen_interpretation: readings[0] }), stream: { chunkSizes: 4, delayMs: 40 } },
      slowly(envelope('4,879 km across', 0.95), 20),
    );
    const terminal = open(['ask', 'How big is Mercury?', ...server.endpoint, '--stream']);
    await terminal.waitFor(PROMPT);
    terminal.type('1');
    expect(await terminal.exitCode()).toBe(0);
    const screen = terminal.screen();
    expect(from(screen, '4,879 km across')).toMatch(/^4,879 km across\nstatus {6}VERIFIED\nanswer {6}4,879 km across\n/);
    expect(screen).not.toContain('xxxx');
  }, 60_000);

  it("shows a streamed answer's escape sequences and line breaks as text: no cleared screen, no title, no forged line", async () => {
    // JSON escapes in the reply (split across events by the 3-character pieces), decoded into controls by the reader.
    const hostile = 'safe\u001b[2J\u001b[H\u001b]0;pwned\u0007 then \u009b31mred\u202eevil\nstatus      FORGED';
    server.provider.script.push(slowly(envelope(hostile, 0.95), 20));
    const terminal = open(['ask', 'Say something', ...server.endpoint, '--stream']);
    expect(await terminal.exitCode()).toBe(0);
    const screen = terminal.screen();
    const shown = 'safe\\u001b[2J\\u001b[H\\u001b]0;pwned\\u0007 then \\u009b31mred\\u202eevil\\nstatus      FORGED';
    // The streamed line, then the answer line, both with the controls escaped.
    expect(screen).toContain(`${shown}\nstatus      VERIFIED\nanswer      ${shown}\n`);
    expect(screen).not.toMatch(/^status {6}FORGED/m);
    expect(terminal.title()).not.toContain('pwned');
    // No colour took effect: the pane holds no styled text at all.
    expect(terminal.screen(true)).not.toContain('\u001b[');
  }, 60_000);
});

describe('booth ask --stream through pipes', () => {
  it('writes plain text: the streamed answer, the replaced line, no escape sequence of its own', async () => {
    server.provider.script.push(slowly(envelope('Lyon', 0.4), 10), slowly(envelope('Paris', 0.95), 10));
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint, '--stream']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Lyon\n— replaced: attempt 1: confidence 0\.4, below the threshold 0\.7 —\nParis\nstatus {6}REPAIRED\n/);
    expect(run.stdout).not.toContain('\u001b');
  }, 30_000);

  it('with --json, one JSON line per partial reply, then the result', async () => {
    server.provider.script.push(slowly(envelope('Paris', 0.95), 10));
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint, '--stream', '--json']);
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { partial?: Record<string, unknown>; result?: Record<string, unknown> });
    const partials = lines.slice(0, -1).map((line) => line.partial);
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.every((partial) => partial !== undefined && partial['attempt'] === 0)).toBe(true);
    expect(partials.map((partial) => partial?.['answerSoFar']).filter((answer) => answer !== null)).toContain('Paris');
    expect(lines.at(-1)?.result).toMatchObject({ status: 'VERIFIED', answer: 'Paris' });
  }, 30_000);

  it('a stream cut mid-reply and called again (--call-retries): the text shown is marked replaced, the call named', async () => {
    server.provider.script.push({ text: envelope(ANSWER, 0.95), stream: { chunkSizes: 4, cutAfter: 25 } }, slowly(envelope(ANSWER, 0.95), 5));
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint, '--stream', '--call-retries', '1']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Paris is the [^\n]*\n— replaced: the call of attempt 1 failed; calling again —\nParis is the capital of France; it stands on the Seine\.\nstatus {6}VERIFIED\n/);
    expect(server.provider.streams.map((stream) => stream.cut)).toEqual([true, false]);
  }, 30_000);

  it('the next model of a cascade: the replaced line says why and whom it asks', async () => {
    server.provider.script.push(slowly(envelope('Lyon', 0.4), 5), slowly(envelope('Paris', 0.95), 5));
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint, '--stream', '--max-retries', '0', '--escalate-model', 'big-model']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Lyon\n— replaced: attempt 1: confidence 0\.4, below the threshold 0\.7; asking big-model —\nParis\nstatus {6}VERIFIED\n/);
    expect(server.provider.received.map((request) => request.body['model'])).toEqual(['test-model', 'big-model']);
  }, 30_000);

  it("with --schema, the answer's JSON text so far; a member of the wrong type fails the attempt before the reply ends", async () => {
    const schema = join(dir(), 'city.schema.json');
    writeFileSync(schema, JSON.stringify({ type: 'object', properties: { city: { type: 'string' }, population: { type: 'number' } }, required: ['city', 'population'] }));
    const wrong = envelope({ city: 'Tokyo', population: 'about thirty-seven million people, give or take' }, 0.9);
    server.provider.script.push({ text: `${wrong.slice(0, -1)}, "note": "${'x'.repeat(600)}"}`, stream: { chunkSizes: 4, delayMs: 5 } }, slowly(envelope({ city: 'Tokyo', population: 37400000 }, 0.95), 5));
    const run = await booth(['ask', 'Largest city in Japan?', ...server.endpoint, '--stream', '--schema', schema]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^\{"city":"Tokyo","population":"about thirty-seven million people, give or take"[^\n]*\n— replaced: attempt 1: the schema refused the answer: answer\.population: [^\n]+ —\n\{"city":"Tokyo","population":37400000\}\nstatus {6}REPAIRED\n/,
    );
    // The first reply was ended at its failed member: most of it was never sent.
    const [first] = server.provider.streams;
    expect(first?.clientClosed).toBe(true);
    expect(first?.sent).toBeLessThan((first?.of ?? 0) / 2);
  }, 30_000);

  it('with --samples, the first sample of each attempt is shown, the others not', async () => {
    // Sample k is sent seed k: each answers with its own number.
    server.provider.fallback = (body) => ({ text: envelope(`Paris (sample ${String(body['seed'])})`, 0.9), stream: { chunkSizes: 3, delayMs: 5 } });
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint, '--stream', '--samples', '3', '--max-retries', '0']);
    const streamed = run.stdout.slice(0, run.stdout.indexOf('status'));
    expect(streamed).toBe('Paris (sample 0)\n');
    expect(server.provider.received).toHaveLength(3);
  }, 30_000);

  it('a server that answers with one whole completion: nothing streamed, the result printed as without --stream', async () => {
    server.provider.script.push({ text: envelope('Paris', 0.95), stream: false });
    const run = await booth(['ask', 'What is the capital of France?', ...server.endpoint, '--stream']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^status {6}VERIFIED\nanswer {6}Paris\n/);
    expect(server.provider.received[0]?.body['stream']).toBe(true);
  }, 30_000);
});
