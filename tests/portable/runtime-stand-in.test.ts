import { acheck, check, memoryStore } from 'boothjs';
import { ProviderError, openAICompatible } from 'boothjs/adapters';
import { type CheckpointOutput, checkpointMachine, modelActor } from 'boothjs/machine';
import { envelope, scriptedModel } from 'boothjs/testing';
import { toHtml, toMermaid } from 'boothjs/visualize';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';

/**
 * A few checks of the built package through its portable entries, written to the contract of
 * tests/portable (only 'vitest' and the package): tests/runtimes runs them in Deno, Bun, workerd
 * and Chromium as well as in Node.
 */

/** Runs the checkpoint machine to its end with `reply` answering each attempt. */
async function runMachine(reply: (attempt: number) => string | Promise<string>): Promise<CheckpointOutput> {
  const booth = checkpointMachine.provide({ actors: { callModel: modelActor((_prompt, { attempt }) => reply(attempt)) } });
  return toPromise(createActor(booth, { input: { prompt: 'Capital of France?', maxRetries: 1 } }).start());
}

/** Swaps the global fetch for `stand-in` while `run` runs: no network in any runtime. */
async function withFetch<T>(standIn: typeof fetch, run: () => Promise<T>): Promise<T> {
  const real = globalThis.fetch;
  globalThis.fetch = standIn;
  try {
    return await run();
  } finally {
    globalThis.fetch = real;
  }
}

describe('check and acheck', () => {
  it('check() reconsiders a low-confidence answer', () => {
    const model = scriptedModel([envelope('Lyon', 0.2), envelope('Paris', 0.9)]);
    const result = check(model.sync, 'Capital of France?');
    expect(result.status).toBe('REPAIRED');
    expect(result.unwrap()).toBe('Paris');
  });

  it('acheck() keeps a durable run in a memoryStore', async () => {
    const model = scriptedModel([envelope('Paris', 0.9)]);
    const store = memoryStore();
    const result = await acheck(model.async, 'Capital of France?', { checkpoint: store, key: 'france' });
    expect(result.status).toBe('VERIFIED');
    expect(model.prompts).toHaveLength(1);
  });
});

describe('the checkpoint machine', () => {
  it('reconsiders a low-confidence answer and accepts the confident one', async () => {
    const output = await runMachine((attempt) => envelope(attempt === 0 ? 'Lyon' : 'Paris', attempt === 0 ? 0.2 : 0.9));
    expect(output.status).toBe('REPAIRED');
    expect(output.answer).toBe('Paris');
    expect(output.trace.map((step) => step.state)).toContain('reconsidering');
  });

  describe('drawn from its run', () => {
    it('as a Mermaid diagram and a trace page', async () => {
      const output = await runMachine(() => envelope('Paris', 0.9));
      expect(toMermaid(output)).toMatch(/^flowchart LR\n  start\(\( \)\) --> asking\n/);
      const html = await toHtml(output);
      expect(html).toContain('</html>');
      expect(html).not.toContain('Lyon');
    });
  });
});

describe('openAICompatible over a fetch stand-in', () => {
  const options = { baseURL: 'https://models.example/v1', model: 'stand-in' };

  it('sends the chat and returns the reply', async () => {
    const sent: unknown[] = [];
    const reply = envelope('Paris', 0.9);
    const answer = await withFetch(
      async (input, init) => {
        sent.push({ url: String(input), body: JSON.parse(String(init?.body)) });
        return new Response(JSON.stringify({ choices: [{ message: { content: reply } }] }), { headers: { 'content-type': 'application/json' } });
      },
      async () => openAICompatible(options)('Capital of France?', { attempt: 0 }),
    );
    expect(answer).toBe(reply);
    expect(sent).toEqual([{ url: 'https://models.example/v1/chat/completions', body: expect.objectContaining({ model: 'stand-in' }) }]);
  });

  it('fails with a ProviderError when the server answers 429', async () => {
    const call = withFetch(
      async () => new Response('{"error":{"message":"slow down"}}', { status: 429, headers: { 'retry-after': '2' } }),
      async () => openAICompatible(options)('Capital of France?', { attempt: 0 }),
    );
    await expect(call).rejects.toThrow(ProviderError);
    await expect(call).rejects.toThrow(/answered 429: slow down/);
  });
});
