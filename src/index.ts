export { acheck } from './acheck.js';
export { check, resultFrom } from './check.js';
export { type Checkpoint, CheckpointError, type CheckpointStore, fileStore, type FileStoreOptions, memoryStore } from './checkpoints.js';
export type { CheckpointSecret } from './checkpoint-signing.js';
export type { CallRetryPolicy, CallTry } from './call-retries.js';
export { checkWithEvidence, type CompareFn } from './evidence.js';
export {
  AMBIGUOUS,
  BLOCKED,
  COMPARE_FAILED,
  CONFIDENCE_RETRY_MARKER,
  DEFAULT_MAX_RETRIES,
  DEFAULT_THRESHOLD,
  DISAGREEMENT_RETRY_MARKER,
  EMPTY_ANSWER,
  EVIDENCE_DISAGREES,
  INVALID_SCORE,
  NO_EVIDENCE,
  PARSE_RETRY_MARKER,
  type Reason,
  REPAIRED,
  type Status,
  UNCERTAIN,
  VALIDATION_RETRY_MARKER,
  VERIFIED,
} from './constants.js';
export { MAX_DEPTH } from './parse.js';
export { BoothRejected, type Method, type Step } from './result.js';
// The class is an implementation detail: results come only from the checks, so only their types are public.
export type {
  AcceptedResult,
  AmbiguousResult,
  BlockedResult,
  BoothResult,
  AnyBoothResult,
  CheckResult,
  EvidenceResult,
  TypedCheckResult,
  UncertainResult,
} from './result.js';
export type { AnswerSchema, JsonSchema, SchemaIssue } from './schema.js';
export type { JsonObject, JsonValue } from './json-objects.js';
export type { Attempt, ModelAnswer, Sample } from './attempt.js';
export type { AgreeFn, Cluster, ConfidenceSource } from './agreement.js';
export type { Validator } from './validation.js';
export type { Usage, UsageReport } from './usage.js';
export type { TelemetryAttributes, TelemetryOptions, TelemetryTracer } from './telemetry.js';
export type { SentPrompt } from './prompts.js';
export type {
  AsyncCallFn,
  AsyncCheckOptions,
  CallFn,
  CallInfo,
  CheckOptions,
  EvidenceOptions,
  Inspector,
  TypedAsyncCheckOptions,
  TypedCheckOptions,
} from './options.js';
