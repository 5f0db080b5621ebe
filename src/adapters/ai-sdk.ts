import type { AsyncCallFn, CallInfo } from '../decide/model-call.js';
import type { JsonSchema } from '../decide/schema.js';
import { type AdapterOptions, readResponseFormat, readSystem, REPLY_NAME, reportTokens, TEXT_REPLY } from './request.js';

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

/** The Vercel AI SDK's `generateText`, as much of it as Booth uses. */
export type GenerateTextLike<TModel> = (options: {
  model: TModel;
  prompt: string;
  system?: string | undefined;
  abortSignal?: AbortSignal | undefined;
}) => PromiseLike<{ text: string; usage?: AISDKUsageLike | undefined }>;

/** The Vercel AI SDK's `generateObject`, as much of it as Booth uses. */
export type GenerateObjectLike<TModel, TSchema> = (options: {
  model: TModel;
  prompt: string;
  system?: string | undefined;
  abortSignal?: AbortSignal | undefined;
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
}

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
  const { generateText, generateObject, jsonSchema, model } = options;
  const system = readSystem(options.system);
  const responseFormat = readResponseFormat(options.responseFormat);
  if (responseFormat !== 'text' && typeof generateObject !== 'function') {
    throw new TypeError(`\`responseFormat: '${responseFormat}'\` needs the SDK's object output: pass \`generateObject\` (from 'ai') too.`);
  }
  if (responseFormat === 'json_schema' && typeof jsonSchema !== 'function') {
    throw new TypeError("`responseFormat: 'json_schema'` needs the SDK's `jsonSchema` helper (from 'ai') to wrap the envelope's schema: pass `jsonSchema` too.");
  }
  const shared = (prompt: string, info: CallInfo) => ({ model, prompt, ...(system === undefined ? {} : { system }), abortSignal: info.signal });
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
