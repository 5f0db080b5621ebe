/**
 * The incremental reader's cost per chunk for `npm run bench:stream` (bench/stream.ts, section
 * 3): a clear envelope of 1 KB to 1 MB fed in chunks of 1, 4 and 64 characters (a token is
 * about 4), against `parseReply` reading the whole text once. bench/stream-reader.ts times the
 * reader on its worst shapes at 1 and 4 MB.
 */
import { parseReply } from '../src/reply/parse.js';
import { ReplyReader } from '../src/reply/stream-reader.js';
import { bestMicrosSideBySide } from './reader.js';
import { mulberry32 } from './spend-sim.js';
import { envelopeReply, prose } from './stream-sim.js';

export interface ReaderRow {
  readonly label: string;
  readonly size: number;
  readonly chunk: number;
  readonly chunks: number;
  readonly wholeNsPerChar: number;
  readonly incrementalNsPerChar: number;
  readonly nsPerChunk: number;
  /** The incremental reader's time over the whole read's. */
  readonly ratio: number;
}

/** A clear envelope of about `size` characters: its answer is prose. */
export function replyOfSize(size: number, seed = 1): string {
  const of = (answer: string) => envelopeReply({ ambiguous: false, interpretations: [], chosen: null, answer, confidence: 0.9 });
  let answer = prose(mulberry32(seed), Math.ceil(Math.max(0, size - of('').length) / 4));
  // The answer's escapes (newlines, quotes) make the envelope longer than the prose: cut it to size.
  for (let over = of(answer).length - size; over > 0; over = of(answer).length - size) answer = answer.slice(0, -over);
  return of(answer);
}

/** `text` in chunks of `size` UTF-16 code units (a chunk may end inside a surrogate pair or an escape, as a stream's may). */
export function chunksOf(text: string, size: number): string[] {
  const chunks: string[] = [];
  for (let k = 0; k < text.length; k += size) chunks.push(text.slice(k, k + size));
  return chunks;
}

/** Every chunk through a new ReplyReader, as acheck reads a stream; the answer so far read after each, as onPartial would. */
export function readIncrementally(chunks: readonly string[]): ReplyReader {
  const reader = new ReplyReader();
  let grew = 0;
  for (const chunk of chunks) grew |= reader.push(chunk);
  if (grew === 0 && chunks.length > 0 && reader.answerSoFar === null) throw new Error('the reader made nothing known');
  return reader;
}

export const READER_SIZES = [1_000, 10_000, 100_000, 1_000_000] as const;
export const CHUNK_SIZES = [1, 4, 64] as const;

/**
 * Each size and chunk size: the ReplyReader fed the chunks, against parseReply reading the
 * whole text once (what a reply that did not stream costs), the two taking turns round by
 * round. The chunks are cut before timing, as a stream delivers them cut.
 */
export function readerRows(sizes: readonly number[] = READER_SIZES, chunkSizes: readonly number[] = CHUNK_SIZES): ReaderRow[] {
  const rows: ReaderRow[] = [];
  // Both readers warmed on every chunk size first, so the first row does not pay for the JIT.
  const warm = replyOfSize(20_000, 2);
  const warmChunks = chunkSizes.map((size) => chunksOf(warm, size));
  for (const started = performance.now(); performance.now() - started < 400; ) {
    for (const chunks of warmChunks) readIncrementally(chunks);
    parseReply(warm);
  }
  for (const size of sizes) {
    const text = replyOfSize(size);
    for (const chunk of chunkSizes) {
      const chunks = chunksOf(text, chunk);
      const whole = () => parseReply(text);
      const incremental = () => readIncrementally(chunks);
      // Each contender warmed for ~30 ms, then as many calls a round as take ~2 ms (at least
      // one), 40 rounds: on a shared machine the best of many short rounds is the one no other
      // process interrupted. No forced GC between rounds: the calls just after one run several
      // times slower, which would swamp rounds this short. A 1 MB reply fed a few characters at
      // a time takes a second or so a call: two or three rounds there.
      const calibrate = (body: () => unknown) => {
        let calls = 0;
        const started = performance.now();
        while (calls < 1 || (performance.now() - started < 30 && calls < 20_000)) {
          body();
          calls += 1;
        }
        return (performance.now() - started) / calls;
      };
      const wholeMs = calibrate(whole);
      const incrementalMs = calibrate(incremental);
      const rounds = incrementalMs > 500 ? 2 : incrementalMs > 100 ? 3 : incrementalMs > 10 ? 9 : 40;
      const [wholeUs, incrementalUs] = bestMicrosSideBySide(rounds, [
        { iterations: Math.max(1, Math.round(2 / wholeMs)), body: whole },
        { iterations: Math.max(1, Math.round(2 / incrementalMs)), body: incremental },
      ], false);
      rows.push({
        label: size >= 1_000_000 ? `${size / 1_000_000} MB` : `${size / 1_000} KB`,
        size: text.length,
        chunk,
        chunks: chunks.length,
        wholeNsPerChar: (wholeUs! * 1e3) / text.length,
        incrementalNsPerChar: (incrementalUs! * 1e3) / text.length,
        nsPerChunk: (incrementalUs! * 1e3) / chunks.length,
        ratio: incrementalUs! / wholeUs!,
      });
    }
  }
  return rows;
}
