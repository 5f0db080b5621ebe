import { answerText } from '../values.js';
import type { Attempt } from '../attempt.js';
import type { SentPrompt } from '../prompts.js';
import type { BoothResult } from '../result.js';
import { mermaidText } from './render.js';

const PROMPT_KINDS: Readonly<Record<SentPrompt['kind'], string>> = {
  first: 'first prompt',
  repeat: 'the first prompt again',
  parse: 'parse retry',
  validation: 'validation retry',
  disagreement: 'disagreement retry',
  confidence: 'confidence retry',
};

/** How a prompt is named in pictures: `first prompt`, `parse retry`, … */
export function promptKindName(kind: SentPrompt['kind']): string {
  return PROMPT_KINDS[kind];
}

/** A Mermaid sequence diagram of a run, one block per attempt. */
export function sequence(result: BoothResult): string {
  const lines = ['sequenceDiagram', '  participant App', '  participant Booth', '  participant Model'];
  if (result.attempts.length === 0) {
    lines.push('  App->>Booth: answer and evidence');
    lines.push(`  Note over Booth: ${gates(result, 0, false)}`);
  } else {
    lines.push('  App->>Booth: prompt');
  }
  result.attempts.forEach((attempt, index) => {
    const kind = promptKindName(result.prompts[index]?.kind ?? 'first');
    lines.push(`  Booth->>Model: attempt ${index}, ${kind}`);
    lines.push(`  ${attempt.callFailed ? 'Model--xBooth' : 'Model-->>Booth'}: ${text(reply(attempt))}`);
    lines.push(`  Note over Booth: ${gates(result, index, true)}`);
  });
  const verdict = [result.status, result.answer === null ? '' : answerText(result.answer), result.reason ?? '']
    .filter(Boolean)
    .join(' ');
  lines.push(`  Booth-->>App: ${text(verdict)}`);
  return `${lines.join('\n')}\n`;
}

function reply(attempt: Attempt): string {
  if (attempt.callFailed) return `call failed: ${attempt.error}`;
  if (!attempt.parseOk) return `unparseable: ${attempt.error}`;
  return `${answerText(attempt.answer)} at confidence ${attempt.confidence}${attempt.ambiguous ? ', ambiguous' : ''}`;
}

/** The states an attempt passed after its call, the gates' verdicts in order. */
function gates(result: BoothResult, attempt: number, skipCalling: boolean): string {
  const states = result.trace
    .filter((step) => step.attempt === attempt && !(skipCalling && step.state === 'calling'))
    .map((step) => step.state);
  return text(states.join(' → '));
}

/** Keeps model text from breaking the diagram: one line, entities for Mermaid's specials, at most 80 characters. */
function text(value: string): string {
  const chars = [...value];
  const line = chars.length > 80 ? `${chars.slice(0, 79).join('')}…` : value;
  return mermaidText(line);
}
