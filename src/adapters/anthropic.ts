import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import { describeValue, isPlainObject } from '../util/values.js';
import { isCount, providerCall, readResponseFormat, readSampleSettings, REPLY_NAME, reportTokens, sampling, systemAndTurns, TEXT_REPLY } from './request.js';
import { eventTextStream, linkedAbort, readStream } from './stream.js';

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
 * input, as JSON text, is the reply. With `stream: true` the call returns the reply's text
 * deltas as they arrive, for `acheck()` (the client's event stream: `text_delta`s, or the
 * forced tool's `input_json_delta`s), and reports the usage of `message_start` and
 * `message_delta`.
 *
 * @example
 * const callFn = fromAnthropic(new Anthropic(), { model: 'claude-sonnet-4-5', responseFormat: 'json_schema' });
 */
export function fromAnthropic(
  client: AnthropicClientLike,
  params: {
    model: string;
    max_tokens?: number;
    system?: string | readonly AnthropicTextBlock[];
    responseFormat?: 'text' | 'json_schema' | undefined;
    sampleTemperature?: number | undefined;
    stream?: boolean | undefined;
  } & Record<string, unknown>,
): AsyncCallFn {
  // Anthropic's own `system` (a string, or text blocks with cache_control) comes first, as given.
  const { responseFormat: givenFormat, sampleTemperature, system: ownSystem, stream: givenStream, ...request } = params;
  readOwnSystem(ownSystem);
  const stream = readStream(givenStream);
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
    if (stream) return anthropicStream(client, body, forcedTool, info);
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

/** An event of the client's message stream, as much of it as Booth reads. */
interface MessageEventLike {
  readonly type?: string;
  readonly index?: number;
  readonly message?: { readonly usage?: unknown } | null;
  readonly content_block?: { readonly type?: string; readonly name?: string } | null;
  readonly delta?: { readonly type?: string; readonly text?: unknown; readonly partial_json?: unknown } | null;
  readonly usage?: unknown;
}

/** The client's `create` with `stream: true`: a Promise of its `Stream` of events. */
type StreamingCreate = (body: Record<string, unknown>, options?: { signal?: AbortSignal | undefined }) => PromiseLike<AsyncIterable<MessageEventLike>>;

/**
 * The reply's text as the client's events bring it: the text blocks' `text_delta`s, or with
 * the forced tool its input's `input_json_delta`s. HTTP errors reject the call before any
 * chunk, as without streaming. The usage is `message_start`'s, its counts updated by
 * `message_delta`'s (the output, and on newer APIs the input too).
 */
async function anthropicStream(client: AnthropicClientLike, body: Record<string, unknown>, forcedTool: boolean, info: CallInfo): Promise<AsyncIterableIterator<string>> {
  const link = linkedAbort(info.signal);
  const create = client.messages.create.bind(client.messages) as unknown as StreamingCreate;
  let events: AsyncIterable<MessageEventLike>;
  try {
    events = await providerCall(() => create({ ...body, stream: true }, { signal: link.signal }));
  } catch (error) {
    link.dispose();
    throw error;
  }
  /** The content blocks whose deltas are the reply: text blocks, or the forced tool's call. */
  const replyBlocks = new Set<number>();
  let usage: Record<string, unknown> | null = null;
  // message_start's output count is a placeholder: a stream ended before message_delta reports nothing, not too little.
  let counted = false;
  return eventTextStream(events, {
    outer: info.signal,
    link,
    what: "The Anthropic client's stream",
    textsOf(event) {
      switch (event.type) {
        case 'message_start':
          if (isPlainObject(event.message?.usage)) usage = { ...event.message.usage };
          return [];
        case 'message_delta':
          if (isPlainObject(event.usage)) {
            usage = { ...usage, ...Object.fromEntries(Object.entries(event.usage).filter(([, count]) => count !== null && count !== undefined)) };
            counted = true;
          }
          return [];
        case 'content_block_start': {
          const block = event.content_block;
          const reply = forcedTool ? block?.type === 'tool_use' && block.name === REPLY_NAME : block?.type === 'text';
          if (reply && typeof event.index === 'number') replyBlocks.add(event.index);
          return [];
        }
        case 'content_block_delta': {
          if (typeof event.index !== 'number' || !replyBlocks.has(event.index)) return [];
          const { delta } = event;
          if (forcedTool) return delta?.type === 'input_json_delta' && typeof delta.partial_json === 'string' ? [delta.partial_json] : [];
          return delta?.type === 'text_delta' && typeof delta.text === 'string' ? [delta.text] : [];
        }
        default:
          return [];
      }
    },
    finish() {
      if (forcedTool && replyBlocks.size === 0) throw new Error(`The Anthropic client streamed no ${REPLY_NAME} tool call, though the request forced one.`);
    },
    report() {
      if (counted) reportAnthropicUsage(info, usage);
    },
  });
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
