/**
 * The main job on the built-in offline default: a scripted model (no network) answers a
 * handful of questions through check(), acheck() and checkWithEvidence(), so that every
 * status appears. `npm run demo` and `booth demo` run it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Attempt } from '../decide/attempt.js';
import { acheck } from '../api/acheck.js';
import { check } from '../api/check.js';
import { checkWithEvidence } from '../api/evidence.js';
import type { BoothResult } from '../results/result.js';
import { numberText } from '../util/numbers.js';
import { envelope, scriptedModel, type ScriptStep } from '../testing/index.js';
import { toHtml } from '../visualize/index.js';
import { writePage } from './batch/input.js';

interface Case {
  readonly title: string;
  readonly question: string;
  run(question: string): BoothResult | Promise<BoothResult>;
}

const onlyYear = (answer: string) => /^\d{4}$/.test(answer) || ([false, 'answer with the year only, as four digits'] as const);

const CASES: readonly Case[] = [
  {
    title: 'accepted on the first reply',
    question: 'What is the boiling point of water at sea level, in degrees Celsius?',
    run: (q) => check(scriptedModel([envelope('100', 0.97)]).sync, q),
  },
  {
    title: 'a low-confidence reply, reconsidered',
    question: 'In which year did the Hubble Space Telescope launch?',
    run: (q) => acheck(scriptedModel([envelope('1991', 0.45), envelope('1990', 0.9)], { delayMs: 5 }).async, q),
  },
  {
    title: 'a question with several readings, returned at once',
    question: 'How big is Mercury?',
    run: (q) =>
      check(
        scriptedModel([
          envelope('4,879 km in diameter', 0.8, {
            ambiguous: true,
            interpretations: ['Mercury the planet', 'mercury the element', 'Freddie Mercury'],
            chosen_interpretation: 'Mercury the planet',
          }),
        ]).sync,
        q,
      ),
  },
  {
    title: 'replies that never parse',
    question: 'List the prime numbers below 20.',
    run: (q) => {
      const steps: ScriptStep[] = ['2, 3, 5, 7, 11, 13, 17, 19', "{'answer': '2, 3, 5, 7, 11, 13, 17, 19'}", '```json\n{"answer": "2, 3, 5, 7, 11, 13, 17, 19", "confidence": "very high"}\n```'];
      return acheck(scriptedModel(steps).async, q, { maxRetries: 2 });
    },
  },
  {
    title: 'a validator failure, then a repair',
    question: 'In which year did the Berlin Wall fall?',
    run: (q) => check(scriptedModel([envelope('November 1989', 0.95), envelope('1989', 0.95)]).sync, q, { validator: onlyYear }),
  },
  {
    title: 'an answer checked against evidence',
    question: 'What is the capital of Australia?',
    run: () =>
      checkWithEvidence(
        'Sydney',
        ['Canberra is the capital city of Australia.', 'Sydney is the largest city in Australia.'],
        (answer, evidence) => evidence.some((doc) => doc.includes(`${answer} is the capital`)),
      ),
  },
];

/** One attempt's line, counted from 1 as everything the CLI prints (docs/cli.md). */
function describeAttempt(attempt: Attempt, index: number, attempts: readonly Attempt[]): string {
  const head = `    attempt ${index + 1} of ${attempts.length}: `;
  if (attempt.callFailed) return `${head}call failed: ${attempt.error}`;
  if (!attempt.parseOk) return `${head}unparseable: ${attempt.error}`;
  const said = `${JSON.stringify(attempt.answer)} at confidence ${numberText(attempt.confidence!)}`;
  if (attempt.ambiguous) return `${head}${said}, ambiguous`;
  if (!attempt.passedValidation) return `${head}${said}, failed validation: ${attempt.validationError}`;
  return `${head}${said}`;
}

function describe(result: BoothResult): string[] {
  const lines = [
    `  status      ${result.status}${result.reason ? ` (${result.reason}: ${result.detail})` : ''}`,
    `  answer      ${result.answer === null ? '—' : JSON.stringify(result.answer)}`,
    `  confidence  ${result.confidence === null ? '—' : numberText(result.confidence)}`,
  ];
  if (result.interpretations.length > 0) lines.push(`  readings    ${result.interpretations.join(' | ')}`);
  lines.push(`  attempts    ${result.nAttempts}`);
  lines.push(...result.attempts.map(describeAttempt));
  lines.push(`  trace       ${result.trace.map((step) => step.state).join(' → ')}`);
  return lines;
}

/** Runs the demo, printing each result; with `traceDir`, also writes each run's HTML trace there. */
export async function runDemo(print: (line: string) => void, traceDir?: string): Promise<readonly BoothResult[]> {
  print('Booth demo: a scripted model answers six questions; no network is used.');
  print('VERIFIED and REPAIRED mean an acceptance condition was met, never that the answer is true.');
  if (traceDir) mkdirSync(traceDir, { recursive: true });
  const results: BoothResult[] = [];
  for (const [index, { title, question, run }] of CASES.entries()) {
    const result = await run(question);
    results.push(result);
    print('');
    print(`${index + 1}. ${title}`);
    print(`  question    ${question}`);
    for (const line of describe(result)) print(line);
    if (traceDir) {
      const file = join(traceDir, `${index + 1}-${result.status.toLowerCase()}.html`);
      writePage('page', file, await toHtml(result));
      print(`  html        ${file}`);
    }
  }
  if (traceDir) print(`\nOpen the HTML traces in ${traceDir} in any browser; they need no network.`);
  return results;
}
