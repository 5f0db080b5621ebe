import { defaultAgree } from '../../src/decide/agreement.js';
import type { VoteSettings } from '../../src/decide/sampling.js';
import type { CheckpointSettings } from './types.js';

/** What the vote and the reader use that the caller may give: their own `agree` and `parseFn`, or Booth's. */

/** How the samples vote: a custom `agree`, or the default for the answer's kind. */
export function voteSettings(settings: CheckpointSettings): VoteSettings {
  const typed = settings.answerFormat !== null;
  return { typed, agree: callersOwn(settings, 'agree') ?? defaultAgree(typed), confidenceFrom: settings.confidenceFrom };
}

/**
 * The caller's own `agree` or `parseFn`, or null for Booth's. A snapshot persisted as JSON
 * holds no function: one restored from it has the key absent where the run had a function
 * (null where it had none), and going on with Booth's default would answer by other rules
 * without a word. It stops the run instead, saying how to give the function back.
 */
export function callersOwn<K extends 'agree' | 'parseFn'>(settings: CheckpointSettings, name: K): ReturnType<NonNullable<CheckpointSettings[K]>> | null {
  const kept = settings[name] as CheckpointSettings[K] | undefined;
  if (kept === undefined) {
    throw new TypeError(
      `This run was started with ${name === 'agree' ? 'an' : 'a'} \`${name}\` of its own, which its persisted snapshot cannot hold (functions do not survive JSON): restore it with withFunctions(snapshot, { ${name} }), or resume it with acheck() and a checkpoint store, which gives it back itself.`,
    );
  }
  return kept === null ? null : (kept() as ReturnType<NonNullable<CheckpointSettings[K]>>);
}

