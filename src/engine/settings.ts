import type { Inspector } from './machine-run.js';
import type { AgreeFn, ConfidenceSource } from '../decide/agreement.js';
import type { Attempt } from '../decide/attempt.js';
import type { CallRetryPolicy } from '../decide/call-retries.js';
import type { CheckpointStore } from '../stores/store.js';
import type { AnswerSchema } from '../decide/schema.js';
import type { TelemetrySettings } from '../telemetry/settings.js';
import type { ChatTurn } from '../decide/prompts.js';
import type { ParseFn } from '../reply/parse.js';
import type { Budget } from '../decide/budget.js';
import type { PartialReply } from './partial-reply.js';
import type { SamplePlan } from '../decide/sampling.js';
import type { Escalation } from '../options/read-options.js';
import type { AsyncCallFn } from '../decide/model-call.js';

/** A check's options once read: what the engines run with. */

export interface CheckSettings {
  readonly threshold: number;
  readonly maxRetries: number;
  readonly onAttempt: ((index: number, attempt: Attempt<unknown>) => unknown) | null;
  readonly validator: ((answer: unknown) => unknown) | null;
  readonly schema: AnswerSchema | null;
  readonly signal: AbortSignal | null;
  readonly inspect: Inspector | null;
  readonly timeoutMs: number | null;
  readonly deadlineMs: number | null;
  readonly callRetries: CallRetryPolicy | null;
  readonly checkpoint: { readonly store: CheckpointStore; readonly key: string } | null;
  readonly samples: number;
  readonly plan: SamplePlan;
  readonly sampleConcurrency: number;
  readonly agree: AgreeFn<unknown> | null;
  readonly confidenceFrom: ConfidenceSource;
  readonly telemetry: TelemetrySettings | null;
  readonly system: string | null;
  readonly messages: readonly ChatTurn[];
  /** Resolved: Booth's text for the answer format, or the caller's. */
  readonly instructions: string;
  readonly parseFn: ParseFn | null;
  readonly awaitClarification: boolean;
  readonly maxClarifications: number;
  /** The person's answer to a run waiting under the checkpoint's key, read against its readings once it is loaded; null for none. */
  readonly clarification: unknown;
  /** The name attempts give the callFn's model; null for none. */
  readonly modelName: string | null;
  /** The models asked in turn after the callFn's, each its own callFn. */
  readonly escalate: readonly Escalation<AsyncCallFn>[];
  readonly budget: Budget | null;
  /** acheck() only: told as a streamed reply arrives. */
  readonly onPartial: ((partial: PartialReply) => void) | null;
}
