/**
 * The incremental reader's cost (bench/stream.ts, section 3): an envelope of 1 KB to 1 MB fed
 * in chunks of 1, 4 and 64 characters, against `parseReply` reading the whole text once.
 */
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

export function readerRows(): ReaderRow[] {
  return [];
}
