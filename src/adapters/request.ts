import type { CallInfo } from '../decide/model-call.js';
import { replySchemaOf } from '../decide/schema.js';
import { redactUrls } from '../util/urls.js';
import { describeValue } from '../util/values.js';
import { ProviderError, retryAfter } from './http.js';

/** What every adapter shares: the reply format it asks for, the system prompt, the chat messages, usage reporting. */

/**
 * How an adapter asks for the reply: `'text'` (the default) leaves it to the prompt;
 * `'json_object'` asks the provider for any JSON object; `'json_schema'` sends the
 * envelope's JSON Schema (`info.replySchema`, with a typed answer's schema inside), so a
 * provider that supports structured output constrains the reply to it. Booth checks the
 * reply the same way whichever is chosen.
 */
export type ResponseFormat = 'text' | 'json_object' | 'json_schema';

const RESPONSE_FORMATS: readonly ResponseFormat[] = ['text', 'json_object', 'json_schema'];

/** The name providers show for the structured output Booth asks for. */
export const REPLY_NAME = 'booth_reply';

/** A run that gave no schema of its reply asks for the plain envelope. */
export const TEXT_REPLY = replySchemaOf(null);

export function readResponseFormat(value: unknown, allowed: readonly ResponseFormat[] = RESPONSE_FORMATS): ResponseFormat {
  if (value === undefined) return 'text';
  if (!allowed.includes(value as ResponseFormat)) {
    const names = allowed.map((format) => `'${format}'`);
    throw new TypeError(`Expected \`responseFormat\` to be ${names.slice(0, -1).join(', ')} or ${names.at(-1)}, got ${describeValue(value)}.`);
  }
  return value as ResponseFormat;
}

export function readSystem(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new TypeError(`Expected \`system\` to be a string (a system message), got ${describeValue(value)}.`);
}

/** The Chat Completions messages: the optional system message, then the prompt. */
export function chatMessages(system: string | undefined, prompt: string): Array<{ role: 'system' | 'user'; content: string }> {
  return system === undefined ? [{ role: 'user', content: prompt }] : [{ role: 'system', content: system }, { role: 'user', content: prompt }];
}

/** Chat Completions' `response_format` for a format, or nothing for plain text. */
export function chatResponseFormat(format: ResponseFormat, info: CallInfo): Record<string, unknown> {
  if (format === 'json_object') return { response_format: { type: 'json_object' } };
  if (format === 'json_schema') {
    return { response_format: { type: 'json_schema', json_schema: { name: REPLY_NAME, schema: info.replySchema ?? TEXT_REPLY } } };
  }
  return {};
}

/** A token count as a provider gives it, if it is one. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * Reports the tokens a provider's reply says the call consumed. Counts that are missing or
 * not counts report nothing: Booth's `usage: null` says "unknown", where zeros would
 * understate the cost, and a reply the provider miscounted is still a reply.
 */
export function reportTokens(info: CallInfo, input: unknown, output: unknown, total: unknown = null): void {
  if (isCount(input) && isCount(output)) {
    info.reportUsage?.({ inputTokens: input, outputTokens: output, totalTokens: isCount(total) ? total : null });
  }
}

/** Chat Completions' `usage`. Its `prompt_tokens` already include cached ones, its `completion_tokens` reasoning ones. */
export function reportChatUsage(info: CallInfo, usage: unknown): void {
  const { prompt_tokens, completion_tokens, total_tokens } = (usage ?? {}) as Record<string, unknown>;
  reportTokens(info, prompt_tokens, completion_tokens, total_tokens);
}

/** What the adapters take besides the provider's own parameters. */
export interface AdapterOptions {
  /** A system message sent before the prompt. */
  readonly system?: string | undefined;
  /** How to ask for the reply; see `ResponseFormat`. Default `'text'`. */
  readonly responseFormat?: ResponseFormat | undefined;
}

/** SDK errors with an HTTP status become `ProviderError`s, so `callRetries` can read status and Retry-After. */
export async function providerCall<T>(call: () => PromiseLike<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const status = (error as { status?: unknown } | null)?.status;
    if (typeof status !== 'number') throw error;
    const headers = (error as { headers?: unknown }).headers;
    const retryAfterMs =
      headers && typeof (headers as { get?: unknown }).get === 'function'
        ? retryAfter(headers as { get(name: string): string | null })
        : headers && typeof headers === 'object'
          ? retryAfter({ get: (name) => ((headers as Record<string, unknown>)[name] as string | undefined) ?? null })
          : null;
    // An SDK's message may name the endpoint, key and all in a query or user name.
    const message = (error as { message?: unknown }).message;
    throw new ProviderError(status, typeof message === 'string' ? redactUrls(message) : '', retryAfterMs, { cause: error });
  }
}
