/**
 * The machine definitions, for users who embed Booth in their own XState workflows or
 * draw and inspect it. `check()`, `acheck()` and `checkWithEvidence()` run these same
 * machines.
 */
export { type CheckpointContext, type CheckpointEvent, type CheckpointInput, type CheckpointOutput, type CheckpointSettings, type CheckpointState, type CheckpointStatus, type ModelCall, type ModelFn, type RunSettings, type SchemaRequest, type TraceStep, type ValidationRequest, type WorkflowValidator } from './checkpoint/types.js';
export { checkpointMachine, clarifyingMachine } from './checkpoint/machine.js';
export type { ChoiceEvent } from '../src/decide/clarification.js';
export type { Clarification } from '../src/decide/prompts.js';
export { type RunFunctions, withFunctions } from './checkpoint/restore.js';
export { modelActor, validatorActor } from './actors.js';
export {
  type EvidenceContext,
  type EvidenceEvent,
  type EvidenceInput,
  type EvidenceOutput,
  type EvidenceState,
  type EvidenceStatus,
  evidenceMachine,
} from './evidence.js';
