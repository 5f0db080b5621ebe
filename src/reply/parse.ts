import { freezeDeep, isDigit, isObjectText, type JsonObject, JsonObjectReader, type JsonValue, NO_MEMBERS } from './json-objects.js';

/** What one model reply says, once a JSON object in it passed every rule. */
export interface Reading<TAnswer extends JsonValue = string> {
  readonly ok: true;
  /** `String()` of the model's string, number or boolean; with `anyAnswer`, any JSON value but null, as written. */
  readonly answer: TAnswer;
  readonly confidence: number;
  readonly ambiguous: boolean;
  readonly interpretations: readonly string[];
  readonly chosenInterpretation: string | null;
  /** The decoded object as the model wrote it, extra keys included. */
  readonly parsed: JsonObject;
}

export interface Unreadable {
  readonly ok: false;
  readonly error: string;
}

export const NO_OBJECT_ERROR = 'no JSON object was found in the reply';
export const EMPTY_REPLY_ERROR = 'the reply was empty';

/**
 * How deep a candidate may nest (RFC 8259 §9 lets a reader set the limit). Deeper objects
 * are rejected, never decoded into results: `JSON.stringify`, XState's snapshot
 * persistence and most code that walks JSON recurse, and would overflow the stack on a
 * reply built to be deep. An envelope nested inside a deep object is still found.
 */
export const MAX_DEPTH = 512;

/** Longest reply, in UTF-16 code units, tried as its own envelope before any other reading. */
const FAST_PATH_LIMIT = 65_536;

/**
 * Finds the model's JSON object in a reply. Candidates, first acceptable wins: the whole
 * trimmed reply; its last non-empty line; the objects that start inside a ```` ```json ````
 * fence; then every other object, each group in order of where its objects start (outer
 * before inner). Models echo the format example before their answer: the answer is what
 * they end on, or what they fence. An object with an `answer` or `confidence` key that
 * breaks a rule is the model's envelope gone wrong, so nothing nested inside it is tried in
 * its place: that would be an example or a draft (a wrapper such as `{"result": {…}}` has
 * neither key, and its envelope is still found). On failure the error is the reason the
 * first object so tried was rejected, since that is normally the reply's own envelope. With
 * `anyAnswer` (a schema judges the answer), `answer` may also be an object or array, and
 * may be empty.
 */
export function parseReply(text: string): Reading | Unreadable;
export function parseReply(text: string, anyAnswer: boolean): Reading<JsonValue> | Unreadable;
export function parseReply(text: string, anyAnswer = false): Reading<JsonValue> | Unreadable {
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  if (start >= end) return reject(EMPTY_REPLY_ERROR);
  // Most replies are their own envelope: one check, one JSON.parse, nothing else built.
  // Any other verdict takes the full path, which decides exactly as if this were not here.
  // A large reply skips it: when its envelope is rejected, building it was wasted.
  // Stryker disable next-line ConditionalExpression,EqualityOperator,ArithmeticOperator: the size limit only decides which path gives the same verdict
  const small = end - start <= FAST_PATH_LIMIT;
  // Stryker disable next-line ConditionalExpression,BlockStatement: skipping the fast path leaves the reply to the full path, which gives the same verdict
  if (small && isObjectText(text, start, end, MAX_DEPTH)) {
    const object = JSON.parse(text.slice(start, end)) as JsonObject;
    // Stryker disable next-line ConditionalExpression: never taking the fast path's verdict leaves it to the full path, which gives the same one
    if (brokenRule(object, anyAnswer) === undefined) return readEnvelope(freezeDeep(object), anyAnswer);
  }
  // Stryker disable next-line ConditionalExpression,StringLiteral: a reply without `{` gives the scan no candidate either; indexOf only settles it sooner
  if (text.indexOf('{', start) < 0) return reject(NO_OBJECT_ERROR);
  return candidates.find(text, start, end, anyAnswer);
}

/**
 * Reads the model's text the caller's own way (`parseFn`), e.g. a provider's native response
 * format: returns the envelope object, or throws saying why the text holds none.
 */
export type ParseFn = (text: string) => object;

/**
 * The reading of an object a `parseFn` made, by the rules a reply's object is judged by.
 * `object` is plain JSON data already (a copy the caller cannot change): no depth check.
 */
export function readObject(object: JsonObject, anyAnswer = false): Reading<JsonValue> | Unreadable {
  const broken = brokenRule(object, anyAnswer);
  return broken === undefined ? readEnvelope(freezeDeep(object), anyAnswer) : reject(broken(object));
}

/** A reply's candidates, judged in turn. Methods rather than closures, which cost an allocation each per reply. */
class Candidates {
  // Stryker disable next-line StringLiteral: find() sets the text before any read
  #text = '';
  #end = 0;
  readonly #reader = new JsonObjectReader(ENVELOPE_KEYS);
  // Stryker disable next-line BooleanLiteral: find() sets it before any read
  #anyAnswer = false;
  /** Only the first rejection is ever reported, so its message is written once, at the end. */
  // Stryker disable next-line UnaryOperator: find() resets it before any read
  #firstRejected = -1;
  /** The first rejected object inside a fence: reported before the last line and the rest, as it is tried before them. */
  // Stryker disable next-line UnaryOperator: find() resets it before any read
  #firstFencedRejected = -1;
  /** Whether the object `#consider` last rejected has an `answer` or `confidence` key. */
  // Stryker disable next-line BooleanLiteral: #consider sets it before #scan reads it
  #envelopeRejected = false;
  /** The insides of the reply's ```` ```json ```` fences, as [from, to) pairs in order; reused, as the instance is. */
  readonly #fences: number[] = [];

  find(text: string, start: number, end: number, anyAnswer: boolean): Reading<JsonValue> | Unreadable {
    this.#text = text;
    this.#end = end;
    this.#anyAnswer = anyAnswer;
    this.#firstRejected = -1;
    this.#firstFencedRejected = -1;
    this.#reader.reset(text);
    try {
      return this.#scan(start);
    } finally {
      // Keeps no reply alive between calls.
      // Stryker disable next-line StringLiteral: any text the next find() replaces is as good; only letting go of the reply matters
      this.#text = '';
      this.#fences.length = 0;
      // Stryker disable next-line StringLiteral: as above, the next find() resets the reader with its own reply
      this.#reader.reset('');
    }
  }

  #scan(start: number): Reading<JsonValue> | Unreadable {
    const text = this.#text;
    const end = this.#end;
    const fences = this.#fences;
    // Stryker disable next-line ConditionalExpression,StringLiteral: a reply without three backticks has no fence for the search to find; indexOf only settles it sooner
    if (text.indexOf('```', start) >= 0) jsonFences(text, start, end, fences);
    // An unfenced object that passes waits for the scan to see the fences after it.
    let kept: Reading<JsonValue> | undefined;
    let earlyRejected = false;
    // Stryker disable next-line ConditionalExpression: a whole-span candidate must end at the reply's end, which #wholeSpan checks; this only skips reading it
    if (text.charCodeAt(end - 1) === CLOSE_BRACE) {
      const found = this.#wholeSpan(start) ?? this.#wholeSpan(lastLineStart(text, start, end));
      if (found) return found;
      // The whole reply and the last line are the first candidates judged, so any rejection so far is theirs.
      earlyRejected = this.#firstRejected >= 0;
    }
    let fence = 0;
    // A loop, not indexOf: a reply can be mostly braces, and a call per brace costs more.
    // Stryker disable next-line EqualityOperator: the character at `end` is trailing whitespace or past the text, never a `{`
    for (let at = start; at < end; at += 1) {
      // A whole-span candidate met again is known to the reader, and rejected again, as before.
      if (text.charCodeAt(at) !== OPEN_BRACE) continue;
      while (fence < fences.length && fences[fence + 1]! <= at) fence += 2;
      const fenced = fence < fences.length && fences[fence]! <= at;
      const id = this.#reader.read(at);
      const verdict = this.#consider(id, fenced);
      if (verdict) {
        if (fenced) return verdict;
        kept ??= verdict;
        if (fence === fences.length) return kept;
        // Only a fenced object can still win, and none nested in this one: it is tried first, and passes.
        at = this.#reader.end(id) - 1;
      } else if (this.#envelopeRejected) {
        at = this.#reader.end(id) - 1;
      }
      // Only later positions are read from here on; the rejections that may be reported are kept.
      if (id !== this.#firstRejected && id !== this.#firstFencedRejected) this.#reader.forget(id);
    }
    if (kept) return kept;
    const reported = earlyRejected || this.#firstFencedRejected < 0 ? this.#firstRejected : this.#firstFencedRejected;
    return reject(reported < 0 ? NO_OBJECT_ERROR : rejection(this.#reader, reported, this.#anyAnswer));
  }

  #consider(id: number, fenced = false): Reading<JsonValue> | undefined {
    this.#envelopeRejected = false;
    // Stryker disable next-line ConditionalExpression: object -1 has no members and no depth, so the test below rejects it, and -1 leaves the first rejection unset
    if (id < 0) return undefined;
    const reader = this.#reader;
    // Most objects in a long reply hold no envelope member at all: rejected without a look.
    const members = reader.members(id);
    if (members !== NO_MEMBERS && reader.depth(id) <= MAX_DEPTH && brokenRule(members, this.#anyAnswer) === undefined) {
      return readEnvelope(reader.build(id), this.#anyAnswer);
    }
    if (this.#firstRejected < 0) this.#firstRejected = id;
    if (fenced && this.#firstFencedRejected < 0) this.#firstFencedRejected = id;
    this.#envelopeRejected = members !== NO_MEMBERS && (Object.hasOwn(members, 'answer') || Object.hasOwn(members, 'confidence'));
    return undefined;
  }

  /** The object spanning `from` to the end of the reply, as a candidate. */
  #wholeSpan(from: number): Reading<JsonValue> | undefined {
    // Stryker disable next-line ConditionalExpression: no object read from a position without `{` ends where the reply ends
    if (this.#text.charCodeAt(from) !== OPEN_BRACE) return undefined;
    // The scan meets this position again.
    // Stryker disable next-line BooleanLiteral: without `again` a failed read there is read afresh by the scan and fails alike; `again` only spares that
    const id = this.#reader.read(from, true);
    // Stryker disable next-line ConditionalExpression: object -1 has no end, so the test below rejects it as well
    if (id < 0) return undefined;
    if (this.#reader.end(id) !== this.#end) return undefined;
    return this.#consider(id);
  }
}

/** The only members the rules look at, so the only ones decoded from a candidate before it passes. */
const ENVELOPE_KEYS = ['answer', 'confidence', 'ambiguous'];

/**
 * The one instance, for every reply. Made anew per reply, its class's hidden class dies
 * with the last instance in a full GC that reduces memory (`gc()`, memory pressure), and
 * V8 throws away the optimized code of every method checking for it: the next large reply
 * then started unoptimized, which cost a 2 MB reply up to half its time. Sharing it is safe
 * because no app code runs mid-read, so nothing can call `parseReply` again: member sets
 * inherit nothing, and only the accepted object's reading, the last step, can meet a
 * patched built-in.
 */
const candidates = new Candidates();

/** Why object `id` of the reader was rejected. */
function rejection(reader: JsonObjectReader, id: number, anyAnswer: boolean): string {
  const depth = reader.depth(id);
  if (depth > MAX_DEPTH) return `the JSON object nests ${depth} levels deep; Booth reads objects at most ${MAX_DEPTH} deep`;
  const members = reader.members(id);
  return brokenRule(members, anyAnswer)!(members);
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

const BACKTICK = 96;

/**
 * Puts into `into` the insides of the reply's ```` ```json ```` fences, as [from, to) pairs.
 * Runs of three or more backticks pair up in order, opening and closing fences, so the
 * closing fence of a ```` ```python ```` block never opens one; a fence counts when its
 * info string is `json` in any case (``` ```jsonc ``` is another language), and one left
 * open is no fence. Linear: every backtick run is met once.
 */
function jsonFences(text: string, start: number, end: number, into: number[]): void {
  for (let open = text.indexOf('```', start); open >= 0 && open < end; ) {
    const info = skipBlanks(text, pastBackticks(text, open));
    const close = text.indexOf('```', info);
    if (close < 0 || close >= end) return;
    // Stryker disable next-line ArithmeticOperator: the four characters before the tag are backticks or blanks, never a `{`, so starting there adds no object
    if (isJsonTag(text, info)) into.push(info + 4, close);
    open = text.indexOf('```', pastBackticks(text, close));
  }
}

function pastBackticks(text: string, at: number): number {
  while (text.charCodeAt(at) === BACKTICK) at += 1;
  return at;
}

function skipBlanks(text: string, at: number): number {
  while (text.charCodeAt(at) === 32 || text.charCodeAt(at) === 9) at += 1;
  return at;
}

/** `json` at `at`, in any case, not followed by a letter or digit. */
function isJsonTag(text: string, at: number): boolean {
  // `| 32` lower-cases an ASCII letter and leaves no other code unit equal to one.
  const tagged =
    (text.charCodeAt(at) | 32) === 106 && (text.charCodeAt(at + 1) | 32) === 115 && (text.charCodeAt(at + 2) | 32) === 111 && (text.charCodeAt(at + 3) | 32) === 110;
  const next = text.charCodeAt(at + 4);
  return tagged && !isDigit(next) && !((next | 32) >= 97 && (next | 32) <= 122);
}

/**
 * Start of the trimmed last non-empty line. `end` is the end of the trimmed reply, so
 * that line is the one holding `end - 1`; lines end at `\r\n`, `\n` or `\r`.
 */
function lastLineStart(text: string, start: number, end: number): number {
  const lineStart = Math.max(start, text.lastIndexOf('\n', end - 1) + 1, text.lastIndexOf('\r', end - 1) + 1);
  return end - text.slice(lineStart, end).trimStart().length;
}

/**
 * A broken envelope rule, as the function writing its message: the message is written
 * only for the rejection that is reported, never for each of a million rejected objects.
 */
type Broken = (object: JsonObject) => string;

const missing: Broken = (object) =>
  `${isAbsent(own(object, 'answer')) ? '"answer"' : '"confidence"'} is missing or null; the object needs both "answer" and "confidence"`;
const answerNotScalar: Broken = (object) =>
  `"answer" must be a string, number or boolean, not ${Array.isArray(object['answer']) ? 'an array' : 'an object'}`;
const confidenceBoolean: Broken = () => '"confidence" must be a number, not a boolean';
const confidenceNotNumber: Broken = () => '"confidence" must be a number from 0 to 1';
const confidenceOutOfRange: Broken = (object) => {
  const confidence = confidenceOf(own(object, 'confidence'));
  return `"confidence" is out of range: ${Number.isFinite(confidence) ? confidence : 'not finite'}, expected 0 to 1`;
};
const ambiguousNotBoolean: Broken = () => '"ambiguous" must be true or false';
const answerEmpty: Broken = () => '"answer" is empty';

/** The first envelope rule the object breaks, in the order the spec gives them; a schema judges any answer. */
function brokenRule(object: JsonObject, anyAnswer: boolean): Broken | undefined {
  const answerValue = own(object, 'answer');
  const confidenceValue = own(object, 'confidence');
  if (isAbsent(answerValue) || isAbsent(confidenceValue)) return missing;
  if (!anyAnswer && typeof answerValue === 'object') return answerNotScalar;
  if (typeof confidenceValue === 'boolean') return confidenceBoolean;
  const confidence = confidenceOf(confidenceValue);
  if (confidence === undefined) return confidenceNotNumber;
  if (!Number.isFinite(confidence) || confidence < 0 || confidence > 1) return confidenceOutOfRange;
  const ambiguous = readAmbiguous(own(object, 'ambiguous'));
  if (ambiguous === undefined) return ambiguousNotBoolean;
  if (!anyAnswer && !ambiguous && String(answerValue).trim() === '') return answerEmpty;
  return undefined;
}

/** The reading of an object that breaks no rule. */
function readEnvelope(object: JsonObject, anyAnswer: boolean): Reading<JsonValue> {
  const answer = own(object, 'answer')!;
  const interpretations = own(object, 'interpretations');
  const chosen = own(object, 'chosen_interpretation');
  return {
    ok: true,
    answer: anyAnswer ? answer : String(answer),
    confidence: confidenceOf(own(object, 'confidence'))!,
    ambiguous: readAmbiguous(own(object, 'ambiguous'))!,
    interpretations: Array.isArray(interpretations) ? interpretations.map(asText) : [],
    chosenInterpretation: isAbsent(chosen) ? null : asText(chosen),
    parsed: object,
  };
}

function reject(error: string): Unreadable {
  return { ok: false, error };
}

function isAbsent(value: JsonValue | undefined): value is null | undefined {
  return value === undefined || value === null;
}

function confidenceOf(value: JsonValue | undefined): number | undefined {
  return typeof value === 'number' ? value : decimalString(value);
}

function own(object: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** A reading as text: a string as it is, any other JSON value as its JSON. */
export function asText(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `ambiguous` as the envelope's rules read it: absent is false; a boolean, or "true"/"false" in any case. */
export function readAmbiguous(value: JsonValue | undefined): boolean | undefined {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toLowerCase();
  return word === 'true' ? true : word === 'false' ? false : undefined;
}

/**
 * The number a decimal string spells, or undefined. Accepts exactly
 * `^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$` with ASCII digits, checked by a
 * single forward scan: `Number()` would accept `""`, `"0x1"` and `"Infinity"`.
 */
export function decimalString(value: JsonValue | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  let i = 0;
  if (s[i] === '+' || s[i] === '-') i += 1;
  const intStart = i;
  while (isDigit(s.charCodeAt(i))) i += 1;
  if (s[i] === '.') {
    i += 1;
    while (isDigit(s.charCodeAt(i))) i += 1;
  }
  // No digit before or after the dot: nothing at all, or the dot alone.
  if (i === intStart || (i === intStart + 1 && s[intStart] === '.')) return undefined;
  if (s[i] === 'e' || s[i] === 'E') {
    i += 1;
    if (s[i] === '+' || s[i] === '-') i += 1;
    const expStart = i;
    while (isDigit(s.charCodeAt(i))) i += 1;
    if (i === expStart) return undefined;
  }
  return i === s.length ? Number.parseFloat(s) : undefined;
}
