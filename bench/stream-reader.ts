/**
 * The streaming reader's cost (src/reply/stream-reader.ts): a reply fed in chunks of 1, 16,
 * 256 and 4 096 code units against reading the finished text once with `parseReply`, per
 * shape and size. `node --expose-gc --import tsx bench/stream-reader.ts [MB…]` (1 and 4 MB
 * unless other sizes are given). The unit test counts the reader's work instead of timing it
 * (tests/reply/stream-reader.test.ts, "linear in the reply's length"); this prints times.
 *
 * Figures are best-of-rounds on a shared machine, the contenders taking turns round by round
 * (bestMicrosSideBySide): trust the ratios more than the times.
 */
import { pathToFileURL } from 'node:url';
import { parseReply } from '../src/reply/parse.js';
import { type AnswerRule, ReplyReader } from '../src/reply/stream-reader.js';
import { bestMicrosSideBySide } from './reader.js';

export interface StreamRow {
  readonly shape: string;
  readonly megabytes: number;
  /** Microseconds to read the finished text once. */
  readonly parseReplyUs: number;
  /** Chunk size → microseconds to push the whole reply in chunks of that size. */
  readonly streamedUs: ReadonlyMap<number, number>;
}

const CHUNK_SIZES = [1, 16, 256, 4096];

const SHAPES: Record<string, { make: (size: number) => string; rule?: AnswerRule }> = {
  'string answer': {
    make: (size) => `{"ambiguous": false, "interpretations": [], "answer": "${'Paris is the capital. é\\n\u{1f600} '.repeat(size / 32)}", "confidence": 0.9}`,
  },
  'object answer, judged': {
    make: (size) => `{"answer": {${Array.from({ length: size / 32 }, (_, i) => `"k${i}": "${'v'.repeat(8)}", "city": "P"`).join(', ')}}, "confidence": 0.9}`,
    rule: { type: ['object'], members: new Map([['city', ['string']]]) },
  },
  'long readings': {
    make: (size) => `{"ambiguous": true, "interpretations": [${Array.from({ length: size / 24 }, () => '["a reading", 1.5e3, null]').join(',')}], "answer": "x", "confidence": 0.5}`,
  },
};

function chunked(reply: string, size: number): string[] {
  const chunks: string[] = [];
  for (let at = 0; at < reply.length; at += size) chunks.push(reply.slice(at, at + size));
  return chunks;
}

export function streamRows(megabytes: readonly number[], rounds = 3): StreamRow[] {
  const rows: StreamRow[] = [];
  for (const mb of megabytes) {
    for (const [shape, { make, rule = null }] of Object.entries(SHAPES)) {
      const reply = make(mb * 1024 * 1024);
      const chunkings = CHUNK_SIZES.map((size) => chunked(reply, size));
      const [parseReplyUs, ...streamed] = bestMicrosSideBySide(rounds, [
        { iterations: 1, body: () => parseReply(reply, true) },
        ...chunkings.map((chunks) => ({
          iterations: 1,
          body: () => {
            const reader = new ReplyReader(rule);
            for (const chunk of chunks) reader.push(chunk);
            return reader.answerSoFar;
          },
        })),
      ]);
      rows.push({ shape, megabytes: mb, parseReplyUs: parseReplyUs!, streamedUs: new Map(CHUNK_SIZES.map((size, i) => [size, streamed[i]!])) });
    }
  }
  return rows;
}

export function printStreamRows(rows: readonly StreamRow[]): void {
  const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`.padStart(10);
  console.log(`${'shape'.padEnd(24)} ${'MB'.padStart(3)} ${'parseReply'.padStart(10)} ${CHUNK_SIZES.map((size) => `${size}-unit chunks`.padStart(18)).join('')}`);
  for (const row of rows) {
    const cells = CHUNK_SIZES.map((size) => {
      const us = row.streamedUs.get(size)!;
      return `${ms(us)} ×${(us / row.parseReplyUs).toFixed(1)}`.padStart(18);
    });
    console.log(`${row.shape.padEnd(24)} ${String(row.megabytes).padStart(3)} ${ms(row.parseReplyUs)} ${cells.join('')}`);
  }
  console.log('(×: the streamed reading\'s time over parseReply\'s on the finished text; linear reading keeps it flat as the size grows)');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const sizes = process.argv.slice(2).map(Number);
  printStreamRows(streamRows(sizes.length > 0 ? sizes : [1, 4]));
}
