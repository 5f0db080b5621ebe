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

/** One scripted model turn: a reply, something to throw, or a non-string value to return. */
export type ScriptStep = string | { readonly throws: unknown } | { readonly returns: unknown };

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
  const reply = (prompt: string): string => {
    prompts.push(prompt);
    const step = steps[prompts.length - 1];
    if (step === undefined) throw new Error(`scripted model: no step for call ${prompts.length}`);
    if (typeof step === 'string') return step;
    if ('throws' in step) throw step.throws;
    return step.returns as string;
  };
  return {
    prompts,
    sync: reply,
    async: async (prompt) => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return reply(prompt);
    },
  };
}
