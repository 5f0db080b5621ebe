import { createInterface } from 'node:readline';
import { type ClarificationChoice, MAX_REPHRASED_CHARS } from '../../decide/clarification.js';
import { terminalText } from '../../util/values.js';

/**
 * The person at the terminal, asked what an ambiguous question means: the readings the model
 * offered, numbered from 1, and one line typed back — a reading's number or the question in
 * other words. Shared by `booth ask` and `booth clarify`.
 */

/** What the person typed: a choice for clarify(), an empty line, Ctrl-D, or Ctrl-C. */
export type Reply =
  | { readonly kind: 'choice'; readonly choice: ClarificationChoice }
  | { readonly kind: 'empty' }
  | { readonly kind: 'ended' }
  | { readonly kind: 'interrupted' };

/** Both ends are a terminal: a person can read the readings and type an answer. A pipe or a file on either end means a script. */
export function personAtTerminal(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}

/** The terminal's two ends; the tests of this module give others. */
export interface Terminal {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
}

const STDIO: Terminal = { input: process.stdin, output: process.stdout };

/** What the prompt line shows: short, since the hint above it says the rest. */
export const PROMPT = 'choice> ';

/**
 * The readings as the person sees them, numbered from 1. Each is the model's text, shown
 * through terminalText: a reading may hold escape sequences or line breaks meant to clear the
 * screen or to print a reading of its own under another number.
 */
export function readingLines(readings: readonly string[]): string[] {
  if (readings.length === 0) return ['The model found the question ambiguous but offered no readings.'];
  const width = String(readings.length).length;
  return [
    `The model read the question ${readings.length === 1 ? 'one way' : `${readings.length} ways`}:`,
    ...readings.map((reading, i) => `  ${String(i + 1).padStart(width)}. ${terminalText(reading)}`),
  ];
}

/**
 * Shows `readings` and asks which one the person means; `hint` says what an empty line and
 * Ctrl-D do here. A number that is no reading's, or a rephrasing too long to send, is refused
 * with the reason and asked again; a typed rephrasing is sent trimmed.
 */
export async function askPerson(readings: readonly string[], hint: string, terminal: Terminal = STDIO): Promise<Reply> {
  const say = (line: string) => terminal.output.write(`${line}\n`);
  for (const line of readingLines(readings)) say(line);
  say(`${readings.length === 0 ? 'Type' : "Type a reading's number, or"} the question in other words. ${hint}`);
  for (;;) {
    const typed = await readLine(terminal, PROMPT);
    if (typed.kind !== 'line') return typed;
    const text = typed.line.trim();
    if (text === '') return { kind: 'empty' };
    if (/^\d+$/.test(text)) {
      const n = Number(text);
      if (n >= 1 && n <= readings.length) return { kind: 'choice', choice: n - 1 };
      say(
        readings.length === 0
          ? `There is no reading ${text}: the model offered none. Type the question in other words.`
          : `There is no reading ${text}: type a number from 1 to ${readings.length}, or the question in other words.`,
      );
      continue;
    }
    if (text.length > MAX_REPHRASED_CHARS) {
      say(`That is ${text.length} characters; a rephrased question may hold ${MAX_REPHRASED_CHARS}. Type a shorter one.`);
      continue;
    }
    return { kind: 'choice', choice: { rephrased: text } };
  }
}

/**
 * One line typed at `prompt`, with the terminal's line editing; 'ended' on Ctrl-D at an empty
 * line, 'interrupted' on Ctrl-C. The line editor is opened for this line only: between
 * questions the terminal is left as it was (a model call may take a while, and Ctrl-C then
 * stops the command as usual).
 */
function readLine({ input, output }: Terminal, prompt: string): Promise<{ readonly kind: 'line'; readonly line: string } | { readonly kind: 'ended' | 'interrupted' }> {
  return new Promise((resolve) => {
    const editor = createInterface({ input, output, terminal: true, historySize: 0 });
    let answered = false;
    const answer = (value: { readonly kind: 'line'; readonly line: string } | { readonly kind: 'ended' | 'interrupted' }) => {
      if (answered) return;
      answered = true;
      resolve(value);
      editor.close();
    };
    editor.on('line', (line) => answer({ kind: 'line', line }));
    // Ctrl-D leaves the cursor after the prompt: the next line starts on a line of its own.
    editor.on('close', () => {
      if (!answered) output.write('\n');
      answer({ kind: 'ended' });
    });
    editor.on('SIGINT', () => {
      output.write('\n');
      answer({ kind: 'interrupted' });
    });
    editor.setPrompt(prompt);
    editor.prompt();
  });
}
