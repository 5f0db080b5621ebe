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
  const shell = envelopeReply({ ambiguous: false, interpretations: [], chosen: null, answer: '', confidence: 0.9 }).length;
  return envelopeReply({ ambiguous: false, interpretations: [], chosen: null, answer: prose(mulberry32(seed), Math.max(0, size - shell) / 4), confidence: 0.9 });
}

export function readerRows(): ReaderRow[] {
  return [];
}
