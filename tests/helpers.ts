import { type ScriptStep, scriptedModel } from '../src/testing.js';

export { envelope } from '../src/testing.js';
export type Step = ScriptStep;

/** A scripted model that also records the attempt index of each call. */
export function scripted(steps: readonly Step[]) {
  const model = scriptedModel(steps);
  const attempts: number[] = [];
  return {
    prompts: model.prompts,
    attempts,
    sync: (prompt: string, info: { attempt: number }) => {
      attempts.push(info.attempt);
      return model.sync(prompt);
    },
    async: async (prompt: string, info: { attempt: number }) => {
      attempts.push(info.attempt);
      return model.async(prompt);
    },
  };
}
