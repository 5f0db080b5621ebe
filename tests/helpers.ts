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

/** One scripted model step: a reply, a value to throw, or a non-string value to return. */
export type Step = string | { readonly throws: unknown } | { readonly returns: unknown };

/** A model that answers from a script and records every prompt it was sent. */
export function scripted(steps: readonly Step[]) {
  const prompts: string[] = [];
  const attempts: number[] = [];
  const reply = (prompt: string, info: { attempt: number }): unknown => {
    prompts.push(prompt);
    attempts.push(info.attempt);
    const step = steps[prompts.length - 1];
    if (step === undefined) throw new Error(`scripted model: no step ${prompts.length - 1}`);
    if (typeof step === 'string') return step;
    if ('throws' in step) throw step.throws;
    return step.returns;
  };
  return {
    prompts,
    attempts,
    sync: (prompt: string, info: { attempt: number }) => reply(prompt, info) as string,
    async: async (prompt: string, info: { attempt: number }) => reply(prompt, info) as string,
  };
}
