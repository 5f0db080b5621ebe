/**
 * The reply reader's speed, side by side with `JSON.parse` in one run. `bench/bench.ts`
 * calls these functions; `node --expose-gc --import tsx bench/reader.ts [MB…]` prints them
 * alone, for worst shapes of 2 and 10 MB unless other sizes are given.
 *
 * Figures are best-of-rounds on a shared machine, each comparison's contenders taking turns
 * round by round (see bestMicrosSideBySide): trust the ratios more than the times.
 */
import { pathToFileURL } from 'node:url';
import { parseReply } from '../src/reply/parse.js';

export const TYPICAL_REPLY =
  '{"ambiguous": false, "interpretations": [], "chosen_interpretation": null, "answer": "Paris", "confidence": 0.9}';

/** One contender of a side-by-side timing: `iterations` calls of `body` per round. */
export interface Contender {
  readonly iterations: number;
  readonly body: () => unknown;
}

/**
 * Microseconds per call of each contender's fastest round, the contenders taking turns
 * round by round. Taking turns keeps a ratio honest on a machine whose speed moves: here
 * the same code ran up to twice as fast on one core as on the other, which core changing
 * over time, and a process can move between them mid-run. Timed one after the other, a
 * baseline could land on the fast core and what it is compared with on the slow one.
 */
export function bestMicrosSideBySide(rounds: number, contenders: readonly Contender[], gc = true): number[] {
  const best = contenders.map(() => Number.POSITIVE_INFINITY);
  for (let round = 0; round < rounds; round += 1) {
    contenders.forEach(({ iterations, body }, k) => {
      if (gc) globalThis.gc?.();
      const start = process.hrtime.bigint();
      for (let i = 0; i < iterations; i += 1) body();
      best[k] = Math.min(best[k]!, Number(process.hrtime.bigint() - start) / 1e3 / iterations);
    });
  }
  return best;
}

export interface TypicalRow {
  readonly name: string;
  readonly parseReplyUs: number;
  readonly jsonParseUs: number;
}

/** parseReply against a bare `JSON.parse` on replies a model typically sends. */
export function typicalRows(): TypicalRow[] {
  const replies: Record<string, string> = {
    'well-formed envelope': TYPICAL_REPLY,
    'fenced envelope': `\`\`\`json\n${TYPICAL_REPLY}\n\`\`\``,
    'trailing comma': TYPICAL_REPLY.replace('}', ',}'),
    'single quotes': TYPICAL_REPLY.replaceAll('"', "'"),
    'prose, no brace': 'I believe the answer is Paris, with high confidence.',
  };
  return Object.entries(replies).map(([name, text]) => {
    const json = () => {
      try {
        JSON.parse(text);
      } catch {
        // What a reader that tries JSON.parse first pays for almost-JSON.
      }
    };
    const read = () => parseReply(text);
    for (let i = 0; i < 20_000; i += 1) {
      read();
      json();
    }
    const [parseReplyUs, jsonParseUs] = bestMicrosSideBySide(7, [
      { iterations: 100_000, body: read },
      { iterations: 100_000, body: json },
    ]);
    return { name, parseReplyUs: parseReplyUs!, jsonParseUs: jsonParseUs! };
  });
}

export interface ShapeRow {
  readonly name: string;
  readonly bytes: number;
  readonly ms: number;
  /** parseReply's time over `JSON.parse`'s time for a valid document of the same size. */
  readonly ratio: number;
}

/** The reply shapes that cost the reader most, each `size` characters. */
export function worstShapes(size: number): Record<string, string> {
  const deep = size / 2 - 3;
  return {
    'empty objects {}{}{}…': '{}'.repeat(size / 2),
    'many small objects': '{"a":1}'.repeat(Math.floor(size / 7)),
    'deep arrays in an object': `{"a":${'['.repeat(deep)}${']'.repeat(deep)}}`,
    'deep objects {"a":{"a":…': `${'{"a":'.repeat(size / 6)}1${'}'.repeat(size / 6)}`,
    // Objects holding a key the envelope rules read, so none can be passed over unjudged.
    'deep envelope keys {"answer":{…': `${'{"answer":'.repeat(size / 11)}1${'}'.repeat(size / 11)}`,
    'deep envelope keys and arrays': `${'{"answer":['.repeat(size / 13)}1${']}'.repeat(size / 13)}`,
    'unclosed envelopes {"answer":"x",…': '{"answer":"x",'.repeat(size / 14),
    'unclosed braces {{{…': '{'.repeat(size),
    'prose, no braces': 'Paris is the capital. '.repeat(Math.floor(size / 22)),
    'brace-filled prose': 'weighs {"partial": [1, 2,} and {here: not json} '.repeat(Math.floor(size / 48)),
    'valid JSON, no envelope': validDocument(size),
  };
}

/** A valid JSON object of about `size` characters, the kind `JSON.parse` is fastest on. */
function validDocument(size: number): string {
  return JSON.stringify({ items: Array.from({ length: Math.floor(size / 29) }, (_, i) => ({ id: i, name: 'abcdef' })) });
}

/** Each worst shape against `JSON.parse` of a valid document of the same size, the two taking turns. */
export function readerRows(size = 2_000_000): ShapeRow[] {
  const valid = validDocument(size);
  return Object.entries(worstShapes(size)).map(([name, text]) => {
    // Seven rounds: a round of a 10 MB shape takes a few hundred ms, long enough for this machine's speed to move.
    const [readUs, parseUs] = bestMicrosSideBySide(7, [
      { iterations: 1, body: () => parseReply(text) },
      { iterations: 1, body: () => JSON.parse(valid) },
    ]);
    const ms = readUs! / 1e3;
    return { name, bytes: text.length, ms, ratio: ms / ((parseUs! / 1e3 / valid.length) * text.length) };
  });
}

/** Sizes in MB from the command line (`bench/reader.ts 2 10`), 2 and 10 by default. */
function main(sizes: number[]): void {
  const fmt = (n: number, digits: number) => n.toFixed(digits).padStart(9);
  console.log(`Reader benchmark, node ${process.version}\n`);
  console.log(`Typical replies, µs per call (best of 7 rounds)${' '.repeat(2)}parseReply  JSON.parse`);
  for (const row of typicalRows()) {
    console.log(`  ${row.name.padEnd(46)}${fmt(row.parseReplyUs, 2)}   ${fmt(row.jsonParseUs, 2)}`);
  }
  for (const size of sizes.map((mb) => mb * 1_000_000)) {
    console.log(`\nWorst shapes, ${size / 1e6} MB, against JSON.parse of a valid document of the same size`);
    for (const row of readerRows(size)) console.log(`  ${row.name.padEnd(36)}${fmt(row.ms, 1)} ms ${fmt(row.ratio, 1)}× JSON.parse`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const sizes = process.argv.slice(2).map(Number);
  main(sizes.length > 0 ? sizes : [2, 10]);
}
