import type { CheckpointEvent, Heard, ModelCall } from './types.js';
import { AMBIGUITY_KNOWN, MEMBER_FAILED, READINGS_COMPLETE, ReplyReader } from '../../src/reply/stream-reader.js';
import { iterate, type ReplyStream } from '../../src/reply/reply-streams.js';
import { type AnswerSchema, schemaRefuses } from '../../src/decide/schema.js';

/** A streamed reply, heard by the machine: what it is told as the reply arrives, from either path (an interpreter's call or a workflow's actor). */

/**
 * What the machine is told of a streamed reply after a chunk, from the reader's `bits`: only
 * what a decision waits for (its ambiguity, its readings, a member the schema refuses), in
 * that order, naming the call (and sample) it is about.
 */
export function streamNews(bits: number, reader: ReplyReader, call: number, sample: number | undefined, schema: AnswerSchema | null): CheckpointEvent[] {
  const news: CheckpointEvent[] = [];
  if ((bits & (AMBIGUITY_KNOWN | READINGS_COMPLETE | MEMBER_FAILED)) === 0) return news;
  const heard: Heard = { ambiguous: reader.ambiguous, interpretations: reader.interpretations, text: reader.text };
  const about = sample === undefined ? { call, heard } : { call, sample, heard };
  if (bits & AMBIGUITY_KNOWN) news.push({ type: 'reply.ambiguityKnown', ...about });
  if (bits & READINGS_COMPLETE) news.push({ type: 'reply.readingsComplete', ...about });
  // The type rule only flags a member: the schema's own verdict on it decides, as it would on the whole reply.
  const issues = bits & MEMBER_FAILED && schema !== null ? schemaRefuses(schema, reader.failure!) : null;
  if (issues !== null) news.push({ type: 'reply.memberFailed', ...about, issues });
  return news;
}

/** A workflow's streamed reply, read to its end (or until the actor is stopped), its news told to the run. */
export async function readWhole(stream: ReplyStream, input: ModelCall, signal: AbortSignal): Promise<string> {
  const chunks = iterate(stream);
  const reader = new ReplyReader(input.answerRule ?? null);
  const end = () => chunks.stop();
  signal.addEventListener('abort', end, { once: true });
  try {
    for (;;) {
      const step = await chunks.next();
      if (step.done) return reader.text;
      if (typeof step.value !== 'string') throw new TypeError('The reply stream yielded a value that is not a string: a ReplyStream yields the reply\'s text in chunks.');
      const bits = reader.push(step.value);
      if (input.hear && input.call !== undefined) for (const event of streamNews(bits, reader, input.call, input.sample, input.schema ?? null)) input.hear(event);
    }
  } catch (error) {
    // A stream that failed the call (a chunk that is not text, a news that threw) is ended: nobody reads the rest.
    end();
    throw error;
  } finally {
    signal.removeEventListener('abort', end);
  }
}
