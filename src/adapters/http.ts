import { redactUrls } from '../util/urls.js';
import { describeValue } from '../util/values.js';

/** The HTTP side of the adapters: headers, the request with its failures explained, `ProviderError`, `Retry-After`. */

/** Most of a provider's body an error keeps, in UTF-16 code units. */
const BODY_LIMIT = 4096;

/** Most of a provider's own explanation (`error.message`) a message quotes. */
const EXPLANATION_LIMIT = 300;

/**
 * An HTTP error from a model provider, or a reply Booth could not read: what `callRetries`
 * needs to decide and to wait.
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  /** The HTTP status; 200 for a successful response whose body is not a chat completion. */
  readonly status: number;
  /** How long the provider asked us to wait (`retry-after-ms` or `retry-after`); null when it did not say. */
  readonly retryAfterMs: number | null;
  /**
   * The response body as the provider sent it (its first 4 096 characters), for debugging;
   * null when the error did not come with one. Never part of `message`: a body can hold the
   * model's reply, or echo the prompt, and the message goes into results, logs and spans.
   */
  readonly body: string | null;

  constructor(status: number, message: string, retryAfterMs: number | null, options?: { cause?: unknown; body?: string | null }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.retryAfterMs = retryAfterMs;
    this.body = options?.body === undefined || options.body === null ? null : options.body.slice(0, BODY_LIMIT);
  }
}

/**
 * The request's headers, checked once: a value fetch() cannot send would fail every call
 * with an error quoting it, and the value may be the key. The message names the header, never its value.
 */
export function readHeaders(apiKey: unknown, headers: unknown): Record<string, string> {
  if (apiKey !== undefined && typeof apiKey !== 'string') {
    throw new TypeError(`Expected \`apiKey\` to be a string, got ${describeValue(apiKey)}.`);
  }
  if (headers !== undefined && (typeof headers !== 'object' || headers === null || Array.isArray(headers))) {
    throw new TypeError(`Expected \`headers\` to be an object of header names and values, got ${describeValue(headers)}.`);
  }
  const all: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) {
    sendable('`apiKey`', 'authorization', `Bearer ${apiKey}`);
    all['authorization'] = `Bearer ${apiKey}`;
  }
  for (const [name, value] of Object.entries((headers ?? {}) as Record<string, unknown>)) {
    const what = `\`headers[${JSON.stringify(name)}]\``;
    if (typeof value !== 'string') throw new TypeError(`Expected ${what} to be a string, got ${describeValue(value)}.`);
    sendable(what, name, value);
    all[name] = value;
  }
  return all;
}

function sendable(what: string, name: string, value: string): void {
  try {
    new Headers([[name, value]]);
  } catch {
    throw new TypeError(
      `Expected ${what} to be a valid HTTP header: a token for its name, and for its value no line breaks or control characters and only Latin-1 characters (the value is not shown: it may be a key).`,
    );
  }
}

/**
 * `fetch`, with its network failures made readable: undici's bare "fetch failed" becomes
 * `POST <url> failed: connect ECONNREFUSED 127.0.0.1:1`, the cause kept as `cause`. An
 * abort is passed on unchanged, so Booth still tells a timeout from an outage.
 */
export async function reach(url: string, shown: string, init: RequestInit, signal: AbortSignal | undefined): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (signal?.aborted || (error as { name?: unknown } | null)?.name === 'AbortError') throw error;
    const cause = (error as { cause?: unknown } | null)?.cause;
    if (cause === undefined) throw error;
    throw new TypeError(`POST ${shown} failed: ${redactUrls(causeText(cause))}`, { cause: error });
  }
}

/** `connect ECONNREFUSED 127.0.0.1:1`; for several addresses tried (an AggregateError), each of them. */
function causeText(cause: unknown): string {
  const inner = (cause as { errors?: unknown } | null)?.errors;
  if (Array.isArray(inner) && inner.length > 0) return [...new Set(inner.map(causeText))].join('; ');
  const message = (cause as { message?: unknown } | null)?.message;
  const code = (cause as { code?: unknown } | null)?.code;
  const text = typeof message === 'string' && message !== '' ? message : String(cause);
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

/**
 * The provider's own explanation of an HTTP error, from `{ "error": { "message" } }`,
 * `{ "error": "…" }` or `{ "message": "…" }`, cut to 300 characters; null when the body has
 * none. The rest of the body stays out of the message (it is the error's `body`): a server
 * may echo the request, prompt included, in an error page or a validation error.
 */
export function providerExplanation(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown } | null;
    const error = parsed?.error;
    const message = typeof error === 'string' ? error : (error?.message ?? parsed?.message);
    if (typeof message === 'string' && message.trim() !== '') return cut(message.trim(), EXPLANATION_LIMIT);
  } catch {
    // Not JSON: no explanation the message could quote without quoting the body.
  }
  return null;
}

/** The first `limit` code units of `text`, a surrogate pair never split, `…` when cut. */
export function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const end = /[\uD800-\uDBFF]/.test(text[limit - 1]!) ? limit - 1 : limit;
  return `${text.slice(0, end)}…`;
}

/** `retry-after-ms` (milliseconds), else `retry-after` (seconds, or an HTTP date). */
export function retryAfter(headers: { get(name: string): string | null }): number | null {
  const ms = Number(headers.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}
