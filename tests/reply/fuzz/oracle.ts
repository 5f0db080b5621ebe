/**
 * An independent reading of a reply, written from the rules in docs/api.md (Reading the
 * reply) with `JSON.parse` as the only JSON reader. Slow on purpose (every `{` is tried
 * against every later `}`): it is the referee for the differential tests, never a second
 * implementation to ship.
 */

export type Verdict =
  | { readonly parseOk: false; readonly why: Why }
  | {
      readonly parseOk: true;
      readonly answer: string;
      readonly confidence: number;
      readonly ambiguous: boolean;
      readonly interpretations: readonly string[];
      readonly chosenInterpretation: string | null;
      readonly parsed: object;
    };

/** Why a reply was not read, as a category both readers can be mapped onto. */
export type Why =
  | 'empty'
  | 'no-object'
  | 'too-deep'
  | 'missing'
  | 'answer-type'
  | 'confidence-boolean'
  | 'confidence-type'
  | 'confidence-range'
  | 'ambiguous'
  | 'answer-empty';

const DEPTH_LIMIT = 512;
const DECIMAL = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;

export function oracle(reply: string): Verdict {
  const trimmed = reply.trim();
  if (trimmed === '') return { parseOk: false, why: 'empty' };
  let first: Why | undefined;
  for (const candidate of candidates(reply)) {
    const verdict = judge(candidate);
    if (verdict.parseOk) return verdict;
    first ??= verdict.why;
  }
  return { parseOk: false, why: first ?? 'no-object' };
}

/**
 * The candidates of docs/api.md, in its order: the whole reply; the last line; the objects
 * starting inside a ```json fence; every other object. Objects are listed by where they
 * start, and nothing inside an object that passes, or that has an "answer" or "confidence"
 * key and fails, is listed.
 */
function* candidates(reply: string): Generator<object> {
  const trimmed = reply.trim();
  const whole = wholeObject(trimmed);
  if (whole) yield whole;
  const lines = reply.split(/\r\n|\n|\r/).map((line) => line.trim()).filter((line) => line !== '');
  const last = wholeObject(lines.at(-1) ?? '');
  if (last) yield last;
  const objects = objectsByStart(reply);
  const fences = jsonFenceInsides(reply);
  const fenced = (at: number) => fences.some(([from, to]) => from <= at && at < to);
  for (const { at, object } of objects) if (fenced(at)) yield object;
  for (const { at, object } of objects) if (!fenced(at)) yield object;
}

function objectsByStart(reply: string): { at: number; object: object }[] {
  const found: { at: number; object: object }[] = [];
  let after = 0;
  for (let at = reply.indexOf('{'); at !== -1; at = reply.indexOf('{', at + 1)) {
    if (at < after) continue;
    const read = objectAt(reply, at);
    if (!read) continue;
    found.push({ at, object: read.object });
    const hasEnvelopeKey = Object.hasOwn(read.object, 'answer') || Object.hasOwn(read.object, 'confidence');
    if (judge(read.object).parseOk || hasEnvelopeKey) after = read.end;
  }
  return found;
}

/** Where ```json fences' insides start and end: backtick runs of three or more pair up in order. */
function jsonFenceInsides(reply: string): [number, number][] {
  const runs = [...reply.matchAll(/`{3,}/g)];
  const insides: [number, number][] = [];
  for (let i = 0; i + 1 < runs.length; i += 2) {
    const open = runs[i]!;
    const close = runs[i + 1]!;
    const afterOpen = open.index + open[0].length;
    const tag = /^[ \t]*json(?![A-Za-z0-9])/i.exec(reply.slice(afterOpen, close.index));
    if (tag) insides.push([afterOpen + tag[0].length, close.index]);
  }
  return insides;
}

function wholeObject(text: string): object | undefined {
  if (!text.startsWith('{') || !text.endsWith('}')) return undefined;
  return parseObject(text);
}

/** The object a standard parser reads from `at`, and the index after it: the one prefix ending in `}` that parses. */
function objectAt(text: string, at: number): { object: object; end: number } | undefined {
  for (let end = text.indexOf('}', at); end !== -1; end = text.indexOf('}', end + 1)) {
    const object = parseObject(text.slice(at, end + 1));
    if (object) return { object, end: end + 1 };
  }
  return undefined;
}

function parseObject(text: string): object | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : undefined;
}

function judge(object: object): Verdict | { readonly parseOk: false; readonly why: Why } {
  if (depthOf(object) > DEPTH_LIMIT) return { parseOk: false, why: 'too-deep' };
  const get = (key: string): unknown => (Object.hasOwn(object, key) ? (object as Record<string, unknown>)[key] : undefined);
  const answerValue = get('answer');
  const confidenceValue = get('confidence');
  if (answerValue == null || confidenceValue == null) return { parseOk: false, why: 'missing' };
  if (typeof answerValue === 'object') return { parseOk: false, why: 'answer-type' };
  const answer = String(answerValue);
  if (typeof confidenceValue === 'boolean') return { parseOk: false, why: 'confidence-boolean' };
  let confidence: number;
  if (typeof confidenceValue === 'number') confidence = confidenceValue;
  else if (typeof confidenceValue === 'string' && DECIMAL.test(confidenceValue)) confidence = Number(confidenceValue.trim());
  else return { parseOk: false, why: 'confidence-type' };
  if (!Number.isFinite(confidence) || confidence < 0 || confidence > 1) return { parseOk: false, why: 'confidence-range' };
  const ambiguousValue = get('ambiguous');
  let ambiguous: boolean;
  if (ambiguousValue === undefined) ambiguous = false;
  else if (typeof ambiguousValue === 'boolean') ambiguous = ambiguousValue;
  else if (typeof ambiguousValue === 'string' && ['true', 'false'].includes(ambiguousValue.trim().toLowerCase())) {
    ambiguous = ambiguousValue.trim().toLowerCase() === 'true';
  } else return { parseOk: false, why: 'ambiguous' };
  if (!ambiguous && answer.trim() === '') return { parseOk: false, why: 'answer-empty' };
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  const interpretations = get('interpretations');
  const chosen = get('chosen_interpretation');
  return {
    parseOk: true,
    answer,
    confidence,
    ambiguous,
    interpretations: Array.isArray(interpretations) ? interpretations.map(text) : [],
    chosenInterpretation: chosen == null ? null : text(chosen),
    parsed: object,
  };
}

/** Nesting depth, counted without recursion: `{}` is 1, `{"a": []}` is 2. */
export function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [item, depth] = top;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Booth's error text mapped onto the same categories, by the words §11 of the spec requires. */
export function whyOf(error: string): Why | 'unknown' {
  const rules: Array<[RegExp, Why]> = [
    [/reply was empty/, 'empty'],
    [/no JSON object/, 'no-object'],
    [/levels deep/, 'too-deep'],
    [/missing/, 'missing'],
    [/"answer" must be/, 'answer-type'],
    [/boolean/, 'confidence-boolean'],
    [/out of range/, 'confidence-range'],
    [/"confidence" must be/, 'confidence-type'],
    [/"ambiguous"/, 'ambiguous'],
    [/"answer" is empty/, 'answer-empty'],
  ];
  return rules.find(([pattern]) => pattern.test(error))?.[1] ?? 'unknown';
}
