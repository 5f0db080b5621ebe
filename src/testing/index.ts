/**
 * Scripted stand-ins for a model, for Booth's demo, its tests and yours: test a
 * validator or a retry policy without a network or a bill.
 */

/** A well-formed reply, keys in the order Booth asks for. */
export function envelope(
  answer: unknown,
  confidence: unknown,
  extra: { ambiguous?: unknown; interpretations?: unknown; chosen_interpretation?: unknown } = {},
): string {
  return JSON.stringify({
    ambiguous: extra.ambiguous ?? false,
    interpretations: extra.interpretations ?? [],
    chosen_interpretation: extra.chosen_interpretation ?? null,
    answer,
    confidence,
  });
}

/**
 * One scripted model turn: a reply, something to throw, a non-string value to return, or
 * any of these after a delay (honoured by the async callFn; the sync one cannot wait).
 */
export type ScriptStep =
  | string
  | { readonly throws: unknown }
  | { readonly returns: unknown }
  | { readonly delayMs: number; readonly then: ScriptStep };

export interface ScriptedModel {
  /** Every prompt the model was sent, in order. */
  readonly prompts: readonly string[];
  /** A synchronous callFn for `check()`. */
  readonly sync: (prompt: string) => string;
  /** An async callFn for `acheck()`; each reply comes after `delayMs`. */
  readonly async: (prompt: string) => Promise<string>;
}

/**
 * A model that answers from a script, one step per call, and records every prompt.
 * Running past the end of the script throws, so a test notices an unexpected call.
 */
export function scriptedModel(steps: readonly ScriptStep[], { delayMs = 0 }: { delayMs?: number } = {}): ScriptedModel {
  const prompts: string[] = [];
  const take = (prompt: string): ScriptStep => {
    prompts.push(prompt);
    const step = steps[prompts.length - 1];
    if (step === undefined) throw new Error(`scripted model: no step for call ${prompts.length}`);
    return step;
  };
  const play = (step: ScriptStep): string => {
    if (typeof step === 'string') return step;
    if ('throws' in step) throw step.throws;
    if ('then' in step) return play(step.then);
    return step.returns as string;
  };
  const wait = (ms: number) => (ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : undefined);
  return {
    prompts,
    sync: (prompt) => play(take(prompt)),
    async: async (prompt) => {
      const step = take(prompt);
      await wait(delayMs);
      if (typeof step === 'object' && 'then' in step) await wait(step.delayMs);
      return play(step);
    },
  };
}
