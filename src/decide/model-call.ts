import type { ChatMessage } from './prompts.js';
import type { JsonSchema } from './schema.js';
import type { UsageReport } from './usage.js';
import type { ReplyStream } from '../reply/reply-streams.js';

export type { ReplyStream };

/** The model call as Booth sees it: the prompt in, the raw text out, and what the call is told besides. */

/** What `callFn` learns about the call besides the prompt. */
export interface CallInfo {
  /** Index of the attempt, from 0. */
  readonly attempt: number;
  /**
   * `acheck()` gives every call one: it fires when the caller's `signal` does, and when Booth
   * stops waiting for the call (it timed out, the deadline passed, a streamed reply decided
   * early, another sample settled the vote). Abort the request when it fires.
   */
  readonly signal?: AbortSignal;
  /**
   * The JSON Schema (draft 2020-12) of the reply Booth asks for: the envelope, with the
   * answer's schema inside when there is one. For a provider's structured output; the
   * adapters send it when asked to (`responseFormat: 'json_schema'`). Booth always gives
   * it; a callFn called by other code may not get it.
   */
  readonly replySchema?: JsonSchema;
  /** With `samples` above 1: which of the attempt's samples this call is, from 0; vary temperature or seed by it. */
  readonly sample?: number;
  /**
   * The caller's question as given, without Booth's instructions or retry paragraphs: the
   * key for a cache of answers. Booth always gives it; a callFn called by other code may not get it.
   */
  readonly question?: string;
  /**
   * The whole chat to send, for a chat API: a system message holding the application's
   * `system` prompt followed by Booth's instructions (the same for every question and retry,
   * so providers' prompt caching applies), the earlier `messages`, then the user turn with
   * the question (and, on a retry, why the last attempt failed). The adapters send it. Booth
   * always gives it; a callFn called by other code may not get it.
   */
  readonly messages?: readonly ChatMessage[];
  /**
   * Tell Booth what this call consumed, usually straight from the provider's reply (the
   * adapters do): the attempt's and the result's `usage` add it up, failed calls included.
   * A report that is not whole, non-negative token counts throws a `TypeError`, which fails
   * the call. Booth always gives it; a callFn called by other code may not get it.
   */
  readonly reportUsage?: (usage: UsageReport) => void;
}

/** A synchronous model call for `check()`: prompt in, raw model text out. */
export type CallFn = (prompt: string, info: CallInfo) => string;

/** A model call for `acheck()`: returns the raw model text, or a stream of it (`ReplyStream`), or a Promise of either. */
export type AsyncCallFn = (prompt: string, info: CallInfo) => string | ReplyStream | PromiseLike<string | ReplyStream>;
