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

/**
 * A decoded object, where it ends, and how deep it nests: `{}` and `{"a": 1}` are 1 deep,
 * `{"a": [2]}` is 2. The depth is reported rather than limited here, so that an object
 * nested inside one that is too deep is still found on its own.
 */
export type ReadResult =
  | { readonly ok: true; readonly end: number; readonly value: JsonObject; readonly depth: number }
  | { readonly ok: false };

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
  UpperA = 65,
  UpperF = 70,
  OpenBracket = 91,
  Backslash = 92,
  CloseBracket = 93,
  LowerA = 97,
  LowerF = 102,
  LowerE = 101,
  UpperE = 69,
  OpenBrace = 123,
  CloseBrace = 125,
}

/** A container being decoded: an object (with the key whose value comes next) or an array. */
interface Frame {
  readonly start: number;
  readonly object: Record<string, JsonValue> | null;
  readonly items: JsonValue[] | null;
  key: string;
  /** Depth of what the container holds so far, itself included. */
  depth: number;
}

/** Slot marks: 0 is "not read yet", a positive number n is decoded object n - 1. */
const FAILED_SLOT = -1;

export class JsonObjectReader {
  readonly #text: string;
  /**
   * What is known about each position holding a `{`, in one typed array allocated on the
   * first read: a Map would hit V8's limit of 2^24 entries on a reply of `{}{}{}…`, and
   * most braces in prose open nothing and cost one slot, not an entry.
   */
  #slots: Int32Array | null = null;
  readonly #values: JsonObject[] = [];
  readonly #ends: number[] = [];
  readonly #depths: number[] = [];
  readonly #frames: Frame[] = [];
  /** The last string, literal or number read; saves allocating a tuple per value. */
  #scalar: JsonValue = null;

  constructor(text: string) {
    this.#text = text;
  }

  /** The object a standard JSON parser reads from `start` (which holds a `{`). */
  read(start: number): ReadResult {
    const slots = (this.#slots ??= new Int32Array(this.#text.length));
    if (slots[start] === 0) {
      // One stack for every read: most braces in prose fail at once, and a fresh array each would be garbage.
      const frames = this.#frames;
      frames.length = 0;
      if (!this.#decode(start, frames, slots)) {
        for (const frame of frames) if (frame.object) slots[frame.start] = FAILED_SLOT;
      }
    }
    const slot = slots[start] ?? FAILED_SLOT;
    if (slot <= 0) return FAILED;
    return { ok: true, end: this.#ends[slot - 1]!, value: this.#values[slot - 1]!, depth: this.#depths[slot - 1]! };
  }

  /** Decodes the value at `start`; false when the text there is not standard JSON. */
  #decode(start: number, frames: Frame[], slots: Int32Array): boolean {
    const text = this.#text;
    let i = start;
    for (;;) {
      // Read one value at i, opening containers as needed.
      let value: JsonValue;
      let depth = 0;
      i = skipSpace(text, i);
      const c = text.charCodeAt(i);
      if (c === Code.OpenBrace) {
        const slot = slots[i]!;
        if (slot < 0) return false;
        if (slot > 0) {
          value = this.#values[slot - 1]!;
          depth = this.#depths[slot - 1]!;
          i = this.#ends[slot - 1]!;
        } else {
          const frame: Frame = { start: i, object: {}, items: null, key: '', depth: 1 };
          frames.push(frame);
          i = skipSpace(text, i + 1);
          if (text.charCodeAt(i) !== Code.CloseBrace) {
            i = this.#readKey(frame, i);
            if (i < 0) return false;
            continue;
          }
          i += 1;
          value = this.#close(frame, i, slots);
          depth = 1;
          frames.pop();
        }
      } else if (c === Code.OpenBracket) {
        const open = i;
        i = skipSpace(text, i + 1);
        if (text.charCodeAt(i) !== Code.CloseBracket) {
          frames.push({ start: open, object: null, items: [], key: '', depth: 1 });
          continue;
        }
        i += 1;
        value = Object.freeze([]);
        depth = 1;
      } else {
        i = c === Code.Quote ? this.#readString(i) : this.#readScalar(i);
        if (i < 0) return false;
        value = this.#scalar;
      }

      // Hand the value to the enclosing containers, closing those that end here.
      for (;;) {
        const frame = frames.at(-1);
        if (frame === undefined) return true;
        if (depth >= frame.depth) frame.depth = depth + 1;
        i = skipSpace(text, i);
        const next = text.charCodeAt(i);
        if (frame.items) {
          frame.items.push(value);
          if (next === Code.Comma) {
            i += 1;
            break;
          }
          if (next !== Code.CloseBracket) return false;
          i += 1;
          value = Object.freeze(frame.items);
        } else {
          setOwn(frame.object!, frame.key, value);
          if (next === Code.Comma) {
            i = this.#readKey(frame, skipSpace(text, i + 1));
            if (i < 0) return false;
            break;
          }
          if (next !== Code.CloseBrace) return false;
          i += 1;
          value = this.#close(frame, i, slots);
        }
        depth = frame.depth;
        frames.pop();
      }
    }
  }

  /** Reads `"key" :` at i into the frame; returns where the value starts, or -1. */
  #readKey(frame: Frame, i: number): number {
    if (this.#text.charCodeAt(i) !== Code.Quote) return -1;
    const after = this.#readString(i);
    if (after < 0) return -1;
    const colon = skipSpace(this.#text, after);
    if (this.#text.charCodeAt(colon) !== Code.Colon) return -1;
    frame.key = this.#scalar as string;
    return colon + 1;
  }

  /**
   * Reads the JSON string whose opening quote is at i into `#scalar`; returns the index
   * after it, or -1. Failures return -1 rather than throw: a reply can hold hundreds of
   * thousands of braces that open nothing, and a throw each would dominate the parse.
   */
  #readString(i: number): number {
    const text = this.#text;
    let out = '';
    let runStart = i + 1;
    for (let j = runStart; ; j += 1) {
      const c = text.charCodeAt(j);
      if (c === Code.Quote) {
        this.#scalar = out + text.slice(runStart, j);
        return j + 1;
      }
      if (c < 0x20 || Number.isNaN(c)) return -1;
      if (c !== Code.Backslash) continue;
      out += text.slice(runStart, j);
      const escape = text.charAt(j + 1);
      if (escape === 'u') {
        const hex = text.slice(j + 2, j + 6);
        if (!isHex4(hex)) return -1;
        out += String.fromCharCode(parseInt(hex, 16));
        j += 5;
      } else {
        const decoded = ESCAPES[escape];
        if (decoded === undefined) return -1;
        out += decoded;
        j += 1;
      }
      runStart = j + 1;
    }
  }

  /** Reads `true`, `false`, `null` or a number at i into `#scalar`; returns the index after it, or -1. */
  #readScalar(i: number): number {
    const text = this.#text;
    if (text.startsWith('true', i)) return this.#found(true, i + 4);
    if (text.startsWith('false', i)) return this.#found(false, i + 5);
    if (text.startsWith('null', i)) return this.#found(null, i + 4);
    const end = numberEnd(text, i);
    return end < 0 ? -1 : this.#found(Number(text.slice(i, end)), end);
  }

  #found(value: JsonValue, end: number): number {
    this.#scalar = value;
    return end;
  }

  #close(frame: Frame, end: number, slots: Int32Array): JsonObject {
    const value = Object.freeze(frame.object!);
    slots[frame.start] = this.#values.push(value);
    this.#ends.push(end);
    this.#depths.push(frame.depth);
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

function isHex4(hex: string): boolean {
  if (hex.length !== 4) return false;
  for (let k = 0; k < 4; k += 1) if (!isHexDigit(hex.charCodeAt(k))) return false;
  return true;
}

/** 0-9, A-F, a-f, spelled out: case-folding tricks such as `c | 0x20` also admit control characters. */
function isHexDigit(c: number): boolean {
  return (c >= Code.Zero && c <= Code.Nine) || (c >= Code.UpperA && c <= Code.UpperF) || (c >= Code.LowerA && c <= Code.LowerF);
}

/** End of the JSON number at i, -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?, or -1. */
function numberEnd(text: string, i: number): number {
  let j = i;
  if (text.charCodeAt(j) === Code.Minus) j += 1;
  if (text.charCodeAt(j) === Code.Zero) j += 1;
  else j = digits(text, j);
  if (j >= 0 && text.charCodeAt(j) === Code.Dot) j = digits(text, j + 1);
  const e = j >= 0 ? text.charCodeAt(j) : 0;
  if (e === Code.LowerE || e === Code.UpperE) {
    j += 1;
    const sign = text.charCodeAt(j);
    if (sign === Code.Plus || sign === Code.Minus) j += 1;
    j = digits(text, j);
  }
  return j;
}

/** End of the run of one or more ASCII digits at i, or -1 when there is none. */
function digits(text: string, i: number): number {
  let j = i;
  while (isDigit(text.charCodeAt(j))) j += 1;
  return j === i ? -1 : j;
}

export function isDigit(c: number): boolean {
  return c >= Code.Zero && c <= Code.Nine;
}
