import { isDigit, type JsonObject, JsonObjectReader, type JsonValue, type ReadResult } from './json-objects.js';

/** What one model reply says, once a JSON object in it passed every rule. */
export interface Reading {
  readonly ok: true;
  readonly answer: string;
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

/**
 * Finds the model's JSON object in a reply. Candidates, first acceptable wins: the whole
 * trimmed reply, its last non-empty line, then every object in order of where it starts
 * (outer before inner). On failure the error is the reason the first decoded object was
 * rejected, since that is normally the reply's own envelope.
 */
export function parseReply(text: string): Reading | Unreadable {
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  if (start >= end) return { ok: false, error: EMPTY_REPLY_ERROR };

  const reader = new JsonObjectReader(text);
  // The scan meets every position once; only the two whole-span candidates can come round again.
  const spans: number[] = [];
  let firstRejection: string | undefined;
  const consider = (read: ReadResult): Reading | undefined => {
    if (!read.ok) return undefined;
    const verdict = read.depth > MAX_DEPTH ? tooDeep(read.depth) : readEnvelope(read.value);
    if (verdict.ok) return verdict;
    firstRejection ??= verdict.error;
    return undefined;
  };
  const wholeSpan = (from: number): Reading | undefined => {
    if (text.charCodeAt(from) !== OPEN_BRACE || text.charCodeAt(end - 1) !== CLOSE_BRACE || spans.includes(from)) return undefined;
    const read = reader.read(from);
    if (!read.ok || read.end !== end) return undefined;
    spans.push(from);
    return consider(read);
  };

  const found = wholeSpan(start) ?? wholeSpan(lastLineStart(text, start, end));
  if (found) return found;
  for (let at = text.indexOf('{', start); at !== -1 && at < end; at = text.indexOf('{', at + 1)) {
    if (spans.includes(at)) continue;
    const verdict = consider(reader.read(at));
    if (verdict) return verdict;
  }
  return { ok: false, error: firstRejection ?? NO_OBJECT_ERROR };
}

function tooDeep(depth: number): Unreadable {
  return reject(`the JSON object nests ${depth} levels deep; Booth reads objects at most ${MAX_DEPTH} deep`);
}

const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const LINE_FEED = 10;
const CARRIAGE_RETURN = 13;

/**
 * Start of the trimmed last non-empty line. `end` is the end of the trimmed reply, so
 * that line is the one holding `end - 1`; lines end at `\r\n`, `\n` or `\r`.
 */
function lastLineStart(text: string, start: number, end: number): number {
  let lineStart = end - 1;
  while (lineStart > start) {
    const c = text.charCodeAt(lineStart - 1);
    if (c === LINE_FEED || c === CARRIAGE_RETURN) break;
    lineStart -= 1;
  }
  return end - text.slice(lineStart, end).trimStart().length;
}

/** Applies the envelope rules to one decoded object, in the order the spec gives them. */
function readEnvelope(object: JsonObject): Reading | Unreadable {
  const answerValue = own(object, 'answer');
  const confidenceValue = own(object, 'confidence');
  if (answerValue === undefined || answerValue === null || confidenceValue === undefined || confidenceValue === null) {
    const absent = answerValue === undefined || answerValue === null ? '"answer"' : '"confidence"';
    return reject(`${absent} is missing or null; the object needs both "answer" and "confidence"`);
  }
  if (typeof answerValue === 'object') {
    return reject(`"answer" must be a string, number or boolean, not ${Array.isArray(answerValue) ? 'an array' : 'an object'}`);
  }
  const answer = String(answerValue);

  if (typeof confidenceValue === 'boolean') return reject('"confidence" must be a number, not a boolean');
  const confidence = typeof confidenceValue === 'number' ? confidenceValue : decimalString(confidenceValue);
  if (confidence === undefined) return reject('"confidence" must be a number from 0 to 1');
  if (!Number.isFinite(confidence) || confidence < 0 || confidence > 1) {
    return reject(`"confidence" is out of range: ${Number.isFinite(confidence) ? confidence : 'not finite'}, expected 0 to 1`);
  }

  const ambiguous = readAmbiguous(own(object, 'ambiguous'));
  if (ambiguous === undefined) return reject('"ambiguous" must be true or false');
  if (!ambiguous && answer.trim() === '') return reject('"answer" is empty');

  const interpretations = own(object, 'interpretations');
  const chosen = own(object, 'chosen_interpretation');
  return {
    ok: true,
    answer,
    confidence,
    ambiguous,
    interpretations: Array.isArray(interpretations) ? interpretations.map(asText) : [],
    chosenInterpretation: chosen === undefined || chosen === null ? null : asText(chosen),
    parsed: object,
  };
}

function reject(error: string): Unreadable {
  return { ok: false, error };
}

function own(object: JsonObject, key: string): JsonValue | undefined {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

function asText(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function readAmbiguous(value: JsonValue | undefined): boolean | undefined {
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
export function decimalString(value: JsonValue): number | undefined {
  if (typeof value !== 'string') return undefined;
  const s = value.trim();
  let i = 0;
  if (s[i] === '+' || s[i] === '-') i += 1;
  const intStart = i;
  while (isDigit(s.charCodeAt(i))) i += 1;
  let fractionDigits = 0;
  if (s[i] === '.') {
    i += 1;
    const fractionStart = i;
    while (isDigit(s.charCodeAt(i))) i += 1;
    fractionDigits = i - fractionStart;
  }
  if (intStart === i || (i - intStart === 1 && fractionDigits === 0 && s[intStart] === '.')) return undefined;
  if (s[i] === 'e' || s[i] === 'E') {
    i += 1;
    if (s[i] === '+' || s[i] === '-') i += 1;
    const expStart = i;
    while (isDigit(s.charCodeAt(i))) i += 1;
    if (i === expStart) return undefined;
  }
  return i === s.length ? Number.parseFloat(s) : undefined;
}
