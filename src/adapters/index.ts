/**
 * One line from the model clients people already use to a Booth `callFn`. No SDK is a
 * dependency: each adapter is typed by the shape it uses, so you bring your own version.
 * Each reports, through `info.reportUsage`, the tokens its provider says the call consumed.
 */
export { type AISDKOptions, type AISDKStreamLike, type AISDKStreamPartLike, type AISDKUsageLike, fromAISDK, type GenerateObjectLike, type GenerateTextLike, type StreamTextLike } from './ai-sdk.js';
export { type AnthropicClientLike, type AnthropicTextBlock, fromAnthropic } from './anthropic.js';
export { ProviderError, retryAfter } from './http.js';
export { fromOpenAI, type OpenAIClientLike } from './openai.js';
export { openAICompatible, type OpenAICompatibleOptions } from './openai-compatible.js';
export type { AdapterOptions, ResponseFormat } from './request.js';
