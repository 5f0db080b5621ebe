/**
 * Reads standard JSON objects out of arbitrary model text, in time linear in its length.
 *
 * `JSON.parse` cannot read a prefix ("the object that starts here, ignore what follows"),
 * and cannot tell where each nested object started, so this is a small strict validator.
 * Every object it opens is remembered by start position, valid or failed, so no text is
 * read twice: objects nested in a valid object come from that reading, objects still open
 * where a reading failed fail too, and only a `{` that sat inside a JSON string is read
 * afresh. (A failure where a read started is remembered only when the caller may read there
 * again, or it holds objects the read opened: a caller scanning forward never meets it
 * again.) Of each object it keeps only the members under a few chosen keys, what a caller
 * needs to judge it; `build` then leaves the object itself to `JSON.parse`, once its text is
 * known to be valid, so a reply of a million rejected objects builds none of them. It never
 * recurses (deep nesting cannot overflow the stack) and never uses regular expressions on
 * model text.
 */

import { blankRecord } from '../util/values.js';

export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: JsonValue;
}

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
  Slash = 47,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  UpperA = 65,
  UpperE = 69,
  UpperF = 70,
  OpenBracket = 91,
  Backslash = 92,
  CloseBracket = 93,
  LowerA = 97,
  LowerB = 98,
  LowerE = 101,
  LowerF = 102,
  LowerN = 110,
  LowerR = 114,
  LowerT = 116,
  LowerU = 117,
  OpenBrace = 123,
  CloseBrace = 125,
}

/** What a container under a chosen key is kept as: its kind, never its content. */
const OBJECT_STAND_IN: JsonObject = Object.freeze({});
const ARRAY_STAND_IN: readonly JsonValue[] = Object.freeze([]);
/** The chosen members of an object holding none, shared by all such objects. */
export const NO_MEMBERS: JsonObject = Object.freeze({});

/**
 * The values a lone chosen member can hold without a member set. The object's row then holds
 * a code, -((key index + 1) × 5 + the value's index here), and `members` makes the set when
 * asked: a reply nesting a million objects under envelope keys keeps no million objects alive.
 */
// Stryker disable next-line ArrayDeclaration,BooleanLiteral: a value left out of the list (or every one) is kept in a member set instead, which reads the same
const LONELY_VALUES: readonly JsonValue[] = [OBJECT_STAND_IN, ARRAY_STAND_IN, true, false, null];
const lonelyKey = (code: number): number => Math.floor(-code / LONELY_VALUES.length);
const lonelyValue = (code: number): number => -code % LONELY_VALUES.length;
/**
 * A lone chosen member holding a string is a code too, below every LONELY_VALUES code:
 * -(LONE_STRINGS + the string's start × the number of keys + key index), decoded from the
 * text when asked. A reply of a million unclosed envelopes (`{"answer": "x",{"answer": …`)
 * then allocates nothing per object. V8's longest string, 2^29 - 24 code units, keeps the
 * code within int32 for up to 3 keys.
 */
const MAX_KEYS = 3;
/** Past the last LONELY_VALUES code, -(MAX_KEYS × 5 + 4). */
const LONE_STRINGS = (MAX_KEYS + 1) * LONELY_VALUES.length;
/** The value a string read for a chosen key hands on: the string itself is read only if a member set needs it. */
const STRING_STAND_IN: JsonValue = Object.freeze({});

/** Slot marks: 0 is "not read yet", a positive number n is object n - 1. */
const FAILED_SLOT = -1;
/** Positions per page of the memo, 16 KB of marks. */
const PAGE_BITS = 12;
const PAGE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE - 1;

/**
 * Records are rows of int32 fields in typed arrays (see `#grown`): a plain array costs
 * tens of nanoseconds a push once it is large, more than reading a small object. An object
 * row holds start, end (-1 while open, and for good once failed), depth and its chosen
 * members: index + 1 in `#memberSets`, 0 for none, or a lone member's code below 0 (see
 * LONELY_VALUES). An open container's frame holds only its object's id (or, for an array,
 * a number below 0) and its depth so far (itself included): a reply can open millions,
 * and few of them are objects with a chosen key. Those few have a note, on a stack of their
 * own: the container's level, the chosen key naming the value read next (index + 1, or 0)
 * and its members. An array's frame holds minus the number of arrays it stands for:
 * arrays opened back to back (`[[[`), none but the innermost holding a value yet, share one
 * frame, which tracks the innermost's depth.
 */
const ROW = 4;
const START = 0;
const MEMBERS = 3;
const OBJECT_END = 1;
const OBJECT_DEPTH = 2;
const FRAME = 2;
const FRAME_ID = 0;
const FRAME_DEPTH = 1;
const NOTE = 3;
const NOTE_LEVEL = 0;
const NOTE_KEY = 1;
const NOTE_MEMBERS = 2;

export class JsonObjectReader {
  // Stryker disable next-line StringLiteral: `reset` sets the text before any read; neither text holds a `"` or `}` for a read to find
  #text = '';
  readonly #keys: readonly string[];
  /**
   * What is known about each position holding a `{`, in typed arrays of PAGE positions
   * each: a Map would hit V8's limit of 2^24 entries on a reply of `{}{}{}…`, and most
   * braces in prose open nothing and cost one slot, not an entry. Needed only once a read
   * starts before an object already read (at a `{` inside one's string, or one a scan meets
   * after reading the reply's last line): until then the rows, in the order their objects
   * start, say all there is to know (see `#known`), and a read meets nothing known. Most
   * replies never need it, and marks for the whole of a large reply cost more to touch than
   * reading it.
   */
  #pages: Array<Int32Array | undefined> | null = null;
  /**
   * The first row starting at or after the position last asked about, while there is no
   * memo; never past the last row (`forget` pulls it back).
   */
  #cursor = 0;
  /** The text's `{` and `[`, counted when a table first grows large. */
  #openers: number | null = null;
  /**
   * Every object a read opened, by id, in the order they opened: closed, still open, or
   * failed (its end -1). Every table starts at 64 bytes or less, the most V8 keeps inside
   * the heap: a larger typed array costs a microsecond to allocate.
   */
  #objects: Int32Array = new Int32Array(ROW * 4);
  #count = 0;
  /** The containers still open, innermost last, shared by every read. */
  #frames: Int32Array = new Int32Array(FRAME * 8);
  #open = 0;
  /** The notes of the open objects that met a chosen key, innermost last. */
  #notes: Int32Array = new Int32Array(NOTE * 4);
  #noted = 0;
  // Stryker disable next-line ArrayDeclaration: `reset` empties it, and sets are found by the index `push` returns
  readonly #memberSets: Array<Record<string, JsonValue>> = [];
  /** The last string, literal or number decoded; saves allocating a tuple per value. */
  #scalar: JsonValue = null;
  /** Whether the last string read held an escape. */
  // Stryker disable next-line BooleanLiteral: every string read sets it before #chosenKey reads it
  #escaped = false;
  /** Where the last string value read starts: its member is decoded from there. */
  #stringAt = 0;

  /** `keys` name the members kept for `members`; no other value is decoded. Call `reset` with a text to read. */
  constructor(keys: readonly string[]) {
    if (keys.length > MAX_KEYS) throw new RangeError(`A JsonObjectReader keeps at most ${MAX_KEYS} keys, got ${keys.length}.`);
    this.#keys = keys;
  }

  /**
   * Starts on `text`, forgetting all about the last one, so that one reader serves every
   * reply: its tables are reused while small, and let go once grown large.
   */
  reset(text: string): void {
    this.#text = text;
    this.#pages = null;
    this.#cursor = 0;
    this.#openers = null;
    this.#count = 0;
    this.#open = 0;
    this.#noted = 0;
    this.#memberSets.length = 0;
    this.#scalar = null;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: letting a table go or keeping it only trades memory for allocations
    if (this.#objects.length > ROW * LARGE_TABLE)
      this.#objects = new Int32Array(ROW * 4);
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: letting a table go or keeping it only trades memory for allocations
    if (this.#frames.length > FRAME * LARGE_TABLE)
      this.#frames = new Int32Array(FRAME * 8);
    // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: letting a table go or keeping it only trades memory for allocations
    if (this.#notes.length > NOTE * LARGE_TABLE)
      this.#notes = new Int32Array(NOTE * 4);
  }

  /**
   * Reads the object a standard JSON parser reads from `start` (which holds a `{`) and
   * returns its id, or -1 when no object starts there. A failure at `start` itself keeps
   * its row only when the caller may read there `again`, or the read opened other objects:
   * a caller scanning forward never meets it again, and a reply of failures side by side
   * then keeps nothing.
   */
  read(start: number, again = false): number {
    // Most braces in text open nothing, and the character after them says so.
    const after = skipSpace(this.#text, start + 1);
    const next = this.#text.charCodeAt(after);
    if (next !== Code.Quote && next !== Code.CloseBrace) return -1;
    return this.#readAt(start, next === Code.CloseBrace ? after + 1 : -1, again);
  }

  /**
   * `read` past its first check, `emptyEnd` being where the object ends when it is `{}` (or
   * -1): kept apart so that the check alone is inlined into a caller's scan.
   */
  #readAt(start: number, emptyEnd: number, again: boolean): number {
    // A read that starts after every row, as a forward scan past all it has read does, meets nothing known.
    if (this.#pages !== null || (this.#count > 0 && start <= this.start(this.#count - 1))) {
      const known = this.#known(start);
      if (known !== 0) return known < 0 ? -1 : known - 1;
      // Rows stay in start order, and reads meet nothing known, only while reads start after every row.
      if (this.#pages === null) this.#memoize();
    }
    const id = this.#count;
    const sets = this.#memberSets.length;
    // Stryker disable next-line ConditionalExpression,BlockStatement: read like any other object, `{}` gets the same row
    if (emptyEnd >= 0) {
      // `{}`, which a reply can repeat millions of times: its row alone, without a read.
      const row = this.#opened(start) * ROW;
      this.#objects[row + OBJECT_END] = emptyEnd;
      this.#objects[row + OBJECT_DEPTH] = 1;
      if (again && this.#pages !== null) this.#mark(start, id + 1);
      return id;
    }
    if (!this.#decode(start)) {
      // The object a read starts at is the outermost still open.
      this.#failOpen(again ? 0 : 1);
      if (!again && this.#count === id + 1) this.#count = id;
      this.#dropMemberSets(id, sets);
      return -1;
    }
    if (again && this.#pages !== null) this.#mark(start, id + 1);
    return id;
  }

  /** What is known at position i: object n - 1 for n > 0, a failure below 0, or 0 for nothing. */
  #known(i: number): number {
    if (this.#pages !== null) return this.#slot(i);
    const objects = this.#objects;
    const count = this.#count;
    // A forward scan asks about later and later positions: the cursor moves on a row at a time.
    let row = this.#cursor;
    // Stryker disable next-line LogicalOperator: at row 0 the row before reads as undefined, and `undefined >= i` is false; past it, searching more often finds the same row
    if (row > 0 && objects[(row - 1) * ROW + START]! >= i) row = this.#firstRowFrom(i);
    while (row < count && objects[row * ROW + START]! < i) row += 1;
    this.#cursor = row;
    if (row === count || objects[row * ROW + START] !== i) return 0;
    return objects[row * ROW + OBJECT_END]! < 0 ? FAILED_SLOT : row + 1;
  }

  /** The first row starting at or after position i, by binary search: rows are in start order while there is no memo. */
  #firstRowFrom(i: number): number {
    let low = 0;
    let high = this.#count;
    // Stryker disable next-line ConditionalExpression: a search that never runs returns row 0, and #known's walk after it reaches the same row
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#objects[middle * ROW + START]! < i) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /**
   * After a failed read, lets go of the member sets of the objects it left open: no row
   * names them. A reply of a million unclosed envelopes (`{"answer": "x",{"answer": …`)
   * would otherwise keep one each, and the heap they fill costs more than the text. (Those
   * below the last set a row names stay, unused: rare, and only memory.)
   */
  // Stryker disable next-line BlockStatement: sets no row names stay, unused: only memory
  #dropMemberSets(count: number, sets: number): void {
    let kept = sets;
    for (let id = count; id < this.#count; id += 1) kept = Math.max(kept, this.#objects[id * ROW + MEMBERS]!);
    this.#memberSets.length = kept;
  }

  /** Where object `id` starts (its `{`). */
  start(id: number): number {
    return this.#objects[id * ROW + START]!;
  }

  /** Where object `id` ends (the index after its `}`). */
  end(id: number): number {
    return this.#objects[id * ROW + OBJECT_END]!;
  }

  /** How deep object `id` nests: `{}` and `{"a": 1}` are 1 deep, `{"a": [2]}` is 2. */
  depth(id: number): number {
    return this.#objects[id * ROW + OBJECT_DEPTH]!;
  }

  /**
   * Object `id`'s members under the chosen keys, the last of each name winning as in
   * `JSON.parse`; an object or array among them stands in as an empty one.
   */
  members(id: number): JsonObject {
    const set = this.#objects[id * ROW + MEMBERS]!;
    if (set >= 0) return set === 0 ? NO_MEMBERS : this.#memberSets[set - 1]!;
    return this.#lonelyMembers(set);
  }

  /**
   * Says that object `id` will never be asked about again, nor its start read again: when
   * it is the latest object, its row is reused. A scan that rejects object after object
   * (`{}{}{}…`) then keeps a few rows, not one per object: on a large reply the table's
   * fresh memory costs more than reading the text.
   */
  forget(id: number): void {
    if (id < 0 || id !== this.#count - 1) return;
    this.#count = id;
    // Stryker disable next-line ConditionalExpression,EqualityOperator: a cursor left past the last row is pulled back by #known's check of the row before it
    if (this.#cursor > id) this.#cursor = id;
    // Its id will name another object: a mark left in the memo would lie.
    if (this.#pages !== null) this.#unmark(this.start(id));
    const set = this.#objects[id * ROW + MEMBERS]!;
    if (set > 0 && set === this.#memberSets.length) this.#memberSets.pop();
  }

  /** Object `id` itself, as `JSON.parse` builds it from its text, frozen all through. */
  build(id: number): JsonObject {
    return freezeDeep(JSON.parse(this.#text.slice(this.start(id), this.end(id))) as JsonObject);
  }

  /** The memo's mark at position i: 0 while nothing is known there. */
  #slot(i: number): number {
    const page = this.#pages?.[i >>> PAGE_BITS];
    return page === undefined ? 0 : page[i & PAGE_MASK]!;
  }

  /** Makes the memo, with what the rows know: from here on, reads may start anywhere. */
  #memoize(): void {
    // Filled, so V8 keeps the page list's elements packed.
    // Stryker disable next-line ArrayDeclaration: an empty list gets its pages as they are set, and reads an unset one as undefined alike
    this.#pages = new Array<Int32Array | undefined>((this.#text.length >>> PAGE_BITS) + 1).fill(undefined);
    for (let id = 0; id < this.#count; id += 1) this.#mark(this.start(id), this.end(id) < 0 ? FAILED_SLOT : id + 1);
  }

  /** Clears the memo's mark at position i, if it has one. */
  #unmark(i: number): void {
    const page = this.#pages![i >>> PAGE_BITS];
    if (page !== undefined) page[i & PAGE_MASK] = 0;
  }

  /** Sets the memo's mark at position i. */
  #mark(i: number, mark: number): void {
    // A reply shorter than a page gets a page its own length.
    // Stryker disable next-line MethodExpression: a page longer than the text costs only memory
    const page = (this.#pages![i >>> PAGE_BITS] ??= new Int32Array(Math.min(PAGE, this.#text.length)));
    page[i & PAGE_MASK] = mark;
  }

  /**
   * A copy of a full table with more room; called only when full, so the check stays inline.
   * Small tables double. A large one gets, once, a row for every container the text holds:
   * a large typed array's pages are touched only as rows are written, so room never used
   * costs nothing, while each doubling would leave behind a copy as large as the table, fresh
   * memory that costs more to touch than the text costs to read.
   */
  #grown(table: Int32Array, row: number): Int32Array {
    const rows = table.length / row;
    // Stryker disable next-line ConditionalExpression,EqualityOperator,AssignmentOperator: doubling or taking room for every container, the table has room for the next row
    const room = rows < LARGE_TABLE ? rows * 2 : Math.max((this.#openers ??= countOpeners(this.#text)), rows * 2);
    const copy = new Int32Array(room * row);
    copy.set(table);
    return copy;
  }

  /**
   * Marks in the memo, when there is one, the objects still open where a read failed, from
   * level `from` (1 leaves out the one the read started at): each would have failed there
   * too. Their rows say so already, by having no end.
   */
  #failOpen(from: number): void {
    if (this.#pages === null) return;
    for (let row = from * FRAME; row < this.#open * FRAME; row += FRAME) {
      const id = this.#frames[row + FRAME_ID]!;
      if (id >= 0) this.#mark(this.start(id), FAILED_SLOT);
    }
  }

  /** Reads the value at `start`; false when the text there is not standard JSON. */
  #decode(start: number): boolean {
    const text = this.#text;
    this.#open = 0;
    this.#noted = 0;
    let i = start;
    for (;;) {
      // Read one value at i, opening containers as needed.
      let value: JsonValue;
      let depth = 0;
      i = skipSpace(text, i);
      const c = text.charCodeAt(i);
      if (c === Code.OpenBrace || c === Code.OpenBracket) {
        value = c === Code.OpenBrace ? OBJECT_STAND_IN : ARRAY_STAND_IN;
        // Only an object's `{` ever holds a mark, so an array's slot reads 0.
        const slot = this.#slot(i);
        if (slot < 0) return false;
        if (slot > 0) {
          depth = this.depth(slot - 1);
          i = this.end(slot - 1);
        } else if (c === Code.OpenBracket && text.charCodeAt(i - 1) === Code.OpenBracket) {
          // Right after its `[`, the innermost array holds nothing yet: this one joins its row.
          const row = (this.#open - 1) * FRAME;
          this.#frames[row + FRAME_ID] = this.#frames[row + FRAME_ID]! - 1;
          i = skipSpace(text, i + 1);
          if (text.charCodeAt(i) !== Code.CloseBracket) continue;
          i += 1;
          depth = 1;
          this.#close(i);
        } else {
          const level = this.#open++;
          const row = level * FRAME;
          let frames = this.#frames;
          if (row === frames.length) frames = this.#frames = this.#grown(frames, FRAME);
          // Stryker disable next-line ArithmeticOperator: FRAME_ID is 0
          frames[row + FRAME_ID] = c === Code.OpenBrace ? this.#opened(i) : -1;
          frames[row + FRAME_DEPTH] = 1;
          i = skipSpace(text, i + 1);
          // `}` and `]` each come two code units after their opener.
          if (text.charCodeAt(i) !== c + 2) {
            if (c === Code.OpenBrace && (i = this.#readKey(i, level)) < 0) return false;
            continue;
          }
          i += 1;
          depth = 1;
          this.#close(i);
        }
      } else {
        if (c === Code.Quote) {
          this.#stringAt = i;
          // Stryker disable next-line BooleanLiteral: decoding the string into #scalar, which a string value never reads, changes nothing
          i = this.#readString(i, false);
          value = STRING_STAND_IN;
        } else {
          i = this.#readScalar(i, this.#keyOf(this.#open - 1) > 0);
          value = this.#scalar;
        }
        if (i < 0) return false;
      }

      // Hand the value to the enclosing containers, closing those that end here.
      for (;;) {
        if (this.#open === 0) return true;
        const frames = this.#frames;
        const level = this.#open - 1;
        const row = level * FRAME;
        if (depth >= frames[row + FRAME_DEPTH]!) frames[row + FRAME_DEPTH] = depth + 1;
        const key = this.#keyOf(level);
        if (key > 0) this.#keep(key, value);
        i = skipSpace(text, i);
        const next = text.charCodeAt(i);
        // Stryker disable next-line ArithmeticOperator: FRAME_ID is 0
        const opener = frames[row + FRAME_ID]! >= 0 ? Code.OpenBrace : Code.OpenBracket;
        if (next === Code.Comma) {
          i = opener === Code.OpenBrace ? this.#readKey(skipSpace(text, i + 1), level) : i + 1;
          if (i < 0) return false;
          break;
        }
        if (next !== opener + 2) return false;
        i += 1;
        depth = frames[row + FRAME_DEPTH]!;
        value = opener === Code.OpenBrace ? OBJECT_STAND_IN : ARRAY_STAND_IN;
        this.#close(i);
      }
    }
  }

  /** The row of the note of the container open at `level`, or -1 when it has none: only the innermost note can be its. */
  #noteOf(level: number): number {
    const row = (this.#noted - 1) * NOTE;
    // Stryker disable next-line ArithmeticOperator: NOTE_LEVEL is 0
    return row >= 0 && this.#notes[row + NOTE_LEVEL] === level ? row : -1;
  }

  /** The chosen key naming the value read next in the container open at `level` (index + 1), or 0. */
  #keyOf(level: number): number {
    const note = this.#noteOf(level);
    return note < 0 ? 0 : this.#notes[note + NOTE_KEY]!;
  }

  /** Sets chosen member `key` (index + 1) of the innermost open container, an object whose note names it. */
  #keep(key: number, value: JsonValue): void {
    const note = (this.#noted - 1) * NOTE;
    let set = this.#notes[note + NOTE_MEMBERS]!;
    // Stryker disable next-line BlockStatement: a lone member's code only saves memory; the member set made below holds the same member
    if (set === 0 || (set < 0 && this.#loneKey(set) === key)) {
      // Stryker disable next-line BlockStatement: a lone member's code only saves memory; the member set made below holds the same member
      if (value === STRING_STAND_IN) {
        this.#notes[note + NOTE_MEMBERS] = -(LONE_STRINGS + this.#stringAt * MAX_KEYS + key - 1);
        return;
      }
      const lonely = LONELY_VALUES.indexOf(value);
      // Stryker disable next-line BlockStatement: a lone member's code only saves memory; the member set made below holds the same member
      if (lonely >= 0) {
        this.#notes[note + NOTE_MEMBERS] = -(key * LONELY_VALUES.length + lonely);
        return;
      }
    }
    if (set <= 0) {
      const members = set < 0 ? this.#lonelyMembers(set) : blankRecord<JsonValue>();
      set = this.#notes[note + NOTE_MEMBERS] = this.#memberSets.push(members);
    }
    this.#memberSets[set - 1]![this.#keys[key - 1]!] = value === STRING_STAND_IN ? this.#stringFrom(this.#stringAt) : value;
  }

  /** The key (index + 1) of a lone member's code. */
  #loneKey(code: number): number {
    return code > -LONE_STRINGS ? lonelyKey(code) : ((-code - LONE_STRINGS) % MAX_KEYS) + 1;
  }

  /** The member set a lone member's code stands for. */
  #lonelyMembers(code: number): Record<string, JsonValue> {
    const members = blankRecord<JsonValue>();
    members[this.#keys[this.#loneKey(code) - 1]!] =
      code > -LONE_STRINGS ? LONELY_VALUES[lonelyValue(code)]! : this.#stringFrom(Math.floor((-code - LONE_STRINGS) / MAX_KEYS));
    return members;
  }

  /** The JSON string whose opening quote is at i, already checked, decoded. */
  #stringFrom(i: number): string {
    this.#readString(i, true);
    return this.#scalar as string;
  }

  /** Reads `"key" :` at i for the object open at `level`; returns where the value starts, or -1. */
  #readKey(i: number, level: number): number {
    const text = this.#text;
    if (text.charCodeAt(i) !== Code.Quote) return -1;
    // Stryker disable next-line BooleanLiteral: a key decoded into #scalar is decoded again by #chosenKey before it is read
    const after = this.#readString(i, false);
    if (after < 0) return -1;
    const colon = skipSpace(text, after);
    if (text.charCodeAt(colon) !== Code.Colon) return -1;
    const key = this.#chosenKey(i, after);
    const note = this.#noteOf(level);
    if (note >= 0) this.#notes[note + NOTE_KEY] = key;
    else if (key > 0) {
      const row = this.#noted++ * NOTE;
      let notes = this.#notes;
      if (row === notes.length) notes = this.#notes = this.#grown(notes, NOTE);
      // Stryker disable next-line ArithmeticOperator: NOTE_LEVEL is 0
      notes[row + NOTE_LEVEL] = level;
      notes[row + NOTE_KEY] = key;
      notes[row + NOTE_MEMBERS] = 0;
    }
    return colon + 1;
  }

  /** Index + 1 in the chosen keys of the key string from i to `after`, or 0. */
  #chosenKey(i: number, after: number): number {
    const keys = this.#keys;
    if (this.#escaped) {
      this.#readString(i, true);
      return keys.indexOf(this.#scalar as string) + 1;
    }
    for (let k = 0; k < keys.length; k += 1) {
      const key = keys[k]!;
      if (key.length === after - i - 2 && this.#text.startsWith(key, i + 1)) return k + 1;
    }
    return 0;
  }

  /** Checks the JSON string whose opening quote is at i, decoding it into `#scalar` when `kept`; returns the index after it, or -1. */
  #readString(i: number, kept: boolean): number {
    const text = this.#text;
    const found = stringEnd(text, i);
    if (found === -1) return -1;
    const end = Math.abs(found);
    this.#escaped = found < 0;
    // Checked above, so JSON.parse cannot throw, and decodes escapes exactly as it would in place.
    if (kept) this.#scalar = found < 0 ? (JSON.parse(text.slice(i, end)) as string) : text.slice(i + 1, end - 1);
    return end;
  }

  /** Reads `true`, `false`, `null` or a number at i, into `#scalar` when `kept`; returns the index after it, or -1. */
  #readScalar(i: number, kept: boolean): number {
    const text = this.#text;
    const end = scalarEnd(text, i);
    // Stryker disable next-line LogicalOperator: a scalar decoded when not kept, or from a failed read, is never read
    if (end >= 0 && kept) {
      const c = text.charCodeAt(i);
      this.#scalar = c === Code.LowerT ? true : c === Code.LowerF ? false : c === Code.LowerN ? null : Number(text.slice(i, end));
    }
    return end;
  }

  /**
   * The row of an object opening at `start`, made when it opens so that rows are in the
   * order objects start: until it closes it has no end, which is what a failed object keeps.
   */
  #opened(start: number): number {
    const id = this.#count++;
    const row = id * ROW;
    let objects = this.#objects;
    if (row === objects.length) objects = this.#objects = this.#grown(objects, ROW);
    // Stryker disable next-line ArithmeticOperator: START is 0
    objects[row + START] = start;
    objects[row + OBJECT_END] = -1;
    objects[row + MEMBERS] = 0;
    return id;
  }

  /** Closes the innermost open container, which ends at `end`, completing its row if it is an object. */
  #close(end: number): void {
    const level = this.#open - 1;
    const frame = level * FRAME;
    // Stryker disable next-line ArithmeticOperator: FRAME_ID is 0
    const id = this.#frames[frame + FRAME_ID]!;
    if (id < -1) {
      // The innermost of arrays sharing a row: the next one out holds it, and nothing else yet.
      this.#frames[frame + FRAME_ID] = id + 1;
      this.#frames[frame + FRAME_DEPTH] = 1;
      return;
    }
    this.#open = level;
    if (id < 0) return;
    const note = this.#noteOf(level);
    if (note >= 0) this.#noted -= 1;
    const row = id * ROW;
    const objects = this.#objects;
    objects[row + OBJECT_END] = end;
    objects[row + OBJECT_DEPTH] = this.#frames[frame + FRAME_DEPTH]!;
    if (note >= 0) objects[row + MEMBERS] = this.#notes[note + NOTE_MEMBERS]!;
    // The object the read started at (frame 0) is the caller's by its id: `read` marks it if asked to.
    if (frame > 0 && this.#pages !== null) this.#mark(objects[row + START]!, id + 1);
  }
}

/** Past this many rows a table stops doubling and takes the room the whole text can need. */
const LARGE_TABLE = 4_096;

/** How many `{` and `[` the text holds: no more containers can be open at once, nor objects be kept. */
function countOpeners(text: string): number {
  let count = 0;
  // Stryker disable next-line ConditionalExpression,EqualityOperator,BlockStatement: the count only sizes a large table's growth, never below doubling it (see #grown)
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,AssignmentOperator: the count only sizes a large table's growth, never below doubling it (see #grown)
    if (c === Code.OpenBrace || c === Code.OpenBracket) count += 1;
  }
  return count;
}

/** Containers waiting for `freezeDeep`, shared by every call: a freeze calls no code that could start another. */
// Stryker disable next-line ArrayDeclaration: a string left in the list freezes as itself and holds nothing more to freeze
const unfrozen: object[] = [];

/**
 * Freezes a value and everything in it, without recursing, so callbacks cannot change
 * what was decided on. Made for what `JSON.parse` builds: arrays without holes or extra
 * keys. `for…in` rather than `Object.values`: no array is made per object, which is most
 * of the cost for a small envelope.
 */
export function freezeDeep<T extends JsonObject>(value: T): T {
  let item: object = value;
  for (;;) {
    Object.freeze(item);
    if (Array.isArray(item)) {
      for (let k = 0; k < item.length; k += 1) keepUnfrozen(item[k]);
    } else {
      for (const key in item) if (Object.hasOwn(item, key)) keepUnfrozen((item as JsonObject)[key]);
    }
    const next = unfrozen.pop();
    if (next === undefined) return value;
    item = next;
  }
}

function keepUnfrozen(child: JsonValue | undefined): void {
  if (typeof child === 'object' && child !== null) unfrozen.push(child);
}

/** Which container each level of `isObjectText`'s scan is in, reused by every call. */
let openers = new Uint8Array(64);

/**
 * Whether `text` from `start` to `end` is exactly one standard JSON object nesting at most
 * `maxDepth` deep: then `JSON.parse` of that slice cannot throw, nor build a value deeper
 * than the limit. One pass that allocates nothing, for the common reply that is its own
 * envelope; a false answer says nothing about the objects inside.
 */
export function isObjectText(text: string, start: number, end: number, maxDepth: number): boolean {
  if (text.charCodeAt(start) !== Code.OpenBrace) return false;
  let depth = 0;
  let i = start;
  for (;;) {
    i = skipSpace(text, i);
    const c = text.charCodeAt(i);
    if (c === Code.OpenBrace || c === Code.OpenBracket) {
      if (depth === maxDepth) return false;
      if (depth === openers.length) {
        const wider = new Uint8Array(depth * 2);
        wider.set(openers);
        openers = wider;
      }
      openers[depth++] = c;
      i = skipSpace(text, i + 1);
      if (text.charCodeAt(i) !== c + 2) {
        if (c === Code.OpenBrace && (i = keyEnd(text, i)) < 0) return false;
        continue;
      }
      i += 1;
      depth -= 1;
    } else {
      const found = c === Code.Quote ? stringEnd(text, i) : scalarEnd(text, i);
      if (found === -1) return false;
      i = Math.abs(found);
    }
    for (;;) {
      if (depth === 0) return i === end;
      i = skipSpace(text, i);
      const next = text.charCodeAt(i);
      const opener = openers[depth - 1]!;
      if (next === Code.Comma) {
        i = opener === Code.OpenBrace ? keyEnd(text, skipSpace(text, i + 1)) : i + 1;
        if (i < 0) return false;
        break;
      }
      if (next !== opener + 2) return false;
      i += 1;
      depth -= 1;
    }
  }
}

/** Where the value after `"key" :` at i starts, or -1. */
function keyEnd(text: string, i: number): number {
  if (text.charCodeAt(i) !== Code.Quote) return -1;
  const after = stringEnd(text, i);
  if (after === -1) return -1;
  const colon = skipSpace(text, Math.abs(after));
  return text.charCodeAt(colon) === Code.Colon ? colon + 1 : -1;
}

/**
 * End of the JSON string whose opening quote is at i: the index after its closing quote,
 * negated when the string holds an escape, or -1 when it is not a valid string. Failures
 * return -1 rather than throw: a reply can hold hundreds of thousands of braces that open
 * nothing, and a throw each would dominate the parse.
 */
function stringEnd(text: string, i: number): number {
  // Stryker disable next-line BooleanLiteral: a string without escapes said to hold one is decoded by JSON.parse instead of sliced, to the same value
  let escaped = false;
  for (let j = i + 1; j < text.length; j += 1) {
    const c = text.charCodeAt(j);
    // Most characters are letters or above ASCII, and past every character checked below.
    if (c > Code.Backslash) continue;
    if (c === Code.Quote) return escaped ? -(j + 1) : j + 1;
    if (c < 0x20) return -1;
    if (c === Code.Backslash) {
      escaped = true;
      j += 1;
      const escape = text.charCodeAt(j);
      if (escape === Code.LowerU) {
        if (!isHex4(text, j + 1)) return -1;
        j += 4;
      } else if (!isSimpleEscape(escape)) {
        return -1;
      }
    }
  }
  return -1;
}

/** End of `true`, `false`, `null` or the number at i, or -1. */
function scalarEnd(text: string, i: number): number {
  // One look at the first character: trying each literal in turn costs more than the number.
  switch (text.charCodeAt(i)) {
    case Code.LowerT:
      return text.startsWith('true', i) ? i + 4 : -1;
    case Code.LowerF:
      return text.startsWith('false', i) ? i + 5 : -1;
    case Code.LowerN:
      return text.startsWith('null', i) ? i + 4 : -1;
  }
  return numberEnd(text, i);
}

/** The characters JSON allows after a backslash, `u` aside: `" \\ / b f n r t`. */
function isSimpleEscape(c: number): boolean {
  return (
    c === Code.Quote ||
    c === Code.Backslash ||
    c === Code.Slash ||
    c === Code.LowerB ||
    c === Code.LowerF ||
    c === Code.LowerN ||
    c === Code.LowerR ||
    c === Code.LowerT
  );
}

function skipSpace(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== Code.Space && c !== Code.LineFeed && c !== Code.Return && c !== Code.Tab) return i;
    i += 1;
  }
}

function isHex4(text: string, at: number): boolean {
  for (let k = at; k < at + 4; k += 1) if (!isHexDigit(text.charCodeAt(k))) return false;
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
