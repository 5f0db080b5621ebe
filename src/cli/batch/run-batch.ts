import { acheck } from '../../api/acheck.js';
import type { AsyncCallFn } from '../../decide/model-call.js';
import { type BatchCheckOptions, type Question, readEarlierResults, readQuestions } from './input.js';
import { type BatchOutput, ResultLines, resultRow } from './output.js';
import { type BatchSummary, summarize } from './summary.js';

/**
 * `booth batch`: checks every question of a JSONL file, `concurrency` at a time, and
 * appends each result to the output as soon as it is known, so a killed run loses only
 * the checks in flight and a rerun skips the ids already written — except the questions
 * whose every call failed, which a rerun checks again unless `retryFailed` is false.
 */

export interface BatchSettings extends BatchCheckOptions, BatchOutput {
  readonly input: string;
  readonly concurrency: number;
  readonly callFn: AsyncCallFn;
  /** Check again the questions whose every call failed in an earlier run. Default true. */
  readonly retryFailed?: boolean | undefined;
  /** Keep the prompts sent in each result line. Default false: they repeat the question at length. */
  readonly withPrompts?: boolean | undefined;
}

export async function runBatch(settings: BatchSettings): Promise<BatchSummary> {
  const questions = readQuestions(settings.input, settings.warn);
  const wanted = new Set(questions.map((q) => String(q.id)));
  const earlier = readEarlierResults(settings.output, settings.retryFailed ?? true, wanted, settings.warn);
  const pending = questions.filter((q) => !earlier.done.has(String(q.id)));
  const lines = new ResultLines(settings.output, earlier.tallies, pending.length, settings.progress);
  let next = 0;
  let failure: unknown = null;
  // Stops every worker at once: on Ctrl-C (the caller's signal) or on a failure here.
  const halt = new AbortController();
  const signal = AbortSignal.any([settings.signal, halt.signal]);
  lines.showProgress();

  const worker = async () => {
    try {
      while (next < pending.length && !signal.aborted) {
        const question = pending[next++] as Question;
        const started = performance.now();
        let result;
        try {
          result = await acheck(settings.callFn, question.prompt, {
            threshold: settings.threshold,
            maxRetries: settings.maxRetries,
            timeoutMs: settings.timeoutMs,
            callRetries: settings.callRetries,
            samples: settings.samples,
            confidenceFrom: settings.confidenceFrom,
            schema: settings.schema,
            telemetry: settings.telemetry,
            signal,
          });
        } catch (error) {
          if (signal.aborted) return;
          throw error;
        }
        if (halt.signal.aborted) return;
        lines.write(resultRow(question, Math.round(performance.now() - started), result, settings.withPrompts ?? false));
      }
    } catch (error) {
      failure ??= error;
      halt.abort(error);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(Math.max(1, settings.concurrency), Math.max(1, pending.length)) }, worker));
  } finally {
    lines.close();
  }
  if (failure !== null) throw failure;
  return summarize(questions.length, questions.length - pending.length, earlier.redone, lines.written, settings.signal.aborted, lines.tallies);
}
