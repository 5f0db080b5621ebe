/** Accepted on the first attempt. Met the acceptance condition; never a proof of truth. */
export const VERIFIED = 'VERIFIED';
/** Accepted after at least one reconsideration. */
export const REPAIRED = 'REPAIRED';
/** The question has several readings; returned at once, never retried. */
export const AMBIGUOUS = 'AMBIGUOUS';
/** No attempt met the bar, or the evidence check could not decide. */
export const UNCERTAIN = 'UNCERTAIN';
/** The answer disagreed with the caller's evidence (`checkWithEvidence` only). */
export const BLOCKED = 'BLOCKED';

export type Status =
  | typeof VERIFIED
  | typeof REPAIRED
  | typeof AMBIGUOUS
  | typeof UNCERTAIN
  | typeof BLOCKED;

/** `checkWithEvidence` was given a null, empty or blank answer. */
export const EMPTY_ANSWER = 'EMPTY_ANSWER';
/** `checkWithEvidence` was given no evidence. */
export const NO_EVIDENCE = 'NO_EVIDENCE';
/** The comparator scored the answer below the evidence threshold, or returned `false`. */
export const EVIDENCE_DISAGREES = 'EVIDENCE_DISAGREES';
/** The comparator threw. */
export const COMPARE_FAILED = 'COMPARE_FAILED';
/** The comparator returned something that is neither a boolean nor a number in [0, 1]. */
export const INVALID_SCORE = 'INVALID_SCORE';

/** `check()` / `acheck()`: the next call could have passed the `budget`, so none started. */
export const BUDGET_SPENT = 'BUDGET_SPENT';

export type Reason =
  | typeof BUDGET_SPENT
  | typeof EMPTY_ANSWER
  | typeof NO_EVIDENCE
  | typeof EVIDENCE_DISAGREES
  | typeof COMPARE_FAILED
  | typeof INVALID_SCORE;

export const DEFAULT_THRESHOLD = 0.7;
export const DEFAULT_MAX_RETRIES = 1;
export const DEFAULT_EVIDENCE_THRESHOLD = 0.7;

/** Appears, in Booth's own wording, only in the retry prompt sent after an unparseable reply. */
export const PARSE_RETRY_MARKER = 'could not be parsed';
/** Appears, in Booth's own wording, only in the retry prompt sent after a low-confidence answer. */
export const CONFIDENCE_RETRY_MARKER = 'Reconsider your previous answer';
/** Appears, in Booth's own wording, only in the retry prompt sent after a failed validation. */
export const VALIDATION_RETRY_MARKER = 'failed validation';
/** Appears, in Booth's own wording, only in the retry prompt sent after samples disagreed. */
export const DISAGREEMENT_RETRY_MARKER = 'samples of your answer disagreed';

/** Appears, in Booth's own wording, only in the prompt sent after the person who asked clarified an ambiguous question. */
export const CLARIFICATION_MARKER = 'The person who asked has clarified the question';
/** How many times an ambiguous question may be clarified before AMBIGUOUS stands, by default. */
export const DEFAULT_MAX_CLARIFICATIONS = 2;

/** What a retry prompt says when a validator returned false without a message. */
export const GENERIC_VALIDATION_MESSAGE = 'the validator returned false';
