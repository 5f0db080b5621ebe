import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createActor, waitFor } from 'xstate';
import { z } from 'zod';
import { checkpointMachine } from '../../machines/index.js';
import { acheck, type CallInfo, check, CheckpointError, INSTRUCTIONS, memoryStore, PARSE_RETRY_MARKER } from '../../src/index.js';
import { instructions } from '../../src/decide/prompts.js';
import { answerFormatOf } from '../../src/decide/schema.js';
import { envelope } from '../fixtures/helpers.js';

/**
 * A check as part of a chat: the application's system prompt and earlier turns reach the
 * model through `info.messages`, Booth's instructions can be replaced, and a plain
 * `(prompt) => text` callFn keeps receiving the one string it always did.
 */

/** A model that answers from a script and keeps what each call was given. */
function recording(replies: string[]) {
  const calls: Array<{ prompt: string; info: CallInfo }> = [];
  const fn = (prompt: string, info: CallInfo) => {
    calls.push({ prompt, info });
    return replies[calls.length - 1] ?? envelope('Paris', 0.9);
  };
  return { calls, fn };
}

const history = [
  { role: 'user', content: 'I am planning a trip to France.' },
  { role: 'assistant', content: 'Lovely. How can I help?' },
] as const;

describe('info.messages: the whole chat to send', () => {
  it('a system message (the system prompt, then Booth\'s instructions), the earlier turns, then the question', () => {
    const model = recording([envelope('Paris', 0.9)]);
    check(model.fn, 'What is its capital?', { system: 'You are a terse travel agent.', messages: history });
    expect(model.calls[0]!.info.messages).toEqual([
      { role: 'system', content: `You are a terse travel agent.\n\n${INSTRUCTIONS}` },
      ...history,
      { role: 'user', content: 'What is its capital?' },
    ]);
  });

  it('the system message is the same for every retry, so a provider caches it; the user turn carries why the last attempt failed', () => {
    const model = recording(['no json here', envelope('Paris', 0.9)]);
    const result = check(model.fn, 'What is its capital?', { system: 'Be terse.', messages: history });
    expect(result.status).toBe('REPAIRED');
    const [first, retry] = model.calls.map((call) => call.info.messages!);
    expect(retry![0]).toEqual(first![0]);
    expect(retry!.slice(1, 3)).toEqual(history);
    expect(retry![3]!.role).toBe('user');
    expect(retry![3]!.content).toMatch(new RegExp(`^What is its capital\\?\\n\\nYour previous response ${PARSE_RETRY_MARKER}`));
    expect(retry![3]!.content).not.toContain(INSTRUCTIONS);
  });

  it('without a system prompt the system message holds the instructions alone', () => {
    const model = recording([]);
    check(model.fn, 'q');
    expect(model.calls[0]!.info.messages).toEqual([
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: 'q' },
    ]);
  });

  it('the prompt a plain callFn receives is unchanged: the question, then the instructions, whatever the system prompt and turns', () => {
    const plain = recording([]);
    check(plain.fn, 'What is its capital?');
    const chat = recording([]);
    check(chat.fn, 'What is its capital?', { system: 'Be terse.', messages: history });
    expect(chat.calls[0]!.prompt).toBe(plain.calls[0]!.prompt);
    expect(plain.calls[0]!.prompt).toBe(`What is its capital?\n\n${INSTRUCTIONS}`);
  });

  it('info.question is the question as the caller wrote it, trailing space and all: the key for a cache', async () => {
    const model = recording(['junk', envelope('Paris', 0.9)]);
    await acheck(model.fn, 'What is its capital?  ', { maxRetries: 1 });
    expect(model.calls.map((call) => call.info.question)).toEqual(['What is its capital?  ', 'What is its capital?  ']);
  });

  it('samples share the attempt\'s messages', async () => {
    const model = recording([]);
    await acheck(model.fn, 'q', { samples: 3, system: 'S' });
    expect(new Set(model.calls.map((call) => JSON.stringify(call.info.messages))).size).toBe(1);
    expect(model.calls.map((call) => call.info.sample)).toEqual([0, 1, 2]);
  });

  it('the turns are copied: changing the caller\'s array later changes nothing, and the run never changes it', () => {
    const turns = [{ role: 'user' as const, content: 'first' }];
    const model = recording(['junk', envelope('Paris', 0.9)]);
    check(
      (prompt, info) => {
        turns.push({ role: 'user', content: 'pushed during the run' });
        return model.fn(prompt, info);
      },
      'q',
      { messages: turns },
    );
    expect(model.calls.map((call) => call.info.messages!.length)).toEqual([3, 3]);
    expect(turns[0]).toEqual({ role: 'user', content: 'first' });
  });

  it('in a workflow the machine gives its model the same question and messages', async () => {
    const infos: unknown[] = [];
    const actor = createActor(checkpointMachine, {
      input: {
        prompt: 'q',
        system: 'S',
        messages: history,
        model: (_prompt, info) => {
          infos.push({ question: info.question, messages: info.messages });
          return envelope('Paris', 0.9);
        },
      },
    }).start();
    await waitFor(actor, (snapshot) => snapshot.status === 'done');
    expect(infos).toEqual([{ question: 'q', messages: [{ role: 'system', content: `S\n\n${INSTRUCTIONS}` }, ...history, { role: 'user', content: 'q' }] }]);
  });
});

describe('system and messages: checked before any call, never quoted', () => {
  const calls = () => {
    let n = 0;
    return { fn: () => (n++, envelope('a', 0.9)), count: () => n };
  };

  it.each([
    [{ system: 42 }, 'Expected `system` to be a string (the application\'s system prompt), got 42.'],
    [{ messages: 'SECRET hello' }, "Expected `messages` to be the earlier turns, an array of { role: 'user' | 'assistant', content: string }, got a string."],
    [{ messages: [{ role: 'system', content: 'SECRET' }] }, "Expected `messages[0]` to be { role: 'user' | 'assistant', content: string }, but its role is 'system': give the system prompt as the `system` option."],
    [{ messages: [{ role: 'user', content: 'ok' }, { role: 'SECRET-bot', content: 'SECRET' }] }, "Expected `messages[1]` to be { role: 'user' | 'assistant', content: string }, but its role is another string."],
    [{ messages: [{ role: 'user', content: { text: 'SECRET' } }] }, "Expected `messages[0]` to be { role: 'user' | 'assistant', content: string }, but its content is an object."],
    [{ messages: [{ role: 'user', content: 'SECRET', 'SECRET-KEY': 'x' }] }, "Expected `messages[0]` to be { role: 'user' | 'assistant', content: string }, but it has a key besides role and content, which Booth would not send."],
    [{ messages: [null] }, "Expected `messages[0]` to be { role: 'user' | 'assistant', content: string }, but it is null."],
  ])('%j is a TypeError naming the option', (options, message) => {
    const model = calls();
    expect(() => check(model.fn, 'q', options as never)).toThrow(new TypeError(message));
    expect(model.count()).toBe(0);
  });

  it('more than 1 000 earlier turns is a RangeError', () => {
    const turns = Array.from({ length: 1_001 }, () => ({ role: 'user' as const, content: 'x' }));
    expect(() => check(() => envelope('a', 0.9), 'q', { messages: turns })).toThrow(new RangeError('Expected at most 1000 earlier `messages`, got 1001.'));
  });
});

describe('instructions: Booth\'s text, or the caller\'s', () => {
  it('a string replaces the instructions in the prompt and in the system message; the retry paragraphs stay', () => {
    const house = 'Antworte mit genau einem JSON-Objekt: ambiguous, interpretations, chosen_interpretation, answer, confidence.';
    const model = recording(['junk', envelope('Paris', 0.9)]);
    check(model.fn, 'Hauptstadt von Frankreich?', { instructions: house });
    expect(model.calls[0]!.prompt).toBe(`Hauptstadt von Frankreich?\n\n${house}`);
    expect(model.calls[0]!.info.messages![0]).toEqual({ role: 'system', content: house });
    expect(model.calls[1]!.prompt).toContain(PARSE_RETRY_MARKER);
    expect(model.calls[1]!.prompt.endsWith(`\n\n${house}`)).toBe(true);
  });

  it('a function is given Booth\'s default text, the schema\'s variant with a schema', () => {
    const seen: string[] = [];
    const edit = (defaults: string) => (seen.push(defaults), `${defaults}\nWrite in the house style.`);
    const model = recording([]);
    check(model.fn, 'q', { instructions: edit });
    const schema = z.object({ city: z.string() });
    check(recording([envelope({ city: 'Paris' } as never, 0.9)]).fn, 'q', { instructions: edit, schema });
    expect(seen).toEqual([INSTRUCTIONS, instructions(answerFormatOf(schema))]);
    expect(model.calls[0]!.prompt).toBe(`q\n\n${INSTRUCTIONS}\nWrite in the house style.`);
  });

  it('an empty text sends no system message without a system prompt: the caller chose to say nothing', () => {
    const model = recording([]);
    check(model.fn, 'q', { instructions: '' });
    expect(model.calls[0]!.info.messages).toEqual([{ role: 'user', content: 'q' }]);
  });

  it('a function that throws is a TypeError naming the option, the caller\'s error (which may quote its texts) only its cause', () => {
    const own = new Error('house style failed for SECRET-SYSTEM');
    let thrown: unknown;
    try {
      check(() => envelope('a', 0.9), 'q', {
        instructions: () => {
          throw own;
        },
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toEqual(new TypeError("The `instructions` function threw; see the error's cause."));
    expect((thrown as Error).cause).toBe(own);
  });

  it('anything else, or a function that returns anything else, is a TypeError before any call', () => {
    expect(() => check(() => envelope('a', 0.9), 'q', { instructions: 42 as never })).toThrow(
      new TypeError("Expected `instructions` to be a string, or a function of Booth's default text returning one, got 42."),
    );
    expect(() => check(() => envelope('a', 0.9), 'q', { instructions: (() => undefined) as never })).toThrow(
      new TypeError('Expected the `instructions` function to return a string, got undefined.'),
    );
  });
});

describe('parseFn: the caller reads the reply', () => {
  it('its object is judged by the envelope\'s rules and recorded as Booth\'s own reading', () => {
    const native = (text: string) => {
      const { result, score } = JSON.parse(text) as { result: string; score: number };
      return { ambiguous: false, answer: result, confidence: score };
    };
    const result = check(() => '{"result":"Paris","score":0.9}', 'q', { parseFn: native });
    expect(result.status).toBe('VERIFIED');
    expect(result.answer).toBe('Paris');
    expect(result.attempts[0]).toMatchObject({ rawText: '{"result":"Paris","score":0.9}', parseOk: true, parsed: { ambiguous: false, answer: 'Paris', confidence: 0.9 } });
    expect(Object.isFrozen(result.attempts[0]!.parsed)).toBe(true);
  });

  it('a throw is a parse failure with its message, and earns the parse retry', () => {
    let calls = 0;
    const result = check(
      () => (calls++ === 0 ? 'garbled' : 'ok'),
      'q',
      {
        parseFn: (text) => {
          if (text === 'garbled') throw new SyntaxError('no result field');
          return { answer: 'Paris', confidence: 0.9 };
        },
      },
    );
    expect(result.status).toBe('REPAIRED');
    expect(result.attempts[0]).toMatchObject({ parseOk: false, callFailed: false, error: 'parseFn threw: no result field' });
    expect(result.prompts[1]!.kind).toBe('parse');
  });

  it.each([
    ['a string', () => 'Paris', 'parseFn returned a string, expected the envelope object'],
    ['an array', () => [], 'parseFn returned an array, expected the envelope object'],
    ['an envelope that breaks a rule', () => ({ answer: 'Paris', confidence: 7 }), '"confidence" is out of range: 7, expected 0 to 1'],
    ['a cycle', () => {
      const o: Record<string, unknown> = { answer: 'Paris', confidence: 0.9 };
      o['self'] = o;
      return o;
    }, 'parseFn returned a value JSON cannot hold: TypeError'],
    ['a BigInt', () => ({ answer: 1n, confidence: 0.9 }), 'parseFn returned a value JSON cannot hold: TypeError'],
    ['a revoked Proxy', () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }, 'parseFn returned a value JSON cannot hold: TypeError'],
    ['a nesting past MAX_DEPTH', () => {
      let deep: unknown = 1;
      for (let i = 0; i < 600; i++) deep = { deep };
      return { answer: 'Paris', confidence: 0.9, deep };
    }, 'parseFn returned an object nested more than 512 levels deep'],
  ])('returning %s is a parse failure saying so', (_name, parseFn, error) => {
    const result = check(() => 'text', 'q', { parseFn: parseFn as never, maxRetries: 0 });
    expect(result.status).toBe('UNCERTAIN');
    expect(result.method).toBe('parse_failure');
    expect(result.attempts[0]!.error).toMatch(error);
  });

  it('its object is copied: changing it after it returned changes nothing the run decided', () => {
    const returned = { answer: 'Paris', confidence: 0.9 };
    const result = check(() => 'text', 'q', { parseFn: () => returned });
    returned.answer = 'Lyon';
    expect(result.answer).toBe('Paris');
    expect(result.attempts[0]!.parsed).toEqual({ answer: 'Paris', confidence: 0.9 });
  });

  it('with a schema, its answer goes to the schema as a reply\'s would', async () => {
    const schema = z.object({ city: z.string() });
    const result = await acheck(async () => 'text', 'q', { schema, parseFn: () => ({ answer: { city: 'Paris' }, confidence: 0.9 }) });
    expect(result.answer).toEqual({ city: 'Paris' });
  });

  it('an async parseFn, or one that is not a function, is a TypeError', () => {
    expect(() => check(() => 'x', 'q', { parseFn: (async () => ({})) as never })).toThrow(
      new TypeError('Expected `parseFn` to be a synchronous function (text) => envelope object, got an async function.'),
    );
    expect(() => check(() => 'x', 'q', { parseFn: 'json' as never })).toThrow(TypeError);
  });

  it('the samples are read with it too', async () => {
    const result = await acheck(async (_p, info) => `reply ${info.sample}`, 'q', {
      samples: 3,
      parseFn: (text) => ({ answer: text === 'reply 2' ? 'Lyon' : 'Paris', confidence: 0.9 }),
    });
    expect(result.answer).toBe('Paris');
    expect(result.attempts[0]!.samples!.map((sample) => sample.answer)).toEqual(['Paris', 'Paris', 'Lyon']);
  });
});

describe('a saved run is resumed only with its own conversation', () => {
  it('another system prompt, turns or instructions is a CheckpointError naming the setting by digest, never its text', async () => {
    // A store that keeps the run once it ended, as a crash between the last save and the delete would.
    const store = memoryStore();
    const undeleted = { load: store.load, save: store.save, delete: () => undefined };
    await acheck(async () => envelope('a', 0.9), 'q', { checkpoint: undeleted, key: 'k', system: 'SECRET-SYSTEM' });
    expect(store.size).toBe(1);
    const digest = 'sha-256 [0-9a-f]{8}…';
    // The digest is the first 8 hex digits of the text's SHA-256, the same in every runtime.
    const sha256 = (text: string) => `sha-256 ${createHash('sha256').update(text).digest('hex').slice(0, 8)}…`;
    for (const [options, name, saved, given] of [
      [{ system: 'OTHER-SYSTEM' }, 'system', sha256('SECRET-SYSTEM'), sha256('OTHER-SYSTEM')],
      // None is said as none: a digest of "null" or "[]" would say there was one.
      [{}, 'system', digest, 'none'],
      [{ system: 'SECRET-SYSTEM', messages: [{ role: 'user', content: 'SECRET-TURN' }] }, 'messages', 'none', digest],
      [{ system: 'SECRET-SYSTEM', instructions: 'SECRET-INSTRUCTIONS' }, 'instructions', digest, digest],
    ] as const) {
      const error = await acheck(async () => envelope('a', 0.9), 'q', { checkpoint: store, key: 'k', ...options }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect((error as Error).message).toMatch(new RegExp(`belongs to a different run: its ${name} \\(${saved}\\) is not this call's \\(${given}\\)\\.$`));
      expect((error as Error).message).not.toMatch(/SECRET|OTHER/);
    }
    // A page that is not a secure context has no crypto.subtle: still a CheckpointError, naming no digest.
    const subtle = Object.getOwnPropertyDescriptor(globalThis.crypto, 'subtle');
    Object.defineProperty(globalThis.crypto, 'subtle', { value: undefined, configurable: true });
    try {
      const error = await acheck(async () => envelope('a', 0.9), 'q', { checkpoint: store, key: 'k', system: 'OTHER-SYSTEM' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointError);
      expect((error as Error).message).toMatch(/belongs to a different run: its system \(a text not shown\) is not this call's \(a text not shown\)\.$/);
    } finally {
      if (subtle) Object.defineProperty(globalThis.crypto, 'subtle', subtle);
      else delete (globalThis.crypto as { subtle?: unknown }).subtle;
    }
    const resumed = await acheck(async () => envelope('a', 0.9), 'q', { checkpoint: store, key: 'k', system: 'SECRET-SYSTEM' });
    expect(resumed.status).toBe('VERIFIED');
  });
});
