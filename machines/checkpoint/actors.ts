import { fromPromise } from 'xstate';
import { usageFromReport, type UsageReport } from '../../src/decide/usage.js';
import type { CheckpointEvent, Heard, ModelCall, SchemaRequest, ValidationRequest } from './types.js';
import { AMBIGUITY_KNOWN, MEMBER_FAILED, READINGS_COMPLETE, ReplyReader } from '../../src/reply/stream-reader.js';
import { isReplyStream, iterate } from '../../src/reply/reply-streams.js';
import { type AnswerSchema, schemaRefuses } from '../../src/decide/schema.js';

/** The checkpoint machine's default actors, which a workflow may replace with `.provide()`. */

/** A workflow's model reports usage to the run that called it, as an interpreter's callFn does; a finished run has no use for it. */
export function usageReporter(run: { send(event: CheckpointEvent): void; getSnapshot(): { status: string } }, attempt: number): (report: UsageReport) => void {
  return (report) => {
    const usage = usageFromReport(report);
    if (run.getSnapshot().status === 'active') run.send({ type: 'model.usage', usage, attempt });
  };
}

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

/** A workflow's streamed reply tells the run that called it what it made known, while that run still runs. */
export function newsReporter(run: { send(event: CheckpointEvent): void; getSnapshot(): { status: string } }): (event: CheckpointEvent) => void {
  return (event) => {
    if (run.getSnapshot().status === 'active') run.send(event);
  };
}

/**
 * Calls the model once. The default runs `input.model`; provide a `fromPromise` of your own
 * instead. A model that returns a stream is read as it arrives: the run hears what decides
 * early (`input.hear`), and once it moves on the actor is stopped, its signal aborts and the
 * stream is ended; otherwise the whole text is the actor's output.
 */
export const defaultCallModel = fromPromise<unknown, ModelCall>(async ({ input, signal }) => {
  // Checked at start; a run resumed from a persisted snapshot has lost its functions, though.
  if (!input.model) throw new TypeError('No model: pass `model` in the input or provide a `callModel` actor.');
  const { attempt, replySchema, sample } = input;
  // An input built by other code may have left these out.
  const reportUsage = input.reportUsage ?? ((report: UsageReport) => void usageFromReport(report));
  const question = input.question ?? input.prompt;
  const messages = input.messages ?? [{ role: 'user', content: input.prompt }];
  const reply: unknown = await input.model(
    input.prompt,
    sample === undefined ? { attempt, signal, replySchema, question, messages, reportUsage } : { attempt, signal, replySchema, sample, question, messages, reportUsage },
  );
  return isReplyStream(reply) ? readWhole(reply, input, signal) : reply;
});

async function readWhole(stream: Parameters<typeof iterate>[0], input: ModelCall, signal: AbortSignal): Promise<string> {
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
/** Validates one answer against the schema, resolving to its Standard Schema result. Provide your own to validate elsewhere. */
export const defaultCheckSchema = fromPromise<unknown, SchemaRequest>(async ({ input }) => {
  if (!input.schema) throw new TypeError('No schema: pass `schema` in the input or provide a `checkSchema` actor.');
  return input.schema['~standard'].validate(input.answer);
});
/** Judges one answer. The default runs `input.validator`; provide a `fromPromise` of your own instead. */
export const defaultValidate = fromPromise<unknown, ValidationRequest>(async ({ input }) => {
  if (!input.validator) throw new TypeError('No validator: pass `validator` in the input or provide a `validate` actor.');
  return input.validator(input.answer);
});
