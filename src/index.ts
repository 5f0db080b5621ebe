export { acheck } from './api/acheck.js';
export { type CheckStream, streamCheck } from './api/stream-check.js';
export type { PartialReply } from './engine/partial-reply.js';
export { check } from './api/check.js';
export { clarify, type ClarifyOptions, type TypedClarifyOptions } from './api/clarify.js';
export type { ClarificationChoice } from './decide/clarification.js';
export { resultFrom } from './results/result-from.js';
export { type Checkpoint, CheckpointError, type CheckpointStore } from './stores/store.js';
export { memoryStore } from './stores/memory-store.js';
export type { CheckpointSecret } from './stores/signed-store.js';
export type { CallRetryPolicy, CallTry } from './decide/call-retries.js';
export { checkWithEvidence, type CompareFn } from './api/evidence.js';
export {
  AMBIGUOUS,
  BLOCKED,
  BUDGET_SPENT,
  CLARIFICATION_MARKER,
  COMPARE_FAILED,
  CONFIDENCE_RETRY_MARKER,
  DEFAULT_MAX_CLARIFICATIONS,
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
} from './decide/constants.js';
export { MAX_DEPTH, type ParseFn } from './reply/parse.js';
export { BoothRejected, type Method, type ModelSpend, type Step } from './results/result.js';
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
} from './results/result.js';
export type { AnswerSchema, JsonSchema, SchemaIssue } from './decide/schema.js';
export type { JsonObject, JsonValue } from './reply/json-objects.js';
export type { Attempt, ModelAnswer, Sample } from './decide/attempt.js';
export type { AgreeFn, Cluster, ConfidenceSource } from './decide/agreement.js';
export type { Validator } from './decide/validation.js';
export type { Usage, UsageReport } from './decide/usage.js';
export type { TelemetryApi, TelemetryAttributes, TelemetryOptions, TelemetryTracer } from './telemetry/settings.js';
export { type ChatMessage, type ChatTurn, type Clarification, INSTRUCTIONS, type SentPrompt } from './decide/prompts.js';
export type { AsyncCallFn, CallFn, CallInfo, ReplyStream } from './decide/model-call.js';
export type { AsyncCheckOptions, CheckOptions, Escalate, EvidenceOptions, TypedAsyncCheckOptions, TypedCheckOptions } from './api/options.js';
export type { BudgetOption, Escalation, SamplesOption } from '../machines/checkpoint/types.js';
export type { SampleStop } from './decide/sampling.js';
export type { Inspector } from './engine/machine-run.js';
