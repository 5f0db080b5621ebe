import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import { describeValue, isPlainObject } from '../util/values.js';
import { isCount, providerCall, readResponseFormat, readSampleSettings, REPLY_NAME, reportTokens, sampling, systemAndTurns, TEXT_REPLY } from './request.js';

/** `fromAnthropic()`: the official `@anthropic-ai/sdk` client, or any object shaped like it. */

/** The part of the official `@anthropic-ai/sdk` client that Booth uses. */
export interface AnthropicClientLike {
  readonly messages: {
    create(
      body: { model: string; max_tokens: number; messages: Array<{ role: 'user' | 'assistant'; content: string }> } & Record<string, unknown>,
      options?: { signal?: AbortSignal | undefined },
    ): PromiseLike<{
      content: ReadonlyArray<{ type: string; text?: string; input?: unknown }>;
      usage?: {
        input_tokens?: number;
        output_tokens?: number;
        cache_creation_input_tokens?: number | null;
        cache_read_input_tokens?: number | null;
      } | null | undefined;
    }>;
  };
}

/**
 * A `callFn` over an official `@anthropic-ai/sdk` client. `max_tokens` defaults to 1024.
 * Messages have no `response_format`: with `responseFormat: 'json_schema'` the request
 * offers one tool whose input schema is the envelope and forces its use, and the tool's
 * input, as JSON text, is the reply.
 *
 * @example
 * const callFn = fromAnthropic(new Anthropic(), { model: 'claude-sonnet-4-5', responseFormat: 'json_schema' });
 */
export function fromAnthropic(
  client: AnthropicClientLike,
  params: { model: string; max_tokens?: number; system?: string | readonly AnthropicTextBlock[]; responseFormat?: 'text' | 'json_schema' | undefined; sampleTemperature?: number | undefined } & Record<
    string,
    unknown
  >,
): AsyncCallFn {
  // Anthropic's own `system` (a string, or text blocks with cache_control) comes first, as given.
  const { responseFormat: givenFormat, sampleTemperature, system: ownSystem, ...request } = params;
  readOwnSystem(ownSystem);
  const forcedTool = readResponseFormat(givenFormat, ['text', 'json_schema']) === 'json_schema';
  if (forcedTool && (request['tools'] !== undefined || request['tool_choice'] !== undefined)) {
    throw new TypeError(
      "`responseFormat: 'json_schema'` asks Anthropic for the reply through one forced tool of Booth's, so `tools` and `tool_choice` cannot be given too; leave them out, or use responseFormat 'text'.",
    );
  }
  // Messages has no seed: samples differ by temperature alone.
  const samples = readSampleSettings({ temperature: request['temperature'], sampleTemperature });
  return async (prompt, info) => {
    const { system, turns } = systemAndTurns(undefined, prompt, info);
    const body = {
      max_tokens: 1024,
      ...request,
      ...sampling(samples, info, false),
      ...anthropicSystem(ownSystem, system),
      ...(forcedTool
        ? {
            tools: [{ name: REPLY_NAME, description: 'Give your reply as this tool\'s input.', input_schema: info.replySchema ?? TEXT_REPLY }],
            tool_choice: { type: 'tool', name: REPLY_NAME },
          }
        : {}),
      messages: turns,
    };
    const message = await providerCall(() => client.messages.create(body, { signal: info.signal }));
    reportAnthropicUsage(info, message.usage);
    if (forcedTool) {
      const call = message.content.find((block) => block.type === 'tool_use');
      if (call === undefined) throw new Error(`The Anthropic client returned no ${REPLY_NAME} tool call, though the request forced one.`);
      return JSON.stringify(call.input);
    }
    return message.content
      .filter((block) => block.type === 'text' && typeof block.text === 'string')
      .map((block) => block.text)
      .join('');
  };
}

/**
 * Messages' `system`: the caller's own (a string, or text blocks that may carry
 * `cache_control`) first, then the run's system message; blocks stay blocks, so a cache
 * breakpoint on the caller's still covers the same prefix.
 */
function anthropicSystem(own: string | readonly AnthropicTextBlock[] | undefined, run: string | undefined): { system?: unknown } {
  if (run === undefined) return own === undefined ? {} : { system: own };
  if (own === undefined) return { system: run };
  if (Array.isArray(own)) return { system: [...own, { type: 'text', text: run }] };
  return { system: `${own}\n\n${run}` };
}

/**
 * Messages' `usage`. Its `input_tokens` are only the tokens after the prompt's last cache
 * breakpoint; the cache's writes and reads are the rest of the prompt, and billed too, so
 * they count as input. Otherwise a cached prompt would look almost free, and its count
 * would not compare with OpenAI's, whose `prompt_tokens` include cached tokens.
 */
function reportAnthropicUsage(info: CallInfo, usage: unknown): void {
  const { input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens } = (usage ?? {}) as Record<string, unknown>;
  // Null or absent when no cache was involved; any other value that is not a count leaves the input unknown.
  const written = cache_creation_input_tokens ?? 0;
  const read = cache_read_input_tokens ?? 0;
  if (isCount(input_tokens) && isCount(written) && isCount(read)) reportTokens(info, input_tokens + written + read, output_tokens);
}

/** A text block of Messages' `system`, as the SDK's `TextBlockParam` has it; `cache_control` and the rest are passed as given. */
export interface AnthropicTextBlock {
  readonly type: 'text';
  readonly text: string;
  readonly [key: string]: unknown;
}

/** A `system` Booth can put its own after: a string or text blocks. Anything else would be sent as something it is not. */
function readOwnSystem(own: unknown): asserts own is string | readonly AnthropicTextBlock[] | undefined {
  if (own === undefined || typeof own === 'string') return;
  const blocks = Array.isArray(own) && own.every((block: unknown) => isPlainObject(block) && (block as AnthropicTextBlock).type === 'text' && typeof (block as AnthropicTextBlock).text === 'string');
  if (!blocks) {
    throw new TypeError(`Expected \`system\` to be a string or an array of text blocks ({ type: 'text', text }), got ${describeValue(own)}.`);
  }
}
