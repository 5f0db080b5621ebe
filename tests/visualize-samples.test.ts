import { describe, expect, it } from 'vitest';
import { check } from '../src/index.js';
import { toSequence } from '../src/visualize/index.js';
import { envelope, scripted } from './helpers.js';

/** Three samples split 2–1 (a disagreement retry), then three that agree. */
const splitThenUnanimous = () =>
  check(
    scripted([
      envelope('Paris', 0.9),
      envelope('Lyon', 0.8),
      envelope('Paris', 0.9),
      envelope('Paris', 0.9),
      envelope('Paris', 0.95),
      envelope('Paris', 0.9),
    ]).sync,
    'Capital of France?',
    { samples: 3 },
  );

describe('a sampled run, as a sequence diagram', () => {
  it('names each sample call and reply, the vote, and the disagreement retry', () => {
    const result = splitThenUnanimous();
    expect(result.prompts.map((p) => p.kind)).toEqual(['first', 'disagreement']);
    expect(toSequence(result).split('\n')).toEqual([
      'sequenceDiagram',
      '  participant App',
      '  participant Booth',
      '  participant Model',
      '  App->>Booth: prompt',
      '  Booth->>Model: attempt 0, first prompt, sample 0',
      '  Model-->>Booth: #quot;Paris#quot; at confidence 0.9',
      '  Booth->>Model: attempt 0, first prompt, sample 1',
      '  Model-->>Booth: #quot;Lyon#quot; at confidence 0.8',
      '  Booth->>Model: attempt 0, first prompt, sample 2',
      '  Model-->>Booth: #quot;Paris#quot; at confidence 0.9',
      '  Note over Booth: vote #quot;Paris#quot; ×2, #quot;Lyon#quot; ×1: agreement 2 of 3, confidence 0.6',
      '  Note over Booth: sampling → agreementGate → ambiguityGate → confidenceGate → reconsidering',
      '  Booth->>Model: attempt 1, disagreement retry, sample 0',
      '  Model-->>Booth: #quot;Paris#quot; at confidence 0.9',
      '  Booth->>Model: attempt 1, disagreement retry, sample 1',
      '  Model-->>Booth: #quot;Paris#quot; at confidence 0.95',
      '  Booth->>Model: attempt 1, disagreement retry, sample 2',
      '  Model-->>Booth: #quot;Paris#quot; at confidence 0.9',
      `  Note over Booth: vote #quot;Paris#quot; ×3: agreement 3 of 3, confidence ${result.confidence}`,
      '  Note over Booth: sampling → agreementGate → ambiguityGate → confidenceGate → repaired',
      '  Booth-->>App: REPAIRED #quot;Paris#quot;',
      '',
    ]);
  });

  it('a sample whose call failed or whose reply did not parse is drawn as such, and does not vote', () => {
    const model = scripted([{ throws: new Error('503') }, 'junk', 'junk', envelope('Paris', 0.9), { throws: new Error('503') }, 'junk']);
    const diagram = toSequence(check(model.sync, 'q', { samples: 3 }));
    expect(diagram).toContain(
      [
        '  Booth->>Model: attempt 0, first prompt, sample 0',
        '  Model--xBooth: call failed: 503',
        '  Booth->>Model: attempt 0, first prompt, sample 1',
        '  Model-->>Booth: unparseable: no JSON object was found in the reply',
      ].join('\n'),
    );
    expect(diagram).toContain('  Note over Booth: no vote: no sample parsed\n  Note over Booth: sampling → agreementGate → reconsidering\n');
    expect(diagram).toContain('  Booth->>Model: attempt 1, parse retry, sample 2');
    expect(diagram).toContain('  Note over Booth: vote #quot;Paris#quot; ×1: agreement 1 of 1, confidence 0.9\n');
  });

  it('a long tally is shortened, the share and confidence kept, and model text cannot break the diagram', () => {
    const long = 'x'.repeat(60);
    const model = scripted([envelope(`${long};#"<a>\n`, 0.9), envelope('b', 0.9), envelope('c', 0.9)]);
    const note = toSequence(check(model.sync, 'q', { samples: 3, maxRetries: 0 }))
      .split('\n')
      .find((line) => line.includes('vote'));
    // 79 characters of `vote "xx…;#\"<a>\n" ×1, "b" ×1, "c" ×1`, then an ellipsis, then the figures whole.
    expect(note).toBe(`  Note over Booth: vote #quot;${long}#59;#35;\\#quot;#lt;a#gt;\\n#quot; ×1…: agreement 1 of 3, confidence 0.3`);
  });

  it('a one-sample run draws no sample, vote or share', () => {
    const diagram = toSequence(check(scripted([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).sync, 'q'));
    expect(diagram).not.toMatch(/sample|vote|agreement/);
  });
});
