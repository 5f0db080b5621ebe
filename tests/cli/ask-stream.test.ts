import { describe, expect, it } from 'vitest';
import { streamShow } from '../../src/cli/ask-stream.js';
import type { PartialReply } from '../../src/engine/partial-reply.js';
import type { Attempt } from '../../src/decide/attempt.js';

/** streamShow, the printer of `ask --stream`, fed partial replies by hand: what it writes, to a pipe and to a terminal. */

function shown(terminal = false, threshold = 0.7) {
  let text = '';
  const show = streamShow({ write: (piece) => (text += piece), terminal }, threshold);
  return { show, text: () => text };
}

const partial = (answerSoFar: string | null, more: Partial<PartialReply> = {}): PartialReply => ({
  attempt: 0,
  replaces: false,
  ambiguous: false,
  interpretations: [],
  answerSoFar,
  textSoFar: '',
  ...more,
});

const attempt = (fields: Partial<Attempt<unknown>>): Attempt<unknown> =>
  ({ rawText: '', answer: null, confidence: null, parseOk: true, error: null, callFailed: false, validationError: null, schemaIssues: null, ...fields }) as Attempt<unknown>;

describe('streamShow', () => {
  it('writes what each partial adds to the answer, nothing before the answer begins, and ends the line', () => {
    const { show, text } = shown();
    for (const answer of [null, null, '', 'Pa', 'Paris', 'Paris', 'Paris is']) show.onPartial(partial(answer));
    expect(text()).toBe('Paris is');
    show.end();
    expect(text()).toBe('Paris is\n');
    show.end();
    expect(text()).toBe('Paris is\n');
  });

  it('marks a rejected attempt replaced with why (from onAttempt), then shows the retry on a line of its own', () => {
    const { show, text } = shown();
    show.onPartial(partial('Lyon'));
    show.onAttempt(0, attempt({ answer: 'Lyon', confidence: 0.4 }));
    show.onPartial(partial(null, { attempt: 1, replaces: true }));
    show.onPartial(partial('Paris', { attempt: 1 }));
    show.end();
    expect(text()).toBe('Lyon\n— replaced: attempt 1: confidence 0.4, below the threshold 0.7 —\nParis\n');
  });

  it('says why for each kind of failure, on one line however long the error', () => {
    const cases: Array<[Partial<Attempt<unknown>>, string]> = [
      [{ parseOk: false, error: 'Unexpected end of JSON\ninput' }, 'unparseable: Unexpected end of JSON input'],
      [{ callFailed: true, parseOk: false, error: 'TimeoutError: the call took longer than 50 ms' }, 'call failed: TimeoutError: the call took longer than 50 ms'],
      [{ schemaIssues: [{ path: 'answer.city', message: 'expected a string' }], confidence: 0.9 }, 'the schema refused the answer: answer.city: expected a string'],
      [{ validationError: 'not a city', confidence: 0.9 }, 'failed validation: not a city'],
      [{ parseOk: false, error: 'x'.repeat(500) }, `unparseable: ${'x'.repeat(159)}…`],
    ];
    for (const [fields, why] of cases) {
      const { show, text } = shown();
      show.onPartial(partial('first'));
      show.onAttempt(0, attempt(fields));
      show.onPartial(partial('second', { attempt: 1, replaces: true }));
      expect(text()).toBe(`first\n— replaced: attempt 1: ${why} —\nsecond`);
    }
  });

  it('a call tried again replaces the text of the same attempt; an escalation names the next model', () => {
    const retried = shown();
    retried.show.onPartial(partial('Par'));
    retried.show.onPartial(partial(null, { replaces: true }));
    retried.show.onPartial(partial('Paris'));
    expect(retried.text()).toBe('Par\n— replaced: the call of attempt 1 failed; calling again —\nParis');

    const escalated = shown();
    escalated.show.onPartial(partial('Lyon', { model: 'small' }));
    escalated.show.onAttempt(0, attempt({ confidence: 0.5, model: 'small' }));
    escalated.show.onPartial(partial('Paris', { attempt: 1, model: 'large', replaces: true }));
    expect(escalated.text()).toBe('Lyon\n— replaced: attempt 1: confidence 0.5, below the threshold 0.7; asking large —\nParis');
  });

  it('no marker when nothing of the stream replaced was shown', () => {
    const { show, text } = shown();
    show.onPartial(partial(null));
    show.onAttempt(0, attempt({ parseOk: false, error: 'not JSON' }));
    show.onPartial(partial('Paris', { attempt: 1, replaces: true }));
    expect(text()).toBe('Paris');
  });

  it('with samples, shows the first sample of each attempt only', () => {
    const { show, text } = shown();
    show.onPartial(partial('A', { sample: 0 }));
    show.onPartial(partial('B', { sample: 1 }));
    show.onPartial(partial('AB', { sample: 0 }));
    show.onPartial(partial('BC', { sample: 2 }));
    expect(text()).toBe('AB');
  });

  it('to a terminal: the model text through terminalText, the marker dimmed by escapes of its own', () => {
    const { show, text } = shown(true);
    show.onPartial(partial('a\u001b[2J'));
    show.onPartial(partial('a\u001b[2J\nb\u009b'));
    show.onAttempt(0, attempt({ parseOk: false, error: 'bad \u001b]0;x\u0007' }));
    show.onPartial(partial('c', { attempt: 1, replaces: true }));
    expect(text()).toBe('a\\u001b[2J\\nb\\u009b\n\u001b[2m— replaced: attempt 1: unparseable: bad \\u001b]0;x\\u0007 —\u001b[22m\nc');
  });
});
