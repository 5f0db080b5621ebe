/**
 * Reads standard JSON objects out of arbitrary model text, in time linear in its length.
 *
 * `JSON.parse` cannot read a prefix ("the object that starts here, ignore what follows"),
 * and cannot tell where each nested object started, so this is a small strict decoder.
 * Every object it opens is remembered by start position, decoded or failed, so no text
 * is decoded twice: objects nested in a decoded object come from that decode, objects
 * still open where a decode failed fail too, and only a `{` that sat inside a JSON
 * string is read afresh. It never recurses (deep nesting cannot overflow the stack)
 * and never uses regular expressions on model text.
 */

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

export type ReadResult = { readonly ok: true; readonly end: number; readonly value: JsonObject } | { readonly ok: false };

const FAILED: ReadResult = { ok: false };

const enum Code {
  Tab = 9,
  LineFeed = 10,
  Return = 13,
  Space = 32,
  Quote = 34,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  OpenBracket = 91,
  Backslash = 92,
  CloseBracket = 93,
  LowerE = 101,
  UpperE = 69,
  OpenBrace = 123,
  CloseBrace = 125,
}

interface ObjectFrame {
  readonly start: number;
  readonly object: Record<string, JsonValue>;
  key: string;
}
type Frame = ObjectFrame | JsonValue[];

/** Thrown internally when the text at hand is not standard JSON. */
class NotJson {}
const NOT_JSON = new NotJson();

export class JsonObjectReader {
  readonly #text: string;
  readonly #known = new Map<number, ReadResult>();

  constructor(text: string) {
    this.#text = text;
  }

  /** The object a standard JSON parser reads from `start` (which holds a `{`). */
  read(start: number): ReadResult {
    const known = this.#known.get(start);
    if (known) return known;
    const frames: Frame[] = [];
    try {
      this.#decode(start, frames);
    } catch (error) {
      if (error !== NOT_JSON) throw error;
      for (const frame of frames) if (!Array.isArray(frame)) this.#known.set(frame.start, FAILED);
    }
    return this.#known.get(start) ?? FAILED;
  }

  #decode(start: number, frames: Frame[]): void {
    const text = this.#text;
    let i = start;
    for (;;) {
      // Read one value at i, opening containers as needed.
      let value: JsonValue;
      i = skipSpace(text, i);
      const c = text.charCodeAt(i);
      if (c === Code.OpenBrace) {
        const known = this.#known.get(i);
        if (known) {
          if (!known.ok) throw NOT_JSON;
          value = known.value;
          i = known.end;
        } else {
          const frame: ObjectFrame = { start: i, object: {}, key: '' };
          frames.push(frame);
          i = skipSpace(text, i + 1);
          if (text.charCodeAt(i) !== Code.CloseBrace) {
            i = this.#readKey(frame, i);
            continue;
          }
          i += 1;
          value = this.#close(frame, i);
          frames.pop();
        }
      } else if (c === Code.OpenBracket) {
        i = skipSpace(text, i + 1);
        if (text.charCodeAt(i) !== Code.CloseBracket) {
          frames.push([]);
          continue;
        }
        i += 1;
        value = Object.freeze([]);
      } else if (c === Code.Quote) {
        [value, i] = readString(text, i);
      } else {
        [value, i] = readScalar(text, i);
      }

      // Hand the value to the enclosing containers, closing those that end here.
      for (;;) {
        const frame = frames.at(-1);
        if (frame === undefined) return;
        i = skipSpace(text, i);
        const next = text.charCodeAt(i);
        if (Array.isArray(frame)) {
          frame.push(value);
          if (next === Code.Comma) {
            i += 1;
            break;
          }
          if (next !== Code.CloseBracket) throw NOT_JSON;
          i += 1;
          value = Object.freeze(frame);
        } else {
          setOwn(frame.object, frame.key, value);
          if (next === Code.Comma) {
            i = this.#readKey(frame, skipSpace(text, i + 1));
            break;
          }
          if (next !== Code.CloseBrace) throw NOT_JSON;
          i += 1;
          value = this.#close(frame, i);
        }
        frames.pop();
      }
    }
  }

  /** Reads `"key" :` at i into the frame; returns where the value starts. */
  #readKey(frame: ObjectFrame, i: number): number {
    if (this.#text.charCodeAt(i) !== Code.Quote) throw NOT_JSON;
    const [key, after] = readString(this.#text, i);
    const colon = skipSpace(this.#text, after);
    if (this.#text.charCodeAt(colon) !== Code.Colon) throw NOT_JSON;
    frame.key = key;
    return colon + 1;
  }

  #close(frame: ObjectFrame, end: number): JsonObject {
    const value = Object.freeze(frame.object);
    this.#known.set(frame.start, { ok: true, end, value });
    return value;
  }
}

/**
 * Like `JSON.parse`, a `"__proto__"` key becomes a plain own property: plain assignment
 * would call the inherited setter and replace the object's prototype.
 */
function setOwn(object: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

function skipSpace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== Code.Space && c !== Code.LineFeed && c !== Code.Return && c !== Code.Tab) return i;
    i += 1;
  }
}

const ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** Reads the JSON string whose opening quote is at i; returns it and the index after it. */
function readString(text: string, i: number): [string, number] {
  let out = '';
  let runStart = i + 1;
  for (let j = runStart; ; j += 1) {
    const c = text.charCodeAt(j);
    if (c === Code.Quote) return [out + text.slice(runStart, j), j + 1];
    if (c < 0x20 || Number.isNaN(c)) throw NOT_JSON;
    if (c !== Code.Backslash) continue;
    out += text.slice(runStart, j);
    const escape = text.charAt(j + 1);
    if (escape === 'u') {
      const hex = text.slice(j + 2, j + 6);
      if (!isHex4(hex)) throw NOT_JSON;
      out += String.fromCharCode(parseInt(hex, 16));
      j += 5;
    } else {
      const decoded = ESCAPES[escape];
      if (decoded === undefined) throw NOT_JSON;
      out += decoded;
      j += 1;
    }
    runStart = j + 1;
  }
}

function isHex4(hex: string): boolean {
  if (hex.length !== 4) return false;
  for (let k = 0; k < 4; k += 1) {
    const c = hex.charCodeAt(k) | 0x20; // lower-cases A-F
    if (!((c >= Code.Zero && c <= Code.Nine) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}

/** Reads `true`, `false`, `null` or a number at i. */
function readScalar(text: string, i: number): [JsonValue, number] {
  if (text.startsWith('true', i)) return [true, i + 4];
  if (text.startsWith('false', i)) return [false, i + 5];
  if (text.startsWith('null', i)) return [null, i + 4];
  const end = numberEnd(text, i);
  return [Number(text.slice(i, end)), end];
}

/** End of the JSON number at i: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
function numberEnd(text: string, i: number): number {
  let j = i;
  if (text.charCodeAt(j) === Code.Minus) j += 1;
  if (text.charCodeAt(j) === Code.Zero) j += 1;
  else j = digits(text, j);
  if (text.charCodeAt(j) === Code.Dot) j = digits(text, j + 1);
  const e = text.charCodeAt(j);
  if (e === Code.LowerE || e === Code.UpperE) {
    j += 1;
    const sign = text.charCodeAt(j);
    if (sign === Code.Plus || sign === Code.Minus) j += 1;
    j = digits(text, j);
  }
  return j;
}

/** End of the run of one or more ASCII digits at i. */
function digits(text: string, i: number): number {
  let j = i;
  while (isDigit(text.charCodeAt(j))) j += 1;
  if (j === i) throw NOT_JSON;
  return j;
}

export function isDigit(c: number): boolean {
  return c >= Code.Zero && c <= Code.Nine;
}
