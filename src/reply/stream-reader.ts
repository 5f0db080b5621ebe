import { asText, MAX_DEPTH, readAmbiguous } from './parse.js';
import type { JsonValue } from './json-objects.js';

/**
 * Reads a reply as it arrives, for what can be known before it ends: whether the model
 * called the question ambiguous, its readings, the answer so far, and an answer member of a
 * type the schema cannot accept. The verdict on the finished reply is never this reader's:
 * the machine reads the whole text with `parseReply`, as for a reply that did not stream.
 *
 * Only the object the reply begins with is read (after blanks, or a ```` ```json ```` fence
 * line, 64 characters at most): the envelope Booth asks for. A reply that opens with anything else, or whose
 * leading object breaks JSON's grammar, repeats a member, or nests deeper than `MAX_DEPTH`,
 * tells nothing early and is read whole at its end. Every code unit is looked at once, and
 * only the members read early are copied: linear in the reply's length, whatever the
 * chunks' sizes (one character, half a surrogate pair, half an escape).
 */

/** A JSON value's type, as JSON Schema names it. */
export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';

/** What the answer's schema says of types, as far as a member can be judged alone. */
export interface AnswerRule {
  /** The answer's own type(s); null when the schema does not say. */
  readonly type: readonly JsonType[] | null;
  /** For an object answer, the types of the members the schema types. */
  readonly members: ReadonlyMap<string, readonly JsonType[]>;
}

/** A completed answer member whose type the schema does not accept. */
export interface MemberFailure {
  /** The member's key in the answer object; null for the answer itself. */
  readonly key: string | null;
  readonly expected: readonly JsonType[];
  readonly got: JsonType;
  /** The member's value, as complete: what the schema is asked of before the attempt fails. */
  readonly value: JsonValue;
}

/** What the last `push()` made known, as bits. */
export const AMBIGUITY_KNOWN = 1;
export const READINGS_COMPLETE = 2;
export const MEMBER_FAILED = 4;
export const ANSWER_GREW = 8;

// Where the reader is.
const LEAD = 0;
const OBJECT = 1;
const CLOSED = 2;
const NONE = 3;

// What the innermost container expects next.
const KEY_OR_END = 0;
const KEY = 1;
const COLON = 2;
const VALUE = 3;
const COMMA_OR_END = 4;
const ITEM_OR_END = 5;
const ITEM = 6;
const ITEM_COMMA_OR_END = 7;

/** Longest text before the leading object's `{`: blanks and a fence line. */
const LEAD_LIMIT = 64;
const FENCE_LINE = /^\s*(?:```json[ \t]*\r?\n\s*)?$/i;
/** Every beginning of a text `FENCE_LINE` accepts. */
const LEAD_SO_FAR = /^\s*(?:`(?:`(?:`(?:j(?:s(?:o(?:n(?:[ \t]*(?:\r?(?:\n\s*)?)?)?)?)?)?)?)?)?)?$/i;

/** Copies one value (or key) of the text: the chunks' pieces, appended as they pass. */
class Capture {
  text = '';
  /** Where it began in the chunk being read; 0 for one begun in an earlier chunk. */
  from = -1;
  begin(at: number): void {
    this.text = '';
    this.from = at;
  }
  /** Ends it before `at` in `chunk`; returns the whole text. */
  end(chunk: string, at: number): string {
    const text = this.text + chunk.slice(this.from, at);
    this.from = -1;
    this.text = '';
    return text;
  }
  get active(): boolean {
    return this.from >= 0;
  }
  carry(chunk: string): void {
    if (this.from < 0) return;
    this.text += chunk.slice(this.from);
    this.from = 0;
  }
}

export class ReplyReader {
  readonly #rule: AnswerRule | null;
  #phase = LEAD;
  #lead = '';
  #text = '';
  #length = 0;
  /** The containers open, innermost last: true for an object. */
  readonly #stack: boolean[] = [];
  #expect = KEY_OR_END;
  #inString = false;
  /** 0 outside an escape; 1 after `\`; 2 to 5 while reading `\u`'s hex digits. */
  #escape = 0;
  #inScalar = false;
  /** The envelope's member whose value is being read, once its key is known. */
  #member: string | null = null;
  readonly #seen = new Set<string>();
  /** Whether the value being read at depth 1 is the answer, a string, decoded as it arrives. */
  #answerString = false;
  /** An escape begun in an earlier chunk, not yet decoded. */
  #pending = '';
  /** The answer member being read inside an object answer. */
  #innerKey: string | null = null;

  readonly #key = new Capture();
  readonly #value = new Capture();
  readonly #innerKeyText = new Capture();
  readonly #inner = new Capture();
  /** The answer string's piece in this chunk starts here; -1 when not inside it. */
  #answerFrom = -1;
  /** Where the answer's value began, in code units from the reply's start; -1 when not inside it. */
  #answerStart = -1;
  /** Where the code unit being read is, from the reply's start: where the reading stops if it gives up. */
  #cursor = 0;

  ambiguous: boolean | null = null;
  interpretations: readonly string[] | null = null;
  /** The answer so far: a string decoded; any other value as its JSON text so far. Null until it begins. */
  answerSoFar: string | null = null;
  failure: MemberFailure | null = null;
  /** Where the leading object ended, in UTF-16 code units from the reply's start; -1 while open or when none. */
  leadEnd = -1;

  constructor(rule: AnswerRule | null = null) {
    this.#rule = rule;
  }

  /** The reply so far. */
  get text(): string {
    return this.#text;
  }

  /** Reads one more chunk; returns what it made known, as bits. */
  push(chunk: string): number {
    const offset = this.#length;
    this.#text += chunk;
    this.#length += chunk.length;
    if (this.#phase === CLOSED || this.#phase === NONE) return 0;
    let changed = 0;
    let at = 0;
    if (this.#phase === LEAD) {
      const open = chunk.indexOf('{');
      if (open < 0) {
        this.#lead += chunk;
        if (this.#lead.length > LEAD_LIMIT || !LEAD_SO_FAR.test(this.#lead)) this.#give();
        return 0;
      }
      // The limit holds however the lead was cut: 100 blanks and the `{` in one chunk tell as little as in one-character chunks.
      if (this.#lead.length + open > LEAD_LIMIT || !FENCE_LINE.test(this.#lead + chunk.slice(0, open))) return this.#give();
      this.#lead = '';
      this.#phase = OBJECT;
      this.#stack.push(true);
      this.#expect = KEY_OR_END;
      at = open + 1;
    }
    changed = this.#scan(chunk, at, offset);
    // An escape found broken at the chunk's end stops the reading there.
    this.#cursor = offset + chunk.length;
    if (this.#phase === OBJECT) {
      this.#key.carry(chunk);
      this.#value.carry(chunk);
      this.#innerKeyText.carry(chunk);
      this.#inner.carry(chunk);
      if (this.#answerFrom >= 0) {
        changed |= this.#decode(chunk, this.#answerFrom, chunk.length);
        this.#answerFrom = 0;
      } else if (this.#member === 'answer' && this.#value.active && !this.#answerString) {
        this.answerSoFar = this.#value.text;
        changed |= ANSWER_GREW;
      }
    }
    return changed;
  }

  #give(): number {
    this.#phase = NONE;
    this.#lead = '';
    return this.#answerStart >= 0 ? this.#settleAnswer(this.#cursor) : 0;
  }

  /**
   * The reading stopped at `end` inside the answer: `answerSoFar` is what was read of it
   * before there, however the chunks fell (the last push would otherwise leave what it had
   * carried from earlier chunks only). A string answer keeps what decodes: its complete,
   * valid escapes before the first broken one or control character.
   */
  #settleAnswer(end: number): number {
    const text = this.#text.slice(this.#answerStart, end);
    this.#answerStart = -1;
    const answer = text.charCodeAt(0) === QUOTE ? (JSON.parse(`"${decodable(text, 1)}"`) as string) : text;
    if (answer === this.answerSoFar) return 0;
    this.answerSoFar = answer;
    return ANSWER_GREW;
  }

  #scan(chunk: string, from: number, offset: number): number {
    let changed = 0;
    const stack = this.#stack;
    for (let at = from; at < chunk.length; at += 1) {
      this.#cursor = offset + at;
      const c = chunk.charCodeAt(at);
      if (this.#inString) {
        if (this.#escape === 0) {
          if (c === QUOTE) {
            this.#inString = false;
            changed |= this.#endString(chunk, at);
            if (this.#phase === NONE) return changed;
          } else if (c === BACKSLASH) this.#escape = 1;
          else if (c < 0x20) return changed | this.#give();
        } else if (this.#escape === 1) {
          this.#escape = c === U ? 2 : 0;
        } else if (++this.#escape === 6) this.#escape = 0;
        continue;
      }
      if (this.#inScalar) {
        if (isScalarChar(c)) continue;
        this.#inScalar = false;
        changed |= this.#endValue(chunk, at);
        if (this.#phase === NONE) return changed;
      }
      if (c === SPACE || c === TAB || c === LF || c === CR) continue;
      switch (this.#expect) {
        case KEY_OR_END:
        case KEY:
          if (c === QUOTE) {
            this.#inString = true;
            if (stack.length === 1) this.#key.begin(at);
            else if (this.#innerAt()) this.#innerKeyText.begin(at);
          } else if (c === CLOSE_BRACE && this.#expect === KEY_OR_END) changed |= this.#close(chunk, at, offset);
          else return changed | this.#give();
          break;
        case COLON:
          if (c !== COLON_CHAR) return changed | this.#give();
          this.#expect = VALUE;
          break;
        case VALUE:
        case ITEM_OR_END:
        case ITEM:
          if (c === CLOSE_BRACKET && this.#expect === ITEM_OR_END) {
            changed |= this.#close(chunk, at, offset);
            break;
          }
          changed |= this.#startValue(chunk, at, c);
          if (this.#phase === NONE) return changed;
          break;
        case COMMA_OR_END:
        case ITEM_COMMA_OR_END: {
          const inObject = this.#expect === COMMA_OR_END;
          if (c === COMMA) this.#expect = inObject ? KEY : ITEM;
          else if (c === (inObject ? CLOSE_BRACE : CLOSE_BRACKET)) changed |= this.#close(chunk, at, offset);
          else return changed | this.#give();
          break;
        }
      }
      if (this.#phase !== OBJECT) return changed;
    }
    return changed;
  }

  /** Whether the innermost container is the object answer, whose members are judged. */
  #innerAt(): boolean {
    return this.#stack.length === 2 && this.#member === 'answer' && this.#rule !== null && this.#rule.members.size > 0;
  }

  #startValue(chunk: string, at: number, c: number): number {
    const stack = this.#stack;
    const depth = stack.length;
    if (depth === 1) this.#value.begin(at);
    else if (depth === 2 && this.#innerKey !== null) this.#inner.begin(at);
    if (c === QUOTE) {
      this.#inString = true;
      if (depth === 1 && this.#member === 'answer') {
        this.#answerStart = this.#cursor;
        this.#answerString = true;
        this.answerSoFar = '';
        this.#answerFrom = at + 1;
        return ANSWER_GREW;
      }
      return 0;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth >= MAX_DEPTH) return this.#give();
      if (depth === 1 && this.#member === 'answer') this.#answerStart = this.#cursor;
      stack.push(c === OPEN_BRACE);
      this.#expect = c === OPEN_BRACE ? KEY_OR_END : ITEM_OR_END;
      return 0;
    }
    if (isScalarChar(c)) {
      if (depth === 1 && this.#member === 'answer') this.#answerStart = this.#cursor;
      this.#inScalar = true;
      return 0;
    }
    return this.#give();
  }

  #endString(chunk: string, at: number): number {
    const depth = this.#stack.length;
    const inObject = this.#stack[depth - 1]!;
    const expect = this.#expect;
    if (inObject && (expect === KEY_OR_END || expect === KEY)) {
      this.#expect = COLON;
      if (depth === 1) {
        const key = parsed(this.#key.end(chunk, at + 1));
        if (typeof key !== 'string' || this.#seen.has(key)) return this.#give();
        this.#seen.add(key);
        this.#member = key;
      } else if (this.#innerKeyText.active) {
        const key = parsed(this.#innerKeyText.end(chunk, at + 1));
        this.#innerKey = typeof key === 'string' ? key : null;
      }
      return 0;
    }
    let changed = 0;
    if (this.#answerString && depth === 1) {
      changed = this.#decode(chunk, this.#answerFrom, at);
      this.#answerFrom = -1;
      this.#answerString = false;
      if (this.#phase === NONE) return changed;
    }
    return changed | this.#endValue(chunk, at + 1);
  }

  /** Decodes the answer string's piece `[from, to)` of `chunk`, an escape cut by the chunk's end kept for the next. */
  #decode(chunk: string, from: number, to: number): number {
    let piece = this.#pending + chunk.slice(from, to);
    this.#pending = '';
    // An escape still open at the end (`\`, `\u12`) waits for the rest of it.
    const slash = piece.lastIndexOf('\\');
    if (slash >= 0 && this.#inString && isOpenEscape(piece, slash)) {
      this.#pending = piece.slice(slash);
      piece = piece.slice(0, slash);
    }
    if (piece === '') return 0;
    const decoded = parsed(`"${piece}"`);
    if (typeof decoded !== 'string') return this.#give();
    this.answerSoFar += decoded;
    return ANSWER_GREW;
  }

  /** A value just ended before `end` (a scalar's next character, a string's closing quote or a container's bracket, past it). */
  #endValue(chunk: string, end: number): number {
    const depth = this.#stack.length;
    this.#expect = this.#stack[depth - 1] ? COMMA_OR_END : ITEM_COMMA_OR_END;
    if (depth === 2 && this.#inner.active) {
      const key = this.#innerKey;
      const value = parsed(this.#inner.end(chunk, end));
      this.#innerKey = null;
      if (value === undefined) return this.#give();
      const expected = key === null ? undefined : this.#rule!.members.get(key);
      if (expected !== undefined && this.failure === null && !accepts(expected, value)) {
        this.failure = { key, expected, got: typeOf(value), value };
        return MEMBER_FAILED;
      }
      return 0;
    }
    if (depth !== 1) return 0;
    const text = this.#value.end(chunk, end);
    const value = parsed(text);
    if (value === undefined) return this.#give();
    const member = this.#member;
    this.#member = null;
    switch (member) {
      case 'ambiguous': {
        const ambiguous = readAmbiguous(value);
        if (ambiguous === undefined) return this.#give();
        this.ambiguous = ambiguous;
        return AMBIGUITY_KNOWN;
      }
      case 'interpretations':
        this.interpretations = Object.freeze(Array.isArray(value) ? value.map(asText) : []);
        return READINGS_COMPLETE;
      case 'answer': {
        this.#answerStart = -1;
        const type = this.#rule?.type;
        if (typeof value !== 'string') this.answerSoFar = text;
        if (type && this.failure === null && !accepts(type, value)) {
          this.failure = { key: null, expected: type, got: typeOf(value), value };
          return MEMBER_FAILED | ANSWER_GREW;
        }
        return ANSWER_GREW;
      }
      default:
        return 0;
    }
  }

  #close(chunk: string, at: number, offset: number): number {
    this.#stack.pop();
    if (this.#stack.length === 0) {
      this.#phase = CLOSED;
      this.leadEnd = offset + at + 1;
      return 0;
    }
    return this.#endValue(chunk, at + 1);
  }
}

/** The longest piece of a string's text from `from` that holds only characters and valid escapes: `JSON.parse` decodes it. */
function decodable(text: string, from: number): string {
  let at = from;
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c < 0x20 || c === QUOTE) break;
    if (c !== BACKSLASH) at += 1;
    else if (SIMPLE_ESCAPES.includes(text.charCodeAt(at + 1))) at += 2;
    else if (text.charCodeAt(at + 1) === U && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) at += 6;
    else break;
  }
  return text.slice(from, at);
}

/** `"`, `\`, `/`, `b`, `f`, `n`, `r`, `t`: what may follow a backslash, besides `u`. */
const SIMPLE_ESCAPES = [34, 92, 47, 98, 102, 110, 114, 116];

/** Whether the backslash at `slash` begins an escape `piece` does not finish. */
function isOpenEscape(piece: string, slash: number): boolean {
  // An even run of backslashes ending at `slash` is escaped backslashes, all closed.
  let run = 0;
  for (let i = slash; i >= 0 && piece.charCodeAt(i) === BACKSLASH; i -= 1) run += 1;
  if (run % 2 === 0) return false;
  const rest = piece.length - slash - 1;
  return rest === 0 || (piece.charCodeAt(slash + 1) === U && rest < 5);
}

function parsed(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

export function typeOf(value: JsonValue): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : (type as JsonType);
}

function accepts(expected: readonly JsonType[], value: JsonValue): boolean {
  const got = typeOf(value);
  return expected.includes(got) || (got === 'integer' && expected.includes('number'));
}

function isScalarChar(c: number): boolean {
  // Digits, letters, `+`, `-`, `.`: a number or a literal; JSON.parse judges the run once it ends.
  return (c >= 48 && c <= 57) || (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 43 || c === 45 || c === 46;
}

const QUOTE = 34;
const BACKSLASH = 92;
const U = 117;
const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;
const COLON_CHAR = 58;
const COMMA = 44;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;
