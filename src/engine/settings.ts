import type { Inspector } from './machine-run.js';
import type { AgreeFn, ConfidenceSource } from '../decide/agreement.js';
import type { Attempt } from '../decide/attempt.js';
import type { CallRetryPolicy } from '../decide/call-retries.js';
import type { CheckpointStore } from '../stores/store.js';
import type { AnswerSchema } from '../decide/schema.js';
import type { TelemetrySettings } from '../telemetry/settings.js';

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
  readonly sampleConcurrency: number;
  readonly agree: AgreeFn<unknown> | null;
  readonly confidenceFrom: ConfidenceSource;
  readonly telemetry: TelemetrySettings | null;
}
