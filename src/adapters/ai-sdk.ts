import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import type { JsonSchema } from '../decide/schema.js';
import { readShape } from '../options/read-options.js';
import { describeValue } from '../util/values.js';
import { type AdapterOptions, readResponseFormat, readSampleSettings, readSystem, REPLY_NAME, reportTokens, sampling, systemAndTurns, TEXT_REPLY } from './request.js';

/** `fromAISDK()`: the Vercel AI SDK's `generateText` or `generateObject`, with any of its providers. */

/**
 * The Vercel AI SDK's token counts: `inputTokens` and `outputTokens` from version 5 on,
 * `promptTokens` and `completionTokens` before; `totalTokens` in both.
 */
export interface AISDKUsageLike {
  readonly inputTokens?: number | undefined;
  readonly outputTokens?: number | undefined;
  readonly promptTokens?: number | undefined;
  readonly completionTokens?: number | undefined;
  readonly totalTokens?: number | undefined;
}

/** What Booth sends either function of the Vercel AI SDK: the chat, and how to sample it. */
export interface AISDKCallLike<TModel> {
  model: TModel;
  system?: string | undefined;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  temperature?: number | undefined;
  seed?: number | undefined;
  abortSignal?: AbortSignal | undefined;
}

/** The Vercel AI SDK's `generateText`, as much of it as Booth uses. */
export type GenerateTextLike<TModel> = (options: AISDKCallLike<TModel>) => PromiseLike<{ text: string; usage?: AISDKUsageLike | undefined }>;

/** The Vercel AI SDK's `generateObject`, as much of it as Booth uses. */
export type GenerateObjectLike<TModel, TSchema> = (options: AISDKCallLike<TModel> & {
  output?: 'no-schema' | undefined;
  schema?: TSchema | undefined;
  schemaName?: string | undefined;
}) => PromiseLike<{ object: unknown; usage?: AISDKUsageLike | undefined }>;

/** Options of `fromAISDK`: `generateObject` and `jsonSchema` (both from `ai`) are needed for JSON output only. */
export interface AISDKOptions<TModel, TSchema> extends AdapterOptions {
  readonly generateText: GenerateTextLike<TModel>;
  readonly model: TModel;
  readonly generateObject?: GenerateObjectLike<TModel, TSchema> | undefined;
  /** The SDK's `jsonSchema()`, which wraps a plain JSON Schema for `generateObject`. */
  readonly jsonSchema?: ((schema: JsonSchema) => TSchema) | undefined;
  /** The temperature of every call but a sample's. */
  readonly temperature?: number | undefined;
  /** The SDK's `seed`; a sample's call is sent `seed + sample` (from 0 without one). */
  readonly seed?: number | undefined;
}

const OPTION_KEYS = ['generateText', 'model', 'generateObject', 'jsonSchema', 'system', 'responseFormat', 'temperature', 'sampleTemperature', 'seed'] as const;

/**
 * A `callFn` over the Vercel AI SDK. With `responseFormat` `'json_object'` or
 * `'json_schema'` it calls the SDK's object output, `generateObject` (without a schema, or
 * with the envelope's), and the object, as JSON text, is the reply.
 *
 * @example
 * import { generateObject, generateText, jsonSchema } from 'ai';
 * const callFn = fromAISDK({ generateText, generateObject, jsonSchema, model: openai('gpt-4o-mini'), responseFormat: 'json_schema' });
 */
export function fromAISDK<TModel, TSchema = unknown>(options: AISDKOptions<TModel, TSchema>): AsyncCallFn {
  const given = readShape(options, OPTION_KEYS, '`fromAISDK()` options', 'fromAISDK');
  const { generateText, generateObject, jsonSchema, model } = given as Partial<AISDKOptions<TModel, TSchema>>;
  if (typeof generateText !== 'function') {
    throw new TypeError(`Expected \`generateText\` to be the AI SDK's generateText (import { generateText } from 'ai'), got ${describeValue(generateText)}.`);
  }
  const system = readSystem(given['system']);
  const responseFormat = readResponseFormat(given['responseFormat']);
  const samples = readSampleSettings(given);
  if (responseFormat !== 'text' && typeof generateObject !== 'function') {
    throw new TypeError(`\`responseFormat: '${responseFormat}'\` needs the SDK's object output: pass \`generateObject\` (from 'ai') too.`);
  }
  if (responseFormat === 'json_schema' && typeof jsonSchema !== 'function') {
    throw new TypeError("`responseFormat: 'json_schema'` needs the SDK's `jsonSchema` helper (from 'ai') to wrap the envelope's schema: pass `jsonSchema` too.");
  }
  const shared = (prompt: string, info: CallInfo): AISDKCallLike<TModel> => {
    const chat = systemAndTurns(system, prompt, info);
    return { model: model as TModel, ...(chat.system === undefined ? {} : { system: chat.system }), messages: chat.turns, ...sampling(samples, info), abortSignal: info.signal };
  };
  if (responseFormat === 'text') {
    return async (prompt, info) => {
      const { text, usage } = await generateText(shared(prompt, info));
      reportAISDKUsage(info, usage);
      return text;
    };
  }
  return async (prompt, info) => {
    const request =
      responseFormat === 'json_schema'
        ? { ...shared(prompt, info), schema: jsonSchema!(info.replySchema ?? TEXT_REPLY), schemaName: REPLY_NAME }
        : { ...shared(prompt, info), output: 'no-schema' as const };
    let generated: { object: unknown; usage?: AISDKUsageLike | undefined };
    try {
      generated = await generateObject!(request);
    } catch (error) {
      // The SDK's NoObjectGeneratedError carries the usage of the reply it could not read as
      // an object: the call failed, but the provider still counted its tokens.
      reportAISDKUsage(info, (error as { usage?: unknown } | null)?.usage);
      throw error;
    }
    reportAISDKUsage(info, generated.usage);
    return JSON.stringify(generated.object);
  };
}

/** The SDK's counts as it gives them, whichever version's names they have. */
function reportAISDKUsage(info: CallInfo, usage: unknown): void {
  const { inputTokens, outputTokens, promptTokens, completionTokens, totalTokens } = (usage ?? {}) as Record<string, unknown>;
  // Version 4 counts NaN when the provider said nothing; not being a count, it reports nothing.
  reportTokens(info, inputTokens ?? promptTokens, outputTokens ?? completionTokens, totalTokens);
}
