// A user's project, type-checked against the packed package with `skipLibCheck: false` and
// the lowest xstate the peer range allows: Booth's .d.ts must hold up in both.
import { acheck, type AnswerSchema, check, checkWithEvidence, resultFrom, type BoothResult, type Status, type TelemetryOptions, type Usage } from 'boothjs';
import { fileStore } from 'boothjs/node';
import { fromAISDK, openAICompatible } from 'boothjs/adapters';
import { checkpointMachine, type CheckpointOutput, modelActor } from 'boothjs/machine';
import { type RedisClientLike, redisStore } from 'boothjs/redis';
import { envelope, scriptedModel } from 'boothjs/testing';
import { toHtml } from 'boothjs/visualize';
import { assign, createActor, setup } from 'xstate';

const result: BoothResult = check(scriptedModel([envelope('4', 0.9)]).sync, 'What is 2 + 2?');
const status: Status = result.status;
const later: Promise<BoothResult> = acheck(openAICompatible({ baseURL: 'http://localhost:1/v1', model: 'm' }), 'q', {
  timeoutMs: 1_000,
  callRetries: { retries: 2 },
  checkpoint: fileStore('.checkpoints'),
  key: 'k',
});
const judged = checkWithEvidence('Paris', ['Paris is the capital.'], (answer, docs) => docs.some((d) => d.includes(answer)));
const html: Promise<string> = toHtml(judged);
const vercel = fromAISDK({
  generateText: async ({ messages }: { model: string; messages: Array<{ role: 'user' | 'assistant'; content: string }> }) => ({ text: messages.at(-1)?.content ?? '' }),
  model: 'm',
});

const workflow = setup({
  types: { context: {} as { answer: string | null } },
  actors: { booth: checkpointMachine.provide({ actors: { callModel: modelActor(async () => envelope('4', 0.9)) } }) },
}).createMachine({
  context: { answer: null },
  invoke: {
    src: 'booth',
    input: { prompt: 'What is 2 + 2?', maxRetries: 1 },
    // As before typed answers: a workflow without a schema reads the output's string answer directly.
    onDone: { actions: assign({ answer: ({ event }) => (event.output satisfies CheckpointOutput).answer }) },
  },
});
createActor(workflow).start();

// Any Standard Schema types the answer; this one is written by hand, as a schema library would.
const Year: AnswerSchema<number> = {
  '~standard': { version: 1, vendor: 'consumer', validate: (value) => (typeof value === 'number' ? { value } : { issues: [{ message: 'not a year' }] }) },
};
const typed = check(scriptedModel([envelope(1989, 0.9)]).sync, 'When did the Berlin Wall fall?', {
  schema: Year,
  validator: (year) => year > 1900,
});
const year: number | null = typed.ok ? typed.unwrap() : typed.status === 'UNCERTAIN' ? typed.answer : null;
const fromWorkflow = (output: CheckpointOutput): number | null => {
  const result = resultFrom<number>(output);
  return result.ok ? result.answer : null;
};
// Usage and telemetry type-check without @opentelemetry/api installed: Booth's types do not name it.
const telemetry: TelemetryOptions = { recordPrompts: false, functionId: 'consumer', attributes: { 'gen_ai.request.model': 'm', tags: ['a', 'b'] } };
const billed = check(
  (_prompt, { reportUsage }) => {
    reportUsage?.({ inputTokens: 10, outputTokens: 2, costUsd: 0.0001 });
    return envelope('4', 0.9);
  },
  'What is 2 + 2?',
  { telemetry: false },
);
const spent: Usage | null = billed.usage;
const seconds: number = billed.durationMs / 1000;
// boothjs/redis type-checks without ioredis installed: its client type is structural.
const redis: RedisClientLike = { get: async () => null, set: async () => 'OK', del: async () => 1 };
const shared = acheck(async () => envelope('4', 0.9), 'q', { checkpoint: redisStore(redis, { prefix: 'app:', ttlSeconds: null }), key: 'k' });
export { fromWorkflow, html, later, seconds, shared, spent, status, telemetry, vercel, year };
