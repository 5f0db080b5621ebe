import { describe, expect, it } from 'vitest';
import { check } from '../../src/index.js';
import { numberText } from '../../src/util/numbers.js';
import { toHtml, toSequence } from '../../src/visualize/index.js';
import { envelope, scripted } from '../fixtures/helpers.js';

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
      `  Note over Booth: vote #quot;Paris#quot; ×3: agreement 3 of 3, confidence ${numberText(result.confidence!)}`,
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

/** Replies a hostile model might write: markup that would end the page's elements, quotes, newlines. */
const HOSTILE_ANSWERS = ['</script><script>alert(1)</script>', '<img src=x onerror="alert(1)">', `it's "quoted"\n</td></tr></table>`];

/** Three samples with hostile answers, a call that failed with a hostile message, and an `agree` that throws one. */
const hostileSamples = () =>
  check(
    scripted([
      envelope(HOSTILE_ANSWERS[0], 0.9),
      envelope(HOSTILE_ANSWERS[1], 0.8),
      { throws: new Error('<img src=y onerror=alert(2)>') },
      `<script>alert(3)</script>${envelope(HOSTILE_ANSWERS[2], 0.7)}`,
    ]).sync,
    'q',
    {
      samples: 4,
      maxRetries: 0,
      agree: () => {
        throw new Error('<b onmouseover=alert(4)>');
      },
    },
  );

/** The rows of one table of the page, each as its cells' text with tags stripped and entities left as written. */
function rows(html: string, section: string, table: string): string[][] {
  const start = html.indexOf(`<section class="vote" data-vote="${section}">`);
  const block = html.slice(start, html.indexOf('</section>', start));
  const open = block.indexOf(`<table class="${table}">`);
  if (start === -1 || open === -1) return [];
  const body = block.slice(open, block.indexOf('</table>', open));
  return [...body.matchAll(/<tr data-[^>]*>([\s\S]*?)<\/tr>/g)].map(([, row]) =>
    [...row!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map(([, cell]) => cell!.replace(/<[^>]*>/g, '')),
  );
}

describe('a sampled run, as an HTML trace', () => {
  it('shows each attempt\'s samples, the winners marked, the clusters, the share and the combined confidence', async () => {
    const result = splitThenUnanimous();
    const html = await toHtml(result);
    expect(html).toContain('<span data-name="agreement">agreement <b>1</b></span>');
    expect(html).toContain('<span data-name="samples">samples <b>3 per attempt</b></span><span data-name="confidenceFrom">confidenceFrom <b>hybrid</b></span>');
    expect(html).toContain('<h2>Samples and votes</h2>');
    expect(html).toContain('<h3>attempt 0: first prompt, 3 samples</h3>');
    expect(html).toContain('<h3>attempt 1: disagreement retry, 3 samples</h3>');
    expect(html).toContain('<span data-name="agreement">agreement <b>2 of 3</b></span><span data-name="confidence">confidence <b>0.6 (hybrid)</b></span>');
    expect(html).toContain(`<span data-name="agreement">agreement <b>3 of 3</b></span><span data-name="confidence">confidence <b>${numberText(result.confidence!)} (hybrid)</b></span>`);
    expect(rows(html, '0', 'samples').map((cells) => cells.slice(0, 6))).toEqual([
      ['0', '&quot;Paris&quot;', '0.9', 'parsed', '', '1 (winner)'],
      ['1', '&quot;Lyon&quot;', '0.8', 'parsed', '', '2'],
      ['2', '&quot;Paris&quot;', '0.9', 'parsed', '', '1 (winner)'],
    ]);
    expect(html.match(/<tr data-sample="\d+" class="winner">/g)).toHaveLength(5);
    expect(rows(html, '0', 'clusters')).toEqual([
      ['1 (winner)', '&quot;Paris&quot;', '2', '0.9', '0, 2'],
      ['2', '&quot;Lyon&quot;', '1', '0.8', '1'],
    ]);
    expect(rows(html, '1', 'clusters')).toEqual([['1 (winner)', '&quot;Paris&quot;', '3', numberText(result.confidence!), '0, 1, 2']]);
    // The attempts table is the same as for one sample: one row per attempt, not per sample.
    expect(html.match(/<tr data-attempt=/g)).toHaveLength(2);
  });

  it('shows its figures rounded, where arithmetic left tails; the JSON keeps them whole', async () => {
    // Paris at 0.9 and 0.8, Lyon at 0.7: Paris's mean is 0.8500000000000001, the agreement 2/3 and the confidence 0.5666666666666667.
    const result = check(scripted([envelope('Paris', 0.9), envelope('Paris', 0.8), envelope('Lyon', 0.7)]).sync, 'q', { samples: 3, maxRetries: 0 });
    expect([result.confidence, result.agreement, result.attempts[0]!.clusters![0]!.meanConfidence]).toEqual([0.5666666666666667, 2 / 3, 0.8500000000000001]);
    const html = await toHtml(result);
    expect(html).toContain('<span data-name="confidence">confidence <b>0.5667</b></span><span data-name="agreement">agreement <b>0.6667</b></span>');
    expect(html).toContain('<span data-name="confidence">confidence <b>0.5667 (hybrid)</b></span>');
    expect(rows(html, '0', 'clusters').map((cells) => cells[3])).toEqual(['0.85', '0.7']);
    expect(html).toContain('<td class="why rejected">confidence 0.5667 below the threshold 0.7</td>');
    expect(html).not.toMatch(/0\.8500000000000001|0\.5666666666666667|0\.6666666666666666/);
    expect(toSequence(result)).toContain('agreement 2 of 3, confidence 0.5667\n');
    expect(JSON.stringify(result)).toContain('"meanConfidence":0.8500000000000001');
  });

  it('shows a cluster by the form most of its samples gave, the first given among equals', async () => {
    const result = check(scripted([envelope('paris.', 0.9), envelope('Paris', 0.9), envelope('Lyon', 0.8), envelope('Paris', 0.8)]).sync, 'q', {
      samples: 4,
      maxRetries: 0,
    });
    expect(result.attempts[0]!.clusters!.map((c) => c.answer)).toEqual(['paris.', 'Lyon']);
    const html = await toHtml(result);
    expect(rows(html, '0', 'clusters').map((cells) => cells.slice(1, 3))).toEqual([
      ['&quot;Paris&quot;', '3'],
      ['&quot;Lyon&quot;', '1'],
    ]);
    expect(toSequence(result)).toContain('vote #quot;Paris#quot; ×3, #quot;Lyon#quot; ×1:');
    // Two forms twice each: the one given first.
    const tied = check(scripted([envelope('Paris', 0.9), envelope('paris.', 0.9), envelope('paris.', 0.9), envelope('Paris', 0.9)]).sync, 'q', {
      samples: 4,
      maxRetries: 0,
    });
    expect(rows(await toHtml(tied), '0', 'clusters').map((cells) => cells[1])).toEqual(['&quot;Paris&quot;']);
  });

  it('names failed and unparsed samples, which join no cluster, and says when no sample voted', async () => {
    const model = scripted([{ throws: new Error('503') }, 'junk', 'junk', envelope('Paris', 0.9), { throws: new Error('503') }, 'junk']);
    const html = await toHtml(check(model.sync, 'q', { samples: 3 }));
    expect(rows(html, '0', 'samples').map((cells) => cells.slice(0, 6))).toEqual([
      ['0', '—', '—', 'call failed', '503', '—'],
      ['1', '—', '—', 'unparseable', 'no JSON object was found in the reply', '—'],
      ['2', '—', '—', 'unparseable', 'no JSON object was found in the reply', '—'],
    ]);
    expect(html).toMatch(/data-vote="0">\n<h3>[^<]*<\/h3>\n<div class="summary"><span data-name="vote">vote <b>none: no sample parsed<\/b><\/span><\/div>/);
    expect(rows(html, '0', 'clusters')).toEqual([]);
    expect(rows(html, '1', 'samples').map((cells) => cells.slice(3, 6))).toEqual([
      ['parsed', '', '1 (winner)'],
      ['call failed', '503', '—'],
      ['unparseable', 'no JSON object was found in the reply', '—'],
    ]);
  });

  it('escapes whatever the samples, their errors and a failing agree wrote', async () => {
    const result = hostileSamples();
    expect(result.attempts[0]!.agreeError).toContain('<b onmouseover');
    const html = await toHtml(result);
    expect(html).not.toMatch(/<script|<img|<b on|<\/script/i);
    // The attempts, the samples and the clusters: nothing the model wrote closed a table.
    expect(html.match(/<\/table>/g)).toHaveLength(3);
    const cells = rows(html, '0', 'samples');
    expect(cells.map((row) => row[1])).toEqual([
      '&quot;&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot;',
      '&quot;&lt;img src=x onerror=\\&quot;alert(1)\\&quot;&gt;&quot;',
      '—',
      '&quot;it&#39;s \\&quot;quoted\\&quot;\\n&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&quot;',
    ]);
    expect(cells[2]![4]).toBe('&lt;img src=y onerror=alert(2)&gt;');
    expect(cells[3]![6]).toContain('&lt;script&gt;alert(3)&lt;/script&gt;');
    expect(html).toContain('<span data-name="agree failed">agree failed <b>agree threw Error: &lt;b onmouseover=alert(4)&gt;</b></span>');
  });

  it('a one-sample page has no sample markup, style or figure', async () => {
    const html = await toHtml(check(scripted([envelope('Lyon', 0.3), envelope('Paris', 0.9)]).sync, 'q'));
    expect(html).not.toMatch(/Samples and votes|data-vote|data-sample|data-cluster|tr\.winner|data-name="(agreement|samples|confidenceFrom)"/);
  });
});
