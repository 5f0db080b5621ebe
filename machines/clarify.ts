import { assign, fromPromise, setup } from 'xstate';
import type { CheckpointOutput, ModelFn } from './checkpoint/types.js';
import { checkpointMachine } from './checkpoint/machine.js';

/**
 * A worked example of embedding the checkpoint in a workflow (not part of the package):
 * ask; when the question is AMBIGUOUS, let someone pick a reading and ask again with
 * it; when the answer is UNCERTAIN, ask a second model; when VERIFIED or REPAIRED,
 * done. `chooseReading` is a placeholder actor: provide the real one (a user prompt, a
 * rule) with `.provide()`.
 */

export interface ClarifyInput {
  readonly question: string;
  /** The everyday model. */
  readonly model: ModelFn;
  /** The model to escalate to when the first one cannot reach the bar. */
  readonly expert: ModelFn;
}

export interface ClarifyContext extends ClarifyInput {
  /** The question as asked now: after clarifying, with the chosen reading spelled out. */
  readonly prompt: string;
  readonly escalated: boolean;
  readonly clarifications: number;
  readonly result: CheckpointOutput | null;
}

export interface ClarifyOutput {
  readonly result: CheckpointOutput | null;
  readonly prompt: string;
  readonly escalated: boolean;
}

/** A workflow that clarifies at most this many times before it escalates instead. */
const MAX_CLARIFICATIONS = 2;

export const clarifyMachine = setup({
  types: {
    input: {} as ClarifyInput,
    context: {} as ClarifyContext,
    output: {} as ClarifyOutput,
  },
  actors: {
    booth: checkpointMachine,
    /** Picks one reading of an ambiguous question. */
    chooseReading: fromPromise<string, { readonly question: string; readonly readings: readonly string[] }>(async () => {
      throw new Error('Provide a `chooseReading` actor: clarifyMachine.provide({ actors: { chooseReading } })');
    }),
  },
  guards: {
    wasAccepted: ({ context }) => context.result?.status === 'VERIFIED' || context.result?.status === 'REPAIRED',
    canClarify: ({ context }) => context.result?.status === 'AMBIGUOUS' && context.clarifications < MAX_CLARIFICATIONS,
    canEscalate: ({ context }) => !context.escalated,
  },
  actions: {
    keepResult: assign((_, { result }: { result: CheckpointOutput }) => ({ result })),
  },
}).createMachine({
  id: 'clarify',
  context: ({ input }) => ({ ...input, prompt: input.question, escalated: false, clarifications: 0, result: null }),
  initial: 'asking',
  states: {
    asking: {
      invoke: {
        id: 'booth',
        src: 'booth',
        input: ({ context }) => ({ prompt: context.prompt, model: context.escalated ? context.expert : context.model }),
        onDone: { target: 'judging', actions: { type: 'keepResult', params: ({ event }) => ({ result: event.output }) } },
        onError: 'failed',
      },
    },
    judging: {
      always: [
        { guard: 'wasAccepted', target: 'answered' },
        { guard: 'canClarify', target: 'clarifying' },
        { guard: 'canEscalate', target: 'asking', actions: assign({ escalated: true }) },
        { target: 'unanswered' },
      ],
    },
    clarifying: {
      invoke: {
        id: 'chooseReading',
        src: 'chooseReading',
        input: ({ context }) => ({ question: context.question, readings: context.result?.interpretations ?? [] }),
        onDone: {
          target: 'asking',
          actions: assign(({ context, event }) => ({
            prompt: `${context.question}\n\nAnswer it in this sense: ${event.output}`,
            clarifications: context.clarifications + 1,
          })),
        },
        onError: 'failed',
      },
    },
    answered: { type: 'final' },
    unanswered: { type: 'final' },
    failed: { type: 'final' },
  },
  output: ({ context }) => ({ result: context.result, prompt: context.prompt, escalated: context.escalated }),
});
