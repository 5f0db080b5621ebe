/**
 * Small facts about values handed to Booth by callers, models and callbacks.
 * Everything here must cope with hostile values: getters that throw, objects from
 * other realms, `toString` that throws.
 */

export interface ErrorDescription {
  readonly name: string;
  readonly message: string;
}

/**
 * Name and message of anything thrown. An "error" is any object with a string
 * `message` (so errors from other realms count); anything else counts as an `Error`
 * whose message is `String(value)`.
 */
export function describeThrown(thrown: unknown): ErrorDescription {
  if ((typeof thrown === 'object' && thrown !== null) || typeof thrown === 'function') {
    try {
      const { message, name } = thrown as { message?: unknown; name?: unknown };
      if (typeof message === 'string') {
        return { name: typeof name === 'string' ? name : 'Error', message };
      }
    } catch {
      // A throwing getter makes it a non-error; fall through to String().
    }
  }
  return { name: 'Error', message: printable(thrown) };
}

function printable(value: unknown): string {
  try {
    return String(value);
  } catch {
    return '<unprintable value>';
  }
}

/** A thenable: an object or function with a callable `then`. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  if ((typeof value !== 'object' || value === null) && typeof value !== 'function') return false;
  try {
    return typeof (value as { then?: unknown }).then === 'function';
  } catch {
    return false;
  }
}

/**
 * Marks a thenable's rejection as handled. Booth refuses Promises in synchronous
 * places; refusing one must not leave an unhandled rejection behind.
 */
export function swallowRejection(thenable: PromiseLike<unknown>): void {
  try {
    thenable.then(undefined, () => {});
  } catch {
    // A `then` that throws cannot reject later either.
  }
}

/**
 * True for async functions and async arrows, bound or not, from any realm: their
 * prototype chain holds `AsyncFunction.prototype`, recognisable by its toStringTag.
 */
export function isAsyncFunction(value: unknown): boolean {
  if (typeof value !== 'function') return false;
  for (let proto: unknown = Object.getPrototypeOf(value); proto; proto = Object.getPrototypeOf(proto)) {
    if ((proto as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === 'AsyncFunction') return true;
  }
  return false;
}

/** A short description of a value for error messages: `1.5`, `"abc"`, `null`, `an array`. */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value.length > 60 ? `${JSON.stringify(value.slice(0, 60))}…` : JSON.stringify(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${String(value)}${typeof value === 'bigint' ? 'n' : ''}`;
    case 'undefined':
      return 'undefined';
    case 'symbol':
      return 'a symbol';
    case 'function':
      return isAsyncFunction(value) ? 'an async function' : 'a function';
    default:
      if (value === null) return 'null';
      if (Array.isArray(value)) return 'an array';
      if (isThenable(value)) return 'a Promise';
      return 'an object';
  }
}

/**
 * An answer as the traces show it: JSON, or for a schema's output JSON cannot hold (a
 * BigInt, undefined, a cycle) its description, so drawing a run never throws.
 */
export function answerText(answer: unknown): string {
  try {
    const json = JSON.stringify(answer);
    if (json !== undefined) return json;
  } catch {
    // A value JSON cannot write: described instead, below.
  }
  return describeValue(answer);
}

/** Plain objects from any realm: their prototype is null or a realm's Object.prototype. */
export function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * What a blank record inherits: nothing, so a key nobody set reads undefined and no setter
 * or read-only property an app put on `Object.prototype` is met, and `__proto__` is a plain
 * key. Not `null` itself: V8 keeps an object made with `Object.create(null)` as a dictionary,
 * several times slower to make and to read.
 */
const INHERITS_NOTHING: object = Object.freeze(Object.create(null) as object);

/** An empty record that inherits nothing (see INHERITS_NOTHING), fast to fill and to read. */
export function blankRecord<T>(): Record<string, T> {
  return Object.create(INHERITS_NOTHING) as Record<string, T>;
}

/**
 * Characters JSON.stringify lets through that a terminal acts on: the C1 controls (U+009B is a
 * CSI, as ESC [ is), the bidi marks, embeddings, overrides and isolates that reorder what
 * follows them on the line, and the line and paragraph separators.
 */
const TERMINAL_UNSAFE = /[\u0080-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** One code point (or lone surrogate) as quotedText writes it between the quotes. */
const escapedChar = (char: string): string =>
  JSON.stringify(char)
    .slice(1, -1)
    .replace(TERMINAL_UNSAFE, (unsafe) => `\\u${unsafe.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * A string from outside (Redis, a results file) as a message shows it: quoted, with every
 * control character escaped as JSON escapes it and the TERMINAL_UNSAFE ones as `\uXXXX`, so
 * nothing in it reaches the terminal as an escape or reorders the line; at most `max`
 * characters in all, a longer one cut before the escape or code point that would pass it
 * (never inside either: a surrogate pair stays whole) and ended with `…`.
 */
export function quotedText(text: string, max = 80): string {
  const pieces: string[] = [];
  let length = 2;
  // Code point by code point, stopping at the cut: a long value costs no more than a short one.
  for (const char of text) {
    const piece = escapedChar(char);
    pieces.push(piece);
    length += piece.length;
    if (length > max) {
      while (length + '…'.length > max) length -= (pieces.pop() as string).length;
      return `"${pieces.join('')}…"`;
    }
  }
  return `"${pieces.join('')}"`;
}

/** Every character `terminalText` escapes: the C0 controls (ESC, BEL, CR, LF…), DEL, and TERMINAL_UNSAFE's. */
const TERMINAL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A text from outside (a model's reply, a results file) as a terminal line shows it, unquoted
 * and whole: every C0 and C1 control, DEL, bidi mark and line separator escaped as JSON escapes
 * it (`\n`, `\u001b`), so that nothing in it moves the cursor, retitles the window, reorders the
 * line or starts a line of its own that could pass for the command's. The rest is left as it is,
 * quotes and backslashes included: a line of JSON run through it is the same JSON.
 */
export function terminalText(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (char) => {
    const json = JSON.stringify(char).slice(1, -1);
    return json.length === 2 ? json : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}
