import type { JsonValue } from '../../../src/reply/json-objects.js';
import { MAX_DEPTH, parseReply } from '../../../src/reply/parse.js';
import { depthOf } from './oracle.js';
import {
  AMBIGUITY_KNOWN,
  ANSWER_GREW,
  type AnswerRule,
  type JsonType,
  MEMBER_FAILED,
  type MemberFailure,
  READINGS_COMPLETE,
  ReplyReader,
} from '../../../src/reply/stream-reader.js';

/**
 * The streaming reader (`ReplyReader`, src/reply/stream-reader.ts) against the finished text:
 * a reply is fed in many chunkings, and what the reader made known is compared with an
 * independent reading of the object the reply begins with (`JSON.parse`, written from the
 * reader's header comment) and with `parseReply`, the non-streaming reader.
 * `streamDifferences` lists every disagreement as a readable line; empty when none.
 */

/** What the reader knows once the reply has ended. */
export interface Fields {
  readonly ambiguous: boolean | null;
  readonly interpretations: readonly string[] | null;
  readonly answerSoFar: string | null;
  readonly failure: MemberFailure | null;
  readonly leadEnd: number;
}

/** One feeding of a reply: the final fields, the bits of every push, the fields after every push. */
export interface Fed {
  readonly text: string;
  readonly fields: Fields;
  readonly bits: readonly number[];
  readonly steps: readonly Fields[];
}

export function fieldsOf(reader: ReplyReader): Fields {
  const { ambiguous, interpretations, answerSoFar, failure, leadEnd } = reader;
  return { ambiguous, interpretations, answerSoFar, failure, leadEnd };
}

/**
 * Feeds `reply` cut at `cuts` (increasing positions inside it). `steps` keeps the fields
 * after every push, but `answerSoFar` only after at most `SAMPLED` of them: holding every
 * prefix of a long answer (each flattened when compared) would be quadratic.
 */
export function feed(reply: string, cuts: readonly number[], rule: AnswerRule | null = null): Fed {
  const reader = new ReplyReader(rule);
  const bits: number[] = [];
  const steps: Fields[] = [];
  const every = Math.max(1, Math.ceil((cuts.length + 1) / SAMPLED));
  let from = 0;
  for (const [i, to] of [...cuts, reply.length].entries()) {
    bits.push(reader.push(reply.slice(from, to)));
    const fields = fieldsOf(reader);
    steps.push(i % every === 0 || i === cuts.length ? fields : { ...fields, answerSoFar: UNSAMPLED });
    from = to;
  }
  return { text: reader.text, fields: fieldsOf(reader), bits, steps };
}

const SAMPLED = 256;
/** Stands for an `answerSoFar` not kept. */
export const UNSAMPLED = '\u0000unsampled';

/** A small seeded generator (mulberry32), so every chunking can be replayed from its seed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cuts of random sizes from 1 to `most` characters. */
export function randomCuts(length: number, seed: number, most: number): number[] {
  const next = random(seed);
  const cuts: number[] = [];
  for (let at = 1 + Math.floor(next() * most); at < length; at += 1 + Math.floor(next() * most)) cuts.push(at);
  return cuts;
}

/** Every position inside `text`: one character per chunk. */
export function everyCut(length: number): number[] {
  return Array.from({ length: Math.max(0, length - 1) }, (_, i) => i + 1);
}

/** Between the halves of every surrogate pair (and after every lone high surrogate). */
export function surrogateCuts(text: string): number[] {
  const cuts: number[] = [];
  for (let i = 1; i < text.length; i += 1) {
    const c = text.charCodeAt(i - 1);
    if (c >= 0xd800 && c <= 0xdbff) cuts.push(i);
  }
  return cuts;
}

/** Before, inside and after every escape: `\`|`"`, `\`|`u`|`0`|`0`|`4`|`1`; escaped backslashes are one escape. */
export function escapeCuts(text: string): number[] {
  const cuts = new Set<number>();
  for (let i = text.indexOf('\\'); i >= 0 && i < text.length; i = text.indexOf('\\', i)) {
    const length = text[i + 1] === 'u' ? 6 : 2;
    for (let k = 0; k <= length; k += 1) if (i + k > 0 && i + k < text.length) cuts.add(i + k);
    i += length;
  }
  return [...cuts].sort((a, b) => a - b);
}

/** The chunkings every reply is fed in: the first is one chunk, the reference. */
export function chunkings(reply: string, seed: number): Array<{ readonly name: string; readonly cuts: number[] }> {
  const all = [
    { name: 'one chunk', cuts: [] as number[] },
    { name: 'one character per chunk', cuts: everyCut(reply.length) },
    { name: `random 1–4 (seed ${seed})`, cuts: randomCuts(reply.length, seed, 4) },
    { name: `random 1–16 (seed ${seed + 1})`, cuts: randomCuts(reply.length, seed + 1, 16) },
    { name: `random 1–64 (seed ${seed + 2})`, cuts: randomCuts(reply.length, seed + 2, 64) },
    { name: 'every surrogate pair split', cuts: surrogateCuts(reply) },
    { name: 'every escape split everywhere', cuts: escapeCuts(reply) },
    {
      name: `every escape and surrogate split, random 1–32 between (seed ${seed + 3})`,
      cuts: [...new Set([...escapeCuts(reply), ...surrogateCuts(reply), ...randomCuts(reply.length, seed + 3, 32)])].sort((a, b) => a - b),
    },
  ];
  return all;
}

// ---------------------------------------------------------------------------------------
// The independent reading: the reader's header comment, with JSON.parse as the only JSON reader.

/** Longest text allowed before the leading object's `{` (the reader's LEAD_LIMIT), and what it may be. */
export const LEAD_LIMIT = 64;
const FENCE_LINE = /^\s*(?:```json[ \t]*\r?\n\s*)?$/i;

/** Where the leading object's `{` is, when the reply opens with one after blanks or a ```json fence line; else -1. */
export function leadingBrace(reply: string): number {
  const open = reply.indexOf('{');
  if (open < 0 || open > LEAD_LIMIT || !FENCE_LINE.test(reply.slice(0, open))) return -1;
  return open;
}

/** The object `JSON.parse` reads from `at`: the one prefix ending in `}` that parses. */
function objectAt(text: string, at: number): { value: Record<string, unknown>; end: number } | undefined {
  for (let end = text.indexOf('}', at); end !== -1; end = text.indexOf('}', end + 1)) {
    let value: unknown;
    try {
      value = JSON.parse(text.slice(at, end + 1));
    } catch {
      continue;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return { value: value as Record<string, unknown>, end: end + 1 };
    return undefined;
  }
  return undefined;
}

/** The keys of a valid JSON object's text, in order, repeats included (decoded). */
export function keysOf(objectText: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  let expectKey = false;
  for (let i = 0; i < objectText.length; i += 1) {
    const c = objectText[i]!;
    if (c === '"') {
      let j = i + 1;
      while (objectText[j] !== '"') j += objectText[j] === '\\' ? 2 : 1;
      if (depth === 1 && expectKey) keys.push(JSON.parse(objectText.slice(i, j + 1)) as string);
      expectKey = false;
      i = j;
    } else if (c === '{') {
      depth += 1;
      expectKey = depth === 1;
    } else if (c === '[') depth += 1;
    else if (c === '}' || c === ']') depth -= 1;
    else if (c === ',' && depth === 1) expectKey = true;
  }
  return keys;
}

/** As the envelope's reader reads `ambiguous`: a boolean, or "true"/"false" in any case, trimmed. */
export function readAmbiguous(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const word = value.trim().toLowerCase();
  return word === 'true' ? true : word === 'false' ? false : undefined;
}

const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

export function typeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value as JsonType;
}

const accepts = (expected: readonly JsonType[], value: unknown) =>
  expected.includes(typeOf(value)) || (typeOf(value) === 'integer' && expected.includes('number'));

/** The leading object as the header describes it, when the reader must read it to its end. */
export interface Lead {
  readonly from: number;
  readonly end: number;
  readonly value: Record<string, unknown>;
}

/**
 * The object the reply begins with, when the reader must read it whole: after at most
 * LEAD_LIMIT characters of blanks or a fence line, valid JSON, no repeated member, at most
 * MAX_DEPTH deep, and an `ambiguous` member (if any) the envelope's reader can read.
 */
export function leadingObject(reply: string): Lead | undefined {
  const from = leadingBrace(reply);
  if (from < 0) return undefined;
  const read = objectAt(reply, from);
  if (!read) return undefined;
  const keys = keysOf(reply.slice(from, read.end));
  if (new Set(keys).size !== keys.length) return undefined;
  if (depthOf(read.value) > MAX_DEPTH) return undefined;
  if (Object.hasOwn(read.value, 'ambiguous') && readAmbiguous(read.value['ambiguous']) === undefined) return undefined;
  return { from, end: read.end, value: read.value };
}

/** The failure the reader must report for `answer` under `rule`, from the object alone; undefined when none. */
export function expectedFailure(answer: unknown, answerText: string, rule: AnswerRule): MemberFailure | undefined {
  // Members come first: they complete before the answer does. Their order is the text's.
  if (typeof answer === 'object' && answer !== null && !Array.isArray(answer) && rule.members.size > 0) {
    for (const key of keysOf(answerText)) {
      const expected = rule.members.get(key);
      const value = (answer as Record<string, unknown>)[key];
      if (expected && !accepts(expected, value)) return { key, expected, got: typeOf(value), value: value as JsonValue };
    }
  }
  if (rule.type && !accepts(rule.type, answer)) return { key: null, expected: rule.type, got: typeOf(answer), value: answer as JsonValue };
  return undefined;
}

// ---------------------------------------------------------------------------------------

const show = (value: unknown) => JSON.stringify(value);
const same = (a: unknown, b: unknown) => show(a) === show(b);

/** Whether the reply, after its leading object, holds only blanks and a closing fence. */
export function onlyTheLead(reply: string, leadEnd: number): boolean {
  return /^\s*(?:```\s*)?$/.test(reply.slice(leadEnd));
}

/** Replies longer than this are read under the first rule only, in four chunkings. */
const LONG = 20_000;

export interface Options {
  readonly seed: number;
  /** The rules the reply is read under; null is no schema. */
  readonly rules?: ReadonlyArray<AnswerRule | null>;
}

/** Rules that judge a member alone: what a schema's JSON Schema types give the reader. */
export const RULES: ReadonlyArray<AnswerRule | null> = [
  null,
  { type: ['string'], members: new Map() },
  {
    type: ['object'],
    members: new Map<string, readonly JsonType[]>([
      ['city', ['string']],
      ['count', ['integer']],
      ['score', ['number']],
      ['tags', ['array']],
      ['ok', ['boolean', 'null']],
    ]),
  },
];

/**
 * Every disagreement between the streaming reader and the finished text for one reply.
 * `known` collects the lines of known, reported disagreements instead (see the test file).
 */
export function streamDifferences(reply: string, { seed, rules = RULES }: Options): string[] {
  const out: string[] = [];
  const wholeFalse = parseReply(reply, false);
  const wholeTrue = parseReply(reply, true);
  const lead = leadingObject(reply);
  const opens = leadingBrace(reply) >= 0;
  // A long reply (JSONTestSuite's 100 000 brackets) is fed in fewer ways: one chunk, one character, random, escapes split.
  const long = reply.length > LONG;
  for (const rule of long ? rules.slice(0, 1) : rules) {
    const where = rule === null ? 'no rule' : `rule ${show({ type: rule.type, members: [...rule.members] })}`;
    const differ = (field: string, want: unknown, got: unknown) => {
      if (!same(want, got)) out.push(`${where}: ${field}: expected ${show(want)}, reader ${show(got)}`);
    };
    let reference: Fed | undefined;
    for (const { name, cuts } of long ? chunkings(reply, seed).filter((_, i) => i === 0 || i === 1 || i === 4 || i === 6) : chunkings(reply, seed)) {
      const fed = feed(reply, cuts, rule);
      const at = `${where}, ${name}`;
      // 1. The text assembled is the reply, and the verdict on it is the finished text's.
      if (fed.text !== reply) out.push(`${at}: text ${show(fed.text)} is not the reply`);
      // 2. Chunking invariance, and bits that are set once and say what changed.
      if (!reference) reference = fed;
      else if (!same(fed.fields, reference.fields)) out.push(`${at}: fields ${show(fed.fields)}; in one chunk ${show(reference.fields)}`);
      for (const [bit, label] of [
        [AMBIGUITY_KNOWN, 'AMBIGUITY_KNOWN'],
        [READINGS_COMPLETE, 'READINGS_COMPLETE'],
        [MEMBER_FAILED, 'MEMBER_FAILED'],
      ] as const) {
        const times = fed.bits.filter((bits) => bits & bit).length;
        if (times > 1) out.push(`${at}: ${label} reported ${times} times`);
      }
      let before: Fields = { ambiguous: null, interpretations: null, answerSoFar: null, failure: null, leadEnd: -1 };
      let grown = 0;
      fed.steps.forEach((step, i) => {
        const bits = fed.bits[i]!;
        const step_ = `${at}, push ${i}`;
        // Set once: compared by identity, as the reader assigns each once.
        const setOnce = (field: 'ambiguous' | 'interpretations' | 'failure' | 'leadEnd', bit: number, unset: unknown) => {
          const was = before[field];
          const now = step[field];
          if (was !== unset && was !== now) out.push(`${step_}: ${field} changed from ${show(was)} to ${show(now)}`);
          if (bit && was === unset && now !== unset && !(bits & bit)) out.push(`${step_}: ${field} became ${show(now)} without its bit`);
          if (bit && bits & bit && now === unset) out.push(`${step_}: bit for ${field} with ${field} still unset`);
        };
        setOnce('ambiguous', AMBIGUITY_KNOWN, null);
        setOnce('interpretations', READINGS_COMPLETE, null);
        setOnce('failure', MEMBER_FAILED, null);
        setOnce('leadEnd', 0, -1);
        before = step;
        if (step.answerSoFar === UNSAMPLED) return;
        const final = fed.fields.answerSoFar;
        if (step.answerSoFar !== null) {
          if (final === null || !final.startsWith(step.answerSoFar)) out.push(`${step_}: answerSoFar ${show(step.answerSoFar)} is not a prefix of the final ${show(final)}`);
          if (step.answerSoFar.length < grown) out.push(`${step_}: answerSoFar shrank`);
          grown = step.answerSoFar.length;
        }
      });
      // ANSWER_GREW is set on every push that changed answerSoFar (checked where both ends are kept).
      for (let i = 1; i < fed.steps.length; i += 1) {
        const [was, now] = [fed.steps[i - 1]!.answerSoFar, fed.steps[i]!.answerSoFar];
        if (was !== UNSAMPLED && now !== UNSAMPLED && was !== now && !(fed.bits[i]! & ANSWER_GREW)) out.push(`${at}, push ${i}: answerSoFar changed without ANSWER_GREW`);
      }
      if (fed.steps[0] && fed.steps[0].answerSoFar !== null && fed.steps[0].answerSoFar !== UNSAMPLED && !(fed.bits[0]! & ANSWER_GREW)) out.push(`${at}, push 0: answerSoFar began without ANSWER_GREW`);
    }
    const fields = reference!.fields;
    // 4. A reply that does not open with an object (after blanks or a fence line) tells nothing.
    if (!opens) {
      differ('fields of a reply not opening with an object', { ambiguous: null, interpretations: null, answerSoFar: null, failure: null, leadEnd: -1 }, fields);
      if (reference!.bits.some((bits) => bits !== 0)) out.push(`${where}: bits ${show(reference!.bits)} for a reply not opening with an object`);
      continue;
    }
    // The leading object is read to its end exactly when the header says it must be.
    differ('leadEnd', lead ? lead.end : -1, fields.leadEnd);
    if (!lead || fields.leadEnd !== lead.end) continue;
    // 3. What the reader made known is the leading object's members, read as the envelope's reader reads them.
    const object = lead.value;
    const has = (key: string) => Object.hasOwn(object, key);
    differ('ambiguous', has('ambiguous') ? readAmbiguous(object['ambiguous']) : null, fields.ambiguous);
    const interpretations = object['interpretations'];
    differ('interpretations', has('interpretations') ? (Array.isArray(interpretations) ? interpretations.map(asText) : []) : null, fields.interpretations);
    if (!has('answer')) differ('answerSoFar', null, fields.answerSoFar);
    else if (typeof object['answer'] === 'string') differ('answerSoFar', object['answer'], fields.answerSoFar);
    else {
      let read: unknown = undefined;
      try {
        read = JSON.parse(fields.answerSoFar ?? '');
      } catch {
        out.push(`${where}: answerSoFar ${show(fields.answerSoFar)} of a non-string answer is not its JSON text`);
      }
      differ('answerSoFar (as JSON)', object['answer'], read);
      if (fields.answerSoFar !== null && fields.answerSoFar !== fields.answerSoFar.trim()) out.push(`${where}: answerSoFar ${show(fields.answerSoFar)} has blanks around it`);
    }
    if (rule !== null) {
      const answer = object['answer'];
      const answerText = typeof answer === 'string' || !has('answer') ? '' : fields.answerSoFar ?? '';
      const expected = has('answer') ? expectedFailure(answer, answerText, rule) : undefined;
      differ('failure', expected ?? null, fields.failure);
    } else differ('failure (no rule)', null, fields.failure);
    // The leading object's reading by the non-streaming reader, when it accepts it.
    const leadText = reply.slice(lead.from, lead.end);
    for (const [anyAnswer, whole] of [
      [false, wholeFalse],
      [true, wholeTrue],
    ] as const) {
      const reading = parseReply(leadText, anyAnswer);
      if (onlyTheLead(reply, lead.end)) differ(`parseReply(reply, ${anyAnswer}) of a reply that is its leading object`, reading, whole);
      // Only a reading of the leading object itself: an envelope nested in it (`{"result": {…}}`) is not what the reader reads.
      if (!reading.ok || !same(reading.parsed, object)) continue;
      differ(`ambiguous vs parseReply(lead, ${anyAnswer})`, reading.ambiguous, fields.ambiguous ?? false);
      differ(`interpretations vs parseReply(lead, ${anyAnswer})`, reading.interpretations, fields.interpretations ?? []);
      if (anyAnswer && typeof reading.answer === 'string') differ('answerSoFar vs parseReply(lead, true)', reading.answer, fields.answerSoFar);
      if (onlyTheLead(reply, lead.end) && whole.ok) {
        differ(`ambiguous vs parseReply(reply, ${anyAnswer})`, whole.ambiguous, fields.ambiguous ?? false);
        differ(`interpretations vs parseReply(reply, ${anyAnswer})`, whole.interpretations, fields.interpretations ?? []);
      }
    }
  }
  // 1. The verdict on the text the reader assembled is the verdict on the reply.
  const assembled = feed(reply, randomCuts(reply.length, seed, 8)).text;
  if (!same(parseReply(assembled, false), wholeFalse) || !same(parseReply(assembled, true), wholeTrue)) out.push('parseReply of the assembled text differs');
  return out;
}
