import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import { type AdapterOptions, chatOf, chatResponseFormat, providerCall, readResponseFormat, readSampleSettings, readSystem, reportChatUsage, sampling } from './request.js';
import { eventTextStream, linkedAbort, readStream } from './stream.js';

/** `fromOpenAI()`: the official `openai` client, or any object shaped like it. */

/** The part of the official `openai` client that Booth uses. */
export interface OpenAIClientLike {
  readonly chat: {
    readonly completions: {
      create(
        body: { model: string; messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }> } & Record<string, unknown>,
        options?: { signal?: AbortSignal | undefined },
      ): PromiseLike<{
        choices: ReadonlyArray<{ message?: { content?: string | null } | null }>;
        usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined;
      }>;
    };
  };
}

/**
 * A `callFn` over an official `openai` client (any version with `chat.completions.create`).
 * Its HTTP errors become `ProviderError`s carrying `status` and `retryAfterMs`. Every other
 * parameter goes into the request as it is (they are OpenAI's, so any key is allowed): a
 * sample's call is sent `sampleTemperature` (default 1) for `temperature` and `seed + sample`.
 * With `stream: true` the call returns the reply's content deltas as they arrive, for
 * `acheck()` (the client's stream, with `stream_options.include_usage`).
 *
 * @example
 * const callFn = fromOpenAI(new OpenAI(), { model: 'gpt-4o-mini', temperature: 0, responseFormat: 'json_schema' });
 */
export function fromOpenAI(client: OpenAIClientLike, params: { model: string; stream?: boolean | undefined } & AdapterOptions & Record<string, unknown>): AsyncCallFn {
  const { system: givenSystem, responseFormat: givenFormat, sampleTemperature, stream: givenStream, ...request } = params;
  const system = readSystem(givenSystem);
  const responseFormat = readResponseFormat(givenFormat);
  const samples = readSampleSettings({ temperature: request['temperature'], sampleTemperature, seed: request['seed'] });
  const stream = readStream(givenStream);
  return async (prompt, info) => {
    const body = { ...request, messages: chatOf(system, prompt, info), ...sampling(samples, info), ...chatResponseFormat(responseFormat, info) };
    if (stream) return openAIStream(client, body, info);
    const completion = await providerCall(() => client.chat.completions.create(body, { signal: info.signal }));
    reportChatUsage(info, completion.usage);
    const content = completion.choices[0]?.message?.content;
    if (typeof content !== 'string') throw new Error('The OpenAI client returned no message content.');
    return content;
  };
}

/** A chunk of the client's chat completion stream, as much of it as Booth reads. */
interface ChatChunkLike {
  readonly choices?: ReadonlyArray<{ readonly index?: number; readonly delta?: { readonly content?: string | null; readonly refusal?: string | null } | null } | null> | null;
  readonly usage?: unknown;
}

/** The client's `create` with `stream: true`: a Promise of its `Stream` of chunks. */
type StreamingCreate = (body: Record<string, unknown>, options?: { signal?: AbortSignal | undefined }) => PromiseLike<AsyncIterable<ChatChunkLike>>;

/** The content deltas of the client's stream; its HTTP errors reject the call before any chunk, as without streaming. */
async function openAIStream(client: OpenAIClientLike, body: Record<string, unknown>, info: CallInfo): Promise<AsyncIterableIterator<string>> {
  const link = linkedAbort(info.signal);
  const streamOptions = body['stream_options'];
  const request = { ...body, stream: true, stream_options: { ...(typeof streamOptions === 'object' ? streamOptions : {}), include_usage: true } };
  const create = client.chat.completions.create.bind(client.chat.completions) as unknown as StreamingCreate;
  let chunks: AsyncIterable<ChatChunkLike>;
  try {
    chunks = await providerCall(() => create(request, { signal: link.signal }));
  } catch (error) {
    link.dispose();
    throw error;
  }
  let usage: unknown;
  let content = false;
  let refused = false;
  return eventTextStream(chunks, {
    outer: info.signal,
    link,
    what: "The OpenAI client's stream",
    textsOf(chunk) {
      if (chunk.usage !== undefined && chunk.usage !== null) usage = chunk.usage;
      const delta = chunk.choices?.find((choice) => (choice?.index ?? 0) === 0)?.delta;
      if (typeof delta?.refusal === 'string') refused = true;
      if (typeof delta?.content !== 'string') return [];
      content = true;
      return [delta.content];
    },
    finish() {
      if (!content) throw new Error(`The OpenAI client streamed no message content${refused ? ', and the model refused (delta.refusal)' : ''}.`);
    },
    report() {
      if (usage !== undefined) reportChatUsage(info, usage);
    },
  });
}
