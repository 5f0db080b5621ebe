import type { CallInfo } from '../decide/model-call.js';
import type { ChatMessage, ChatTurn } from '../decide/prompts.js';
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

/**
 * The chat a call sends: Booth's `info.messages` (the system message with the run's system
 * prompt and instructions, earlier turns, the question), or for a callFn called by other code
 * the prompt as one user message. The adapter's own `system` comes first in the system message.
 */
export function chatOf(system: string | undefined, prompt: string, info: CallInfo): ChatMessage[] {
  const messages: readonly ChatMessage[] = info.messages ?? [{ role: 'user', content: prompt }];
  if (system === undefined) return [...messages];
  const [first, ...rest] = messages;
  return first?.role === 'system' ? [{ role: 'system', content: `${system}\n\n${first.content}` }, ...rest] : [{ role: 'system', content: system }, ...messages];
}

/** The chat for an API that takes the system prompt apart from the turns (Anthropic, the AI SDK). */
export function systemAndTurns(system: string | undefined, prompt: string, info: CallInfo): { system: string | undefined; turns: ChatTurn[] } {
  const [first, ...rest] = chatOf(system, prompt, info);
  return first?.role === 'system' ? { system: first.content, turns: rest as ChatTurn[] } : { system: undefined, turns: [first, ...rest] as ChatTurn[] };
}

/** How sample calls differ: the temperature they are sent at, and the seed each is given. */
export interface SampleSettings {
  /** Sent on every call unless it is a sample's; undefined leaves the provider's default. */
  readonly temperature: number | undefined;
  /** Sent on the calls of `samples` above 1 instead of `temperature`. */
  readonly sampleTemperature: number;
  /** Sent on every call; a sample's call is sent `seed + sample`, so each sample has its own. */
  readonly seed: number | undefined;
}

/** The temperature a sample call is sent at unless the adapter is told otherwise: the samples must be able to differ. */
export const DEFAULT_SAMPLE_TEMPERATURE = 1;

export function readSampleSettings(options: { temperature?: unknown; sampleTemperature?: unknown; seed?: unknown }): SampleSettings {
  const { temperature, sampleTemperature = DEFAULT_SAMPLE_TEMPERATURE, seed } = options;
  if (temperature !== undefined && !(typeof temperature === 'number' && Number.isFinite(temperature) && temperature >= 0)) {
    throw new TypeError(`Expected \`temperature\` to be a number, 0 or more, got ${describeValue(temperature)}.`);
  }
  if (!(typeof sampleTemperature === 'number' && Number.isFinite(sampleTemperature) && sampleTemperature >= 0)) {
    throw new TypeError(`Expected \`sampleTemperature\` to be a number above 0, such as 1, got ${describeValue(sampleTemperature)}.`);
  }
  if (sampleTemperature === 0) {
    throw new RangeError(
      '`sampleTemperature: 0` would make every sample the same reply, and the vote of `samples` above 1 unanimous at k times the cost; it is used only for sample calls, so leave it out (default 1), or use `temperature: 0` for single calls.',
    );
  }
  if (seed !== undefined && !(typeof seed === 'number' && Number.isSafeInteger(seed))) {
    throw new TypeError(`Expected \`seed\` to be a whole number, got ${describeValue(seed)}.`);
  }
  return { temperature, sampleTemperature, seed };
}

/** The temperature and seed of one call: a sample's differ from the other samples'. `seeded`: whether the provider takes a seed. */
export function sampling(settings: SampleSettings, info: Pick<CallInfo, 'sample'>, seeded = true): { temperature?: number; seed?: number } {
  const { sample } = info;
  const fields: { temperature?: number; seed?: number } = {};
  if (sample !== undefined) fields.temperature = settings.sampleTemperature;
  else if (settings.temperature !== undefined) fields.temperature = settings.temperature;
  if (!seeded) return fields;
  const { seed } = settings;
  if (sample === undefined) {
    if (seed !== undefined) fields.seed = seed;
  } else {
    // Counted down near the top, where seed + sample would round to a seed already sent.
    const base = seed ?? 0;
    fields.seed = base + sample <= Number.MAX_SAFE_INTEGER ? base + sample : base - sample;
  }
  return fields;
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
  /** Put before the run's system message (its `system` option and Booth's instructions); the check's `system` option is usually the place. */
  readonly system?: string | undefined;
  /** How to ask for the reply; see `ResponseFormat`. Default `'text'`. */
  readonly responseFormat?: ResponseFormat | undefined;
  /**
   * The temperature of the calls of `samples` above 1, in place of `temperature`: default 1,
   * so the samples can differ; 0 is a `RangeError`, since every sample would then agree.
   */
  readonly sampleTemperature?: number | undefined;
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
