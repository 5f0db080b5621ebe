import type { AsyncCallFn } from '../decide/model-call.js';
import { type AdapterOptions, chatOf, chatResponseFormat, providerCall, readResponseFormat, readSampleSettings, readSystem, reportChatUsage, sampling } from './request.js';

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
 *
 * @example
 * const callFn = fromOpenAI(new OpenAI(), { model: 'gpt-4o-mini', temperature: 0, responseFormat: 'json_schema' });
 */
export function fromOpenAI(client: OpenAIClientLike, params: { model: string } & AdapterOptions & Record<string, unknown>): AsyncCallFn {
  const { system: givenSystem, responseFormat: givenFormat, sampleTemperature, ...request } = params;
  const system = readSystem(givenSystem);
  const responseFormat = readResponseFormat(givenFormat);
  const samples = readSampleSettings({ temperature: request['temperature'], sampleTemperature, seed: request['seed'] });
  return async (prompt, info) => {
    const body = { ...request, messages: chatOf(system, prompt, info), ...sampling(samples, info), ...chatResponseFormat(responseFormat, info) };
    const completion = await providerCall(() => client.chat.completions.create(body, { signal: info.signal }));
    reportChatUsage(info, completion.usage);
    const content = completion.choices[0]?.message?.content;
    if (typeof content !== 'string') throw new Error('The OpenAI client returned no message content.');
    return content;
  };
}
