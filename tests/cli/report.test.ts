import { existsSync, linkSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_DRAWN_PATHS, readResultLines, reportModel } from '../../src/cli/report/model.js';
import { writeReport } from '../../src/cli/report/write.js';
import { scriptJson } from '../../src/visualize/escape.js';
import { runDot } from '../../src/visualize/run.js';
import { envelope } from '../fixtures/helpers.js';
import { batchFiles, booth, dir, resultsIn, useProvider } from '../fixtures/booth-process.js';
import { clarifiedLine, manyPathLines, reportLines, reportQuestions, sampledLine } from '../fixtures/report-lines.js';

/** `booth report` and `booth batch --report`: what the page is computed from, and the command as a script sees it. */

const server = useProvider();

/** `lines` written to a fresh results file; its path. */
function resultsFile(lines: readonly string[]): string {
  const file = join(dir(), 'results.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** The rows the page's script reads, from the JSON it holds. */
function pageRows(page: string): unknown[][] {
  const data = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(page)?.[1];
  return (JSON.parse(data ?? 'null') as { rows: unknown[][] }).rows;
}

describe('the report model', () => {
  it('counts as the batch summary does, tells outages from bad replies, and scores the expected answers', () => {
    const file = resultsFile(reportLines(16));
    const warnings: string[] = [];
    const model = reportModel(file, readResultLines(file, (m) => warnings.push(m)), new Map([['q3', 'What is question 3?']]));
    expect(warnings).toEqual([]);
    expect(model.summary.results).toBe(16);
    expect(model.summary.byStatus).toEqual({ VERIFIED: 6, REPAIRED: 2, AMBIGUOUS: 2, UNCERTAIN: 6 });
    expect(model.summary.byMethod).toEqual({ confidence: 10, parse_failure: 2, call_failure: 2, ambiguity: 2 });
    // The two outages heard nothing; the two unparseable questions sent two bad replies each.
    expect(model.summary.everyCallFailed).toBe(2);
    expect(model.summary.unparseable).toBe(4);
    expect(model.attemptCounts).toEqual(new Map([[1, 8], [2, 8]]));
    expect(model.summary.usage?.totalTokens).toBeGreaterThan(0);
    expect(model.spent[0]).toMatch(/^tokens [\d,]+ in \/ [\d,]+ out \/ [\d,]+ total, cost \$/);
    // Questions 0, 5, 10 and 15 expect another answer than the one given: 0 and 15 VERIFIED, 5 AMBIGUOUS, 10 REPAIRED.
    expect(model.accuracy).toEqual({
      VERIFIED: { count: 6, correct: 4 },
      REPAIRED: { count: 2, correct: 1 },
      AMBIGUOUS: { count: 2, correct: 1 },
      UNCERTAIN: { count: 6, correct: 0 },
    });
    expect(model.calibration?.count).toBe(12);
    expect(model.settings).toHaveLength(1);
    expect(model.settings[0]?.slice(3, 5)).toEqual([
      ['threshold', '0.7'],
      ['maxRetries', '1 (at most 2 attempts)'],
    ]);
    expect(model.latency.p50).toBeGreaterThan(0);
    expect(model.latency.p99).toBeGreaterThanOrEqual(model.latency.p90);
    const row3 = model.rows[3]!;
    expect(row3.slice(0, 4)).toEqual(['q3', 'UNCERTAIN', 'parse_failure', 2]);
    expect(row3[8]).toBe('What is question 3?');
    // Runs that took the same path share one drawing, and each run's is its own.
    expect(model.paths.length).toBeLessThan(8);
    expect(new Set(model.traces.map((t) => t.path)).size).toBe(model.paths.length);
    const lines = readResultLines(file, () => undefined);
    model.traces.forEach((trace, i) => expect(model.paths[trace.path!]).toBe(runDot(lines[i]!.result)));
    const prompted = resultsFile(reportLines(16, { withPrompts: true }));
    const withPrompts = readResultLines(prompted, () => undefined);
    const drawn = reportModel(prompted, withPrompts, new Map());
    drawn.traces.forEach((trace, i) => expect(drawn.paths[trace.path!]).toBe(runDot(withPrompts[i]!.result)));
    // Without its prompts a line still says an attempt was followed by another.
    expect(model.traces[2]!.attempts[0]![5]).toBe('asked again (the line did not keep its prompts)');
    expect(model.traces[2]!.attempts[0]![3]).toBe('confidence 0.4 below the threshold 0.7');
  });

  it('a line of a sampled batch shows its samples and how they voted', () => {
    const file = resultsFile([sampledLine('s1')]);
    const model = reportModel(file, readResultLines(file, () => undefined), new Map());
    const mixed = resultsFile([sampledLine('s1'), ...reportLines(1)]);
    const both = reportModel(mixed, readResultLines(mixed, () => undefined), new Map());
    expect(both.settings.map((rows) => rows?.find(([name]) => name === 'samples')?.[1])).toEqual(['3 per attempt', undefined]);
    expect(both.traces.map((t) => t.settings)).toEqual([0, 1]);
    expect(model.rows[0]!.slice(0, 6)).toEqual(['s1', 'VERIFIED', 'confidence', 1, expect.any(Number), 2 / 3]);
    const [vote] = model.traces[0]!.votes;
    expect(vote!.heading).toBe('attempt 0, 3 samples');
    expect(vote!.samples.map((s) => s[5])).toEqual(['1 (winner)', '1 (winner)', '2']);
    expect(vote!.clusters.map((c) => [c[0], c[1], c[2], c[4]])).toEqual([
      ['1 (winner)', '"Paris"', 2, '0, 1'],
      ['2', '"Lyon"', 1, '2'],
    ]);
    // A one-sample run has no vote.
    const single = resultsFile(reportLines(1));
    expect(reportModel(single, readResultLines(single, () => undefined), new Map()).traces[0]!.votes).toEqual([]);
  });

  it("a cluster reads as the form most of its samples gave, and numbers as the trace page rounds them", () => {
    // The cluster's own answer is its first sample's, "paris."; two of its three samples said "Paris".
    const replies = [envelope('paris.', 0.9), envelope('Paris', 0.8), envelope('Paris', 0.7)];
    const file = resultsFile([sampledLine('s1', { replies })]);
    const [trace] = reportModel(file, readResultLines(file, () => undefined), new Map()).traces;
    const [cluster] = trace!.votes[0]!.clusters;
    expect(cluster!.slice(1, 4)).toEqual(['"Paris"', 3, '0.8']);
    // The line itself keeps the mean whole: (0.9 + 0.8 + 0.7) / 3.
    expect(JSON.parse(readFileSync(file, 'utf8')).attempts[0].clusters[0].meanConfidence).toBe(0.8000000000000002);
    expect(trace!.pairs).toContainEqual(['confidence', '0.8']);
  });

  it('a clarified line shows its readings, the choice and both rounds, with or without its prompts', async () => {
    const lines = [
      await clarifiedLine('chose', 0),
      await clarifiedLine('rephrased', { rephrased: 'the planet, please' }, { withPrompts: true }),
      await clarifiedLine('bare', { rephrased: 'the planet, please' }),
      ...reportLines(1),
    ];
    const file = resultsFile(lines);
    const read = readResultLines(file, () => undefined);
    const model = reportModel(file, read, new Map());
    const [chose, rephrased, bare, plain] = model.traces;
    expect(model.rows.slice(0, 2).map((row) => row.slice(0, 4))).toEqual([
      ['chose', 'REPAIRED', 'confidence', 3],
      ['rephrased', 'REPAIRED', 'confidence', 3],
    ]);
    expect(chose!.pairs).toContainEqual(['clarified', 'the person chose "the planet"']);
    expect(chose!.clarifications).toEqual([
      { attempt: 1, heading: 'round 2, from attempt 1', readings: [['the planet', true], ['the element', false]], said: 'the person chose "the planet"', question: 'How far is Mercury from the Sun?' },
    ]);
    expect(rephrased!.clarifications[0]!.readings).toEqual([['the planet', false], ['the element', false]]);
    expect(rephrased!.clarifications[0]!.said).toBe('the person rephrased the question as "the planet, please"');
    // The line without its prompts still names the clarified question: the line records the clarification itself.
    expect(chose!.attempts.map((a) => [a[3], a[4], a[5]])).toEqual([
      ['ambiguous: its readings went to the person who asked', 'ambiguous', 'the clarified question'],
      ['confidence 0.5 below the threshold 0.7', 'rejected', 'asked again (the line did not keep its prompts)'],
      ['accepted (confidence 0.95 ≥ 0.7)', 'accepted', 'REPAIRED'],
    ]);
    expect(rephrased!.attempts.map((a) => a[5])).toEqual(['the clarified question', 'confidence retry', 'REPAIRED']);
    expect(rephrased!.prompts.map(([heading]) => heading)).toEqual(['attempt 0: first prompt', 'attempt 1: the clarified question', 'attempt 2: confidence retry']);
    expect(plain!.clarifications).toEqual([]);
    // A reading chosen and a rephrasing take the same states but not the same edge: two drawings, each the run's own.
    expect(chose!.path).not.toBe(bare!.path);
    model.traces.forEach((trace, i) => expect(model.paths[trace.path!]).toBe(runDot(read[i]!.result)));
    expect(model.paths[chose!.path!]).toContain('"awaitingClarification" -> "asking" [label="clarify.chose [isOfferedReading] ×1\\nclarify.rephrased [isRephrasing]"');
  });

  it('names the model, endpoint and Booth the lines ran with, and tells runs of two models apart', () => {
    const [line] = reportLines(1);
    const other = JSON.stringify({ ...JSON.parse(line!), id: 'q1', run: { ...JSON.parse(line!).run, model: 'another-model' } });
    const one = resultsFile([line!]);
    const [rows] = reportModel(one, readResultLines(one, () => undefined), new Map()).settings;
    expect(rows!.slice(0, 3)).toEqual([['model', 'm'], ['endpoint', '127.0.0.1:8080'], ['Booth', '0.1.0']]);
    const two = resultsFile([line!, other]);
    const mixed = reportModel(two, readResultLines(two, () => undefined), new Map());
    expect(mixed.settings.map((r) => r![0])).toEqual([['model', 'm'], ['model', 'another-model']]);
    expect(mixed.traces.map((t) => t.settings)).toEqual([0, 1]);
  });

  it(`draws at most ${MAX_DRAWN_PATHS} distinct paths: a file of more leaves the rest undrawn, each trace saying so`, () => {
    const lines = manyPathLines(MAX_DRAWN_PATHS + 5);
    const file = resultsFile(lines);
    const model = reportModel(file, readResultLines(file, () => undefined), new Map());
    expect(model.paths).toHaveLength(MAX_DRAWN_PATHS);
    expect(model.traces.map((t) => t.path)).toEqual([...Array.from({ length: MAX_DRAWN_PATHS }, (_, i) => i), ...Array(5).fill(null)]);
  });

  it('skips a line that is not a result, naming the line and the field, never the value', () => {
    const [good, other] = reportLines(2);
    const bad = JSON.stringify({ ...(JSON.parse(other!) as object), confidence: '<b>high</b>' });
    const file = resultsFile([good!, '{"id": 1, "status": "VERIF', bad, 'null', JSON.stringify({ status: 'VERIFIED' })]);
    const warnings: string[] = [];
    const lines = readResultLines(file, (m) => warnings.push(m));
    expect(lines).toHaveLength(1);
    expect(warnings).toEqual([
      `${file}:2: not JSON (a line cut short?); skipped`,
      `${file}:3: not a result as booth batch writes one: its confidence is a string, expected a number from 0 to 1 or null; skipped`,
      `${file}:4: not a JSON object; skipped`,
      `${file}:5: "id" is not a string or a number; skipped`,
    ]);
  });

  it('scriptJson writes JSON no string can end its <script> with, read back unchanged', () => {
    const value = { text: '</script><!--<script>alert(1)</script>--> & \u2028\u2029 </SCRIPT >' };
    const written = scriptJson(value).text;
    expect(written).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(written)).toEqual(value);
  });
});

describe('the report page', () => {
  it('says nothing of accuracy without expected answers, and calls tokens unknown when no call reported usage', async () => {
    const bare = reportLines(4).map((line) => {
      const { expected: _expected, usage: _usage, attempts, ...row } = JSON.parse(line) as Record<string, unknown> & { attempts: object[] };
      return JSON.stringify({ ...row, usage: null, attempts: attempts.map((a) => ({ ...a, usage: null })) });
    });
    const page = join(dir(), 'bare.html');
    expect(await writeReport({ results: resultsFile(bare), page, questions: null, warn: () => undefined })).toBe(4);
    const html = readFileSync(page, 'utf8');
    expect(html).not.toContain('Accuracy against the expected answers');
    expect(html).toContain('No call reported usage: the tokens are unknown.');
    expect(pageRows(html).map((row) => [row[6], row[10]])).toEqual(Array(4).fill([null, null]));
    const labelled = join(dir(), 'labelled.html');
    await writeReport({ results: resultsFile(reportLines(4)), page: labelled, questions: null, warn: () => undefined });
    expect(readFileSync(labelled, 'utf8')).toContain('Accuracy against the expected answers');
  });
});

describe('booth report', () => {
  it('writes the page of a results file and says how many questions it holds', async () => {
    const file = resultsFile(reportLines(8));
    const page = join(dir(), 'report.html');
    const run = await booth(['report', file, '-o', page]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`report of 8 questions written to ${page}\n`);
    const html = readFileSync(page, 'utf8');
    expect(pageRows(html).map((row) => row[0])).toEqual(['q0', 'q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7']);
    // Offline: nothing the page names is fetched from elsewhere.
    expect(html).not.toMatch(/\b(src|href)=/);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-`);
  }, 60_000);

  it('a results file that is missing, or holds no result, is exit 1 naming it; bad usage is exit 2', async () => {
    const folder = dir();
    const missing = join(folder, 'nope.jsonl');
    const gone = await booth(['report', missing, '-o', join(folder, 'r.html')]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`error: cannot read the results file ${missing}: ENOENT: no such file or directory. Check the path.\n`);
    const empty = resultsFile(['not json']);
    const nothing = await booth(['report', empty, '-o', join(folder, 'r.html')]);
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain(`warning: ${empty}:1: not JSON`);
    expect(nothing.stderr).toContain(`error: ${empty} holds no result lines`);
    const nowhere = join(folder, 'no-such-folder', 'r.html');
    const unwritable = await booth(['report', resultsFile(reportLines(1)), '-o', nowhere]);
    expect(unwritable.code).toBe(1);
    expect(unwritable.stderr).toContain(`error: cannot write the report ${nowhere}: ENOENT`);
    const noOutput = await booth(['report', empty]);
    expect(noOutput.code).toBe(2);
    expect(noOutput.stderr).toContain("error: required option '-o, --output <file>' not specified");
    const noInput = await booth(['report']);
    expect(noInput.code).toBe(2);
    expect(existsSync(join(folder, 'r.html'))).toBe(false);
  }, 60_000);
});

describe('where a page is written', () => {
  it('never over the results or questions it reads, by any path to them: exit 1, the file untouched', async () => {
    const file = resultsFile(reportLines(3));
    const before = readFileSync(file, 'utf8');
    const onResults = await booth(['report', file, '-o', file]);
    expect(onResults.code).toBe(1);
    expect(onResults.stderr).toBe(`error: cannot write the report ${file}: it is ${file}, which this command reads; give the report a path of its own.\n`);
    // A hard link is the same file by another name.
    const alias = join(dir(), 'alias.html');
    linkSync(file, alias);
    const onAlias = await booth(['report', file, '-o', alias]);
    expect(onAlias.code).toBe(1);
    expect(onAlias.stderr).toContain('which this command reads');
    const questions = join(dir(), 'questions.jsonl');
    writeFileSync(questions, `${reportQuestions(3).join('\n')}\n`);
    const onQuestions = await booth(['report', file, '--questions', questions, '-o', questions]);
    expect(onQuestions.code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(readFileSync(questions, 'utf8')).toBe(`${reportQuestions(3).join('\n')}\n`);
  }, 60_000);

  it('never through a link planted at its path: the link and the file it points at are left as they were', async () => {
    const folder = dir();
    const victim = join(folder, 'victim.txt');
    writeFileSync(victim, 'keep me');
    const page = join(folder, 'report.html');
    symlinkSync(victim, page);
    const run = await booth(['report', resultsFile(reportLines(2)), '-o', page]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: cannot write the report ${page}: it is a symbolic link, and Booth writes no page through a link`);
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
    expect(lstatSync(page).isSymbolicLink()).toBe(true);
  }, 60_000);

  it('writes the page whole, in a new file renamed over the old one, and leaves no temporary file', async () => {
    const folder = dir();
    const page = join(folder, 'report.html');
    writeFileSync(page, 'an older report');
    const before = statSync(page).ino;
    const run = await booth(['report', resultsFile(reportLines(2)), '-o', page]);
    expect(run.code).toBe(0);
    expect(readFileSync(page, 'utf8')).toMatch(/^<!doctype html>/i);
    expect(statSync(page).ino).not.toBe(before);
    expect(readdirSync(folder).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 60_000);
});

describe('booth batch --report', () => {
  it('writes the report after the batch, each result with its question', async () => {
    server.provider.fallback = () => ({ text: envelope('Paris', 0.9) });
    const { input, output } = batchFiles(4);
    const page = join(dir(), 'report.html');
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--report', page]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`report of 4 questions written to ${page}`);
    const rows = pageRows(readFileSync(page, 'utf8'));
    expect(rows.map((row) => [row[0], row[1], row[8], row[9]]).sort()).toEqual([0, 1, 2, 3].map((i) => [String(i), 'VERIFIED', `question ${i}`, 'Paris']));
  }, 60_000);

  it('a batch stopped by Ctrl-C still writes the report of the lines it has, and exits 130', async () => {
    server.provider.fallback = () => ({ text: envelope('x', 0.9), delayMs: 1_500 });
    const { input, output } = batchFiles(6);
    const page = join(dir(), 'report.html');
    let sent = false;
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--concurrency', '2', '--report', page], (child) => {
      if (!sent && server.provider.received.length >= 2) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    expect(run.code).toBe(130);
    const written = resultsIn(output).map((r) => String(r.id)).sort();
    expect(written).toHaveLength(2);
    expect(pageRows(readFileSync(page, 'utf8')).map((row) => row[0]).sort()).toEqual(written);
  }, 60_000);

  it('a report at the path of the output or the questions is refused before any call: exit 1', async () => {
    const { input, output } = batchFiles(2);
    for (const page of [output, input]) {
      const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--report', page]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`error: cannot write the report ${page}: it is ${page}, which this command reads`);
    }
    expect(server.provider.received).toHaveLength(0);
  }, 60_000);

  it('a report path that cannot be written is refused before any call: exit 1', async () => {
    const { input, output } = batchFiles(2);
    const page = join(dir(), 'missing', 'report.html');
    const run = await booth(['batch', input, '-o', output, ...server.endpoint, '--report', page]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`error: cannot write the report ${page}: ENOENT`);
    expect(server.provider.received).toHaveLength(0);
  }, 30_000);
});
