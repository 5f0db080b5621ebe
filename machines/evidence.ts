import { and, assign, setup } from 'xstate';
import {
  BLOCKED,
  COMPARE_FAILED,
  EMPTY_ANSWER,
  EVIDENCE_DISAGREES,
  INVALID_SCORE,
  NO_EVIDENCE,
  type Reason,
  UNCERTAIN,
  VERIFIED,
} from '../src/decide/constants.js';
import {
  belowThresholdDetail,
  compareFailedDetail,
  EMPTY_ANSWER_DETAIL,
  FALSE_DETAIL,
  invalidScoreDetail,
  NO_EVIDENCE_DETAIL,
  readScore,
  type Score,
} from '../src/decide/scores.js';
import type { TraceStep } from './checkpoint/types.js';

/**
 * The evidence gate of `checkWithEvidence()`: no model call and no retry. A blank
 * answer or missing evidence cannot be judged; otherwise `comparing` waits for the
 * caller's comparator to score the answer against the evidence, and `scoreGate` decides.
 */

export type EvidenceState = 'answerGate' | 'evidenceGate' | 'comparing' | 'scoreGate' | 'verified' | 'blocked' | 'uncertain';

export type EvidenceStatus = typeof VERIFIED | typeof BLOCKED | typeof UNCERTAIN;

export interface EvidenceInput {
  /** The answer to judge; null when the caller had none. */
  readonly answer: string | null;
  /** Whether there is at least one piece of evidence. */
  readonly hasEvidence: boolean;
  /** Lowest agreement score accepted, in [0, 1]. */
  readonly threshold: number;
}

export interface EvidenceContext extends EvidenceInput {
  readonly score: Score | null;
  readonly status: EvidenceStatus | null;
  readonly reason: Reason | null;
  readonly detail: string | null;
  readonly trace: readonly TraceStep<EvidenceState>[];
}

export interface EvidenceOutput {
  readonly status: EvidenceStatus;
  readonly answer: string | null;
  /** The agreement score for VERIFIED and BLOCKED (1 or 0 for a boolean verdict); null otherwise. */
  readonly score: number | null;
  readonly reason: Reason | null;
  readonly detail: string | null;
  readonly trace: readonly TraceStep<EvidenceState>[];
}

/** What the world tells the machine while `comparing`: what the comparator returned, or threw. */
export type EvidenceEvent =
  | { readonly type: 'comparator.returned'; readonly value: unknown }
  | { readonly type: 'comparator.threw'; readonly error: unknown };

// The machine is marked pure, and so are the calls inside it (this one, and `and`): tsup puts it
// in the chunk every entry point loads, and a bundler keeps top-level calls it cannot prove free
// of side effects, so unmarked it stayed even in a bundle of check() alone. (A function
// declaration: bundlers honour the mark there, and not on an arrow function once tsup has made
// its `const` a `var`.)
/* @__NO_SIDE_EFFECTS__ */
function enter(state: EvidenceState) {
  return { type: 'enter', params: { state } } as const;
}

export const evidenceMachine = /* @__PURE__ */ setup({
  // Stryker disable next-line ObjectLiteral: types only, read by TypeScript and not at run time
  types: {
    input: {} as EvidenceInput,
    context: {} as EvidenceContext,
    output: {} as EvidenceOutput,
    events: {} as EvidenceEvent,
  },
  // The score guards run only in scoreGate, after recordScore has set the score, and `agrees`
  // and `meetsThreshold` only after isVerdict or isScore: the `?.` and the fallbacks are for
  // the type checker.
  guards: {
    answerIsBlank: ({ context }) => context.answer === null || context.answer.trim() === '',
    hasNoEvidence: ({ context }) => !context.hasEvidence,
    // Stryker disable next-line OptionalChaining: the score is set in scoreGate
    isVerdict: ({ context }) => context.score?.kind === 'boolean',
    // Stryker disable next-line OptionalChaining: the score is set in scoreGate
    isScore: ({ context }) => context.score?.kind === 'number',
    agrees: ({ context }) =>
      // Stryker disable next-line OptionalChaining,ConditionalExpression: evaluated only after isVerdict, so the score is a verdict
      context.score?.kind === 'boolean'
        ? context.score.value === 1
        : // Stryker disable next-line BooleanLiteral: unreachable, as above
          false,
    meetsThreshold: ({ context }) =>
      // Stryker disable next-line OptionalChaining,ConditionalExpression: evaluated only after isScore, so the score is a number
      context.score?.kind === 'number'
        ? context.score.value >= context.threshold
        : // Stryker disable next-line BooleanLiteral: unreachable, as above
          false,
  },
  actions: {
    enter: assign(({ context }, { state }: { state: EvidenceState }) => ({
      trace: [...context.trace, { state, attempt: 0 }],
    })),
    recordScore: assign((_, { returned }: { returned: unknown }) => ({ score: readScore(returned) })),
    verify: assign({ status: VERIFIED }),
    block: assign(({ context }) => ({
      status: BLOCKED,
      reason: EVIDENCE_DISAGREES,
      detail:
        // Stryker disable next-line OptionalChaining: block runs from scoreGate, where the score is set
        context.score?.kind === 'number' ? belowThresholdDetail(context.score.value, context.threshold) : FALSE_DETAIL,
    })),
    giveUp: assign((_, { reason, detail }: { reason: Reason; detail: string }) => ({
      status: UNCERTAIN,
      reason,
      detail,
    })),
  },
}).createMachine({
  id: 'evidence',
  context: ({ input }) => ({ ...input, score: null, status: null, reason: null, detail: null, trace: [] }),
  initial: 'answerGate',
  states: {
    answerGate: {
      entry: enter('answerGate'),
      always: [
        {
          guard: 'answerIsBlank',
          target: 'uncertain',
          actions: { type: 'giveUp', params: { reason: EMPTY_ANSWER, detail: EMPTY_ANSWER_DETAIL } },
        },
        { target: 'evidenceGate' },
      ],
    },
    evidenceGate: {
      entry: enter('evidenceGate'),
      always: [
        {
          guard: 'hasNoEvidence',
          target: 'uncertain',
          actions: { type: 'giveUp', params: { reason: NO_EVIDENCE, detail: NO_EVIDENCE_DETAIL } },
        },
        { target: 'comparing' },
      ],
    },
    comparing: {
      entry: enter('comparing'),
      on: {
        'comparator.returned': {
          target: 'scoreGate',
          actions: { type: 'recordScore', params: ({ event }) => ({ returned: event.value }) },
        },
        'comparator.threw': {
          target: 'uncertain',
          actions: {
            type: 'giveUp',
            params: ({ event }) => ({ reason: COMPARE_FAILED, detail: compareFailedDetail(event.error) }),
          },
        },
      },
    },
    scoreGate: {
      entry: enter('scoreGate'),
      always: [
        { guard: /* @__PURE__ */ and(['isVerdict', 'agrees']), target: 'verified', actions: 'verify' },
        { guard: 'isVerdict', target: 'blocked', actions: 'block' },
        { guard: /* @__PURE__ */ and(['isScore', 'meetsThreshold']), target: 'verified', actions: 'verify' },
        { guard: 'isScore', target: 'blocked', actions: 'block' },
        {
          target: 'uncertain',
          actions: {
            type: 'giveUp',
            params: ({ context }) => ({
              reason: INVALID_SCORE,
              // Stryker disable next-line OptionalChaining,ConditionalExpression: the only score that reaches this transition is an invalid one
              detail: invalidScoreDetail(context.score?.kind === 'invalid' ? context.score.returned : undefined),
            }),
          },
        },
      ],
    },
    verified: { type: 'final', entry: enter('verified') },
    blocked: { type: 'final', entry: enter('blocked') },
    uncertain: { type: 'final', entry: enter('uncertain') },
  },
  output: ({ context }) => ({
    status: context.status ?? UNCERTAIN,
    answer: context.reason === EMPTY_ANSWER ? null : context.answer,
    score: context.score === null || context.score.kind === 'invalid' ? null : context.score.value,
    reason: context.reason,
    detail: context.detail,
    trace: context.trace,
  }),
});
