import { readFileSync } from 'node:fs';
import type { CheckpointOutput } from '../../../machines/checkpoint/types.js';
import { resultOf } from '../../results/result-from.js';
import type { BoothResult } from '../../results/result.js';
import { checkOutput } from '../../results/stored.js';
import { addUsage, type Usage } from '../../decide/usage.js';
import { numberText } from '../../util/numbers.js';
import { answerText, isPlainObject } from '../../util/values.js';
import { clarificationsOf, readingsOf, readingsWentOut, roundAt, roundName, saidText } from '../../visualize/clarifications.js';
import { durationText, nextStep, settingsRows, usageText, verdictOf } from '../../visualize/explain.js';
import { retryReasons } from '../../visualize/retries.js';
import { runDot } from '../../visualize/run.js';
import { promptKindName, shareText, shownAnswer } from '../../visualize/sequence.js';
import {
  budgetText,
  escalationAt,
  escalationsOf,
  escalationText,
  isSkipped,
  modelOf,
  modelPairs,
  modelPathText,
  modelsOf,
  modelText,
  namesModels,
  samplesAskedText,
  samplesMax,
  stoppedByBudget,
} from '../../visualize/models.js';
import { CliFileError } from '../batch/input.js';
import type { RunRecord } from '../batch/run-record.js';
import { type BatchSummary, percentile, summarize, type Tally, tallyOf } from '../batch/summary.js';
import { batchSpentLines } from '../spent.js';
import { type Calibration, calibrate, correctnessOf, type Labelled, labelOf } from '../calibrate.js';

/**
 * What `booth report` shows, computed from a results file: the run's summary (by the
 * batch's own summary and calibration code), one row per question, and per question the
 * texts of its trace, each computed here by the trace page's own helpers so the page's
 * script only lays out strings.
 */

/** The precision the calibration's fitted threshold must reach: `booth calibrate`'s default. */
export const TARGET_PRECISION = 0.95;

/** One question in the table: `[id, status, method, attempts, confidence, agreement, tokens, ms, question, answer, correct]`. */
export type ReportRow = [
  id: string,
  status: string,
  method: string,
  attempts: number,
  confidence: number | null,
  agreement: number | null,
  tokens: number | null,
  ms: number | null,
  question: string,
  answer: string,
  correct: boolean | null,
];

/** One question's trace, as the trace page words it. */
export interface TraceView {
  /** Name and value, as the trace page's header lists them. */
  readonly pairs: readonly (readonly [string, string])[];
  /** Which of the report's `settings` the run had: a batch's runs share them, so each is written once. */
  readonly settings: number;
  /** Which of the report's path drawings is this run's; null past `MAX_DRAWN_PATHS`. */
  readonly path: number | null;
  /** Per attempt: `[#, answer, confidence, why, verdict kind, then, duration, tokens, raw reply, model]`; the model null when the run names none. */
  readonly attempts: readonly (readonly [number, string, string, string, 'accepted' | 'rejected' | 'ambiguous', string, string, string | null, string, string | null])[];
  /** Per sampling attempt, its samples and how they voted; empty for a one-sample run. */
  readonly votes: readonly VoteView[];
  /** Per prompt sent: `[heading, text]`; empty when the line did not keep them. */
  readonly prompts: readonly (readonly [string, string])[];
  /** The states the run went through, with their attempt. */
  readonly trace: readonly (readonly [string, number])[];
  /** Each time the person who asked clarified the question, in order; empty when nobody did. */
  readonly clarifications: readonly ClarificationView[];
  /** Each time a cascade moved on to its next model: the attempt it began with, and `escalated to …, from attempt …`. */
  readonly escalations: readonly (readonly [attempt: number, text: string])[];
  /** Per model tried, when a cascade tried several: `[model, attempts, calls, tokens]`. */
  readonly models: readonly (readonly [string, number, number, string])[];
  /** Why the run stopped before a call, when its budget stopped it; null otherwise. */
  readonly budget: string | null;
  /** Which model made which attempts, for under the diagram; null unless the run names its models. */
  readonly modelPath: string | null;
}

/** A clarification, as the trace page's "Clarifications" words it. */
export interface ClarificationView {
  /** The first attempt of the round it began: the attempts table marks the round before it. */
  readonly attempt: number;
  /** `round 2, from attempt 1` */
  readonly heading: string;
  /** The readings offered, each with whether the person chose it. */
  readonly readings: readonly (readonly [string, boolean])[];
  /** What the person said: `the person chose "…"`, or rephrased the question as `"…"`. */
  readonly said: string;
  /** The question as it stood when the readings were offered. */
  readonly question: string;
}

/** A sampling attempt's vote, as the trace page's "Samples and votes" words it. */
export interface VoteView {
  readonly heading: string;
  readonly pairs: readonly (readonly [string, string])[];
  /** Per sample: `[#, answer, confidence, reply, error, cluster]`. */
  readonly samples: readonly (readonly [number, string, string, string, string, string])[];
  /** Per cluster, winner first: `[cluster, answer, count, mean confidence, samples]`. */
  readonly clusters: readonly (readonly [string, string, number, string, string])[];
}

export interface ReportModel {
  /** The results file, as named on the command line. */
  readonly source: string;
  readonly summary: BatchSummary;
  /**
   * Each distinct settings the lines ran with, as the trace page lists them; null for an
   * evidence check's, which has none. More than one: a threshold or a retry count changed
   * between runs into one file, and the figures mix them.
   */
  readonly settings: readonly (readonly (readonly [string, string])[] | null)[];
  readonly latency: { readonly p50: number; readonly p90: number; readonly p99: number; readonly sorted: readonly number[] };
  /** How many questions took 1, 2, … attempts. */
  readonly attemptCounts: ReadonlyMap<number, number>;
  readonly spent: readonly string[];
  /** The results with an expected answer, by status: how many, and how many were right. */
  readonly accuracy: Readonly<Record<string, { readonly count: number; readonly correct: number }>>;
  /** Over the labelled results with a confidence; null when there are none. */
  readonly calibration: Calibration | null;
  readonly rows: readonly ReportRow[];
  readonly traces: readonly TraceView[];
  /** Graphviz DOT of each distinct path; a run's `path` indexes this. Runs share drawings, so 10 000 questions draw a few dozen. */
  readonly paths: readonly string[];
  /** What each model spent over the file, in the order first tried; empty when no line names its models. */
  readonly models: readonly ModelTotals[];
}

/** One model over a results file: the questions that asked it, what it spent, and the accepted answers it gave. */
export interface ModelTotals {
  readonly model: string;
  /** Questions that asked it at least once. */
  readonly questions: number;
  /** Questions whose accepted answer (VERIFIED or REPAIRED) it gave. */
  readonly accepted: number;
  readonly attempts: number;
  readonly calls: number;
  /** What its calls reported; null when none did. */
  readonly usage: Usage | null;
}

/** A result line read back: its fields as written, and the result they make. */
export interface ReadLine {
  readonly row: Readonly<Record<string, unknown>>;
  readonly result: BoothResult;
  /** The line kept its prompts (`--with-prompts`): without them, the retry that followed an attempt is not known. */
  readonly hasPrompts: boolean;
}

/**
 * The result lines of a results file. Each is checked as Booth checks any stored result
 * (`checkOutput`); a line that is not JSON, or not a result, is skipped with a warning that
 * names its line and the field at fault, as `booth batch` skips the lines it cannot use.
 */
export function readResultLines(file: string, warn: (message: string) => void): ReadLine[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new CliFileError('labelled', file, 'read', error);
  }
  const lines: ReadLine[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const where = `${file}:${index + 1}`;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      return warn(`${where}: not JSON (a line cut short?); skipped`);
    }
    if (!isPlainObject(row)) return warn(`${where}: not a JSON object; skipped`);
    const fields = row as Record<string, unknown>;
    const id = fields['id'];
    if (typeof id !== 'string' && typeof id !== 'number') return warn(`${where}: "id" is not a string or a number; skipped`);
    // Batch lines leave the prompts out unless --with-prompts: the rest of the result stands without them.
    const hasPrompts = fields['prompts'] !== undefined;
    const output = hasPrompts ? fields : { ...fields, prompts: [] };
    try {
      checkOutput(output, (found) => {
        throw new LineRefused(found);
      });
    } catch (error) {
      if (error instanceof LineRefused) return warn(`${where}: not a result as booth batch writes one: its ${error.message}; skipped`);
      throw error;
    }
    lines.push({ row: fields, result: resultOf(output as unknown as CheckpointOutput<unknown>) as unknown as BoothResult, hasPrompts });
  });
  return lines;
}

/** A line's problem, carried out of `checkOutput` to be warned about. */
class LineRefused extends Error {
  override readonly name = 'LineRefused';
}

/**
 * The most distinct paths a report draws. A batch's runs take a handful; a results file can
 * hold as many as it has lines (each retry count is another path), and each drawing costs
 * Graphviz ~30 ms and ~80 KB of page: 1 000 of them took 30 s and made a 79 MB page. Past
 * this many, a trace says its path is not drawn and how to see it.
 */
export const MAX_DRAWN_PATHS = 200;

/**
 * The report of `lines`. `questions`: the question asked, by id, for the table and its
 * search; a result line does not repeat it.
 */
export function reportModel(source: string, lines: readonly ReadLine[], questions: ReadonlyMap<string, string>): ReportModel {
  const tallies: Tally[] = [];
  const labelled: Labelled[] = [];
  const accuracy: Record<string, { count: number; correct: number }> = {};
  const attemptCounts = new Map<number, number>();
  const rows: ReportRow[] = [];
  const traces: TraceView[] = [];
  const paths = new Map<string, number>();
  const drawings = new Map<string, number>();
  const settings: ((readonly [string, string])[] | null)[] = [];
  const settingsIndex = new Map<string, number>();
  const spends = new Map<string, { questions: number; accepted: number; attempts: number; calls: number; usage: Usage | null }>();
  for (const { row, result, hasPrompts } of lines) {
    for (const m of modelsOf(result)) {
      const name = modelText(m.model);
      const spend = spends.get(name) ?? { questions: 0, accepted: 0, attempts: 0, calls: 0, usage: null };
      spend.questions += 1;
      spend.attempts += m.attempts;
      spend.calls += m.calls;
      spend.usage = addUsage(spend.usage, m.usage);
      if (result.ok && m.model === (result.model ?? null)) spend.accepted += 1;
      spends.set(name, spend);
    }
    // The line's derived fields (method, latency) are read from the checked result, not trusted as written.
    const ms = typeof row['latencyMs'] === 'number' && Number.isFinite(row['latencyMs']) && row['latencyMs'] >= 0 ? row['latencyMs'] : result.durationMs;
    const tally = tallyOf({ ...row, method: result.method, latencyMs: ms });
    if (tally !== null) tallies.push(tally);
    const label = labelOf({ ...row, status: result.status, confidence: result.confidence, answer: result.answer });
    if (label !== null) labelled.push(label);
    const correct = correctnessOf({ ...row, answer: result.answer });
    if (correct !== null) {
      const byStatus = (accuracy[result.status] ??= { count: 0, correct: 0 });
      byStatus.count += 1;
      if (correct) byStatus.correct += 1;
    }
    attemptCounts.set(result.nAttempts, (attemptCounts.get(result.nAttempts) ?? 0) + 1);
    const id = String(row['id']);
    rows.push([
      id,
      result.status,
      result.method,
      result.nAttempts,
      result.confidence,
      result.agreement,
      result.usage?.totalTokens ?? null,
      ms,
      questions.get(id) ?? '',
      // A string answer as written, to read and search; a typed one as JSON.
      result.answer === null ? '' : typeof result.answer === 'string' ? result.answer : answerText(result.answer),
      correct,
    ]);
    // runDot draws from the trace's states, the prompts' kinds and the clarifications' kinds alone: runs
    // alike in these share a drawing, made once (drawing each of 10 000 runs took seconds). A test holds the two together.
    const drawn = JSON.stringify([
      result.trace.map((step) => step.state),
      result.prompts.map((prompt) => prompt.kind),
      clarificationsOf(result).map((c) => c.rephrased === null),
    ]);
    let path = drawings.get(drawn);
    if (path === undefined && drawings.size < MAX_DRAWN_PATHS) {
      const dot = runDot(result);
      path = paths.get(dot) ?? paths.size;
      paths.set(dot, path);
      drawings.set(drawn, path);
    }
    // Checked by checkOutput with the rest of the line: absent from a line written before batches recorded it.
    const record = (row['run'] ?? null) as RunRecord | null;
    const ran = JSON.stringify([result.settings, record]);
    let runSettings = settingsIndex.get(ran);
    if (runSettings === undefined) {
      runSettings = settings.length;
      settingsIndex.set(ran, runSettings);
      settings.push(result.settings === null ? null : [...runRows(record), ...settingsRows(result.settings)]);
    }
    traces.push(traceView(result, hasPrompts, path ?? null, runSettings, row['expected'], correct));
  }
  // As a batch's summary of the whole output: every line counts, none was checked by this command.
  const summary = summarize(tallies.length, tallies.length, 0, 0, false, tallies);
  const sorted = tallies.flatMap((t) => (t.latencyMs === null ? [] : [t.latencyMs])).sort((a, b) => a - b);
  return {
    source,
    summary,
    settings,
    latency: { p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9), p99: percentile(sorted, 0.99), sorted },
    attemptCounts: new Map([...attemptCounts].sort(([a], [b]) => a - b)),
    spent: batchSpentLines(summary),
    // In the summary's order of statuses, which is the documented one.
    accuracy: Object.fromEntries(Object.keys(summary.byStatus).flatMap((status) => (accuracy[status] ? [[status, accuracy[status]] as const] : []))),
    calibration: labelled.length === 0 ? null : calibrate(labelled, TARGET_PRECISION),
    rows,
    traces,
    paths: [...paths.keys()],
    models: [...spends].map(([model, spend]) => ({ model, ...spend })),
  };
}

/** What a line says it ran with besides its settings (`run`): the model, where, and which Booth; digests and sampling values are the rerun's business, not the reader's. */
function runRows(record: RunRecord | null): [string, string][] {
  if (record === null) return [];
  return [
    ['model', record.model],
    ['endpoint', record.host],
    // A cascade's next models, in the order asked.
    ...(record.escalate === undefined || record.escalate.length === 0
      ? []
      : ([['escalates to', record.escalate.map((step) => `${step.model} (${step.host})`).join(' → ')]] satisfies [string, string][])),
    ['Booth', record.booth],
  ];
}

/** One run's trace as the trace page words it (`renderHtml`): its header, its attempts and why, its prompts and steps. */
function traceView(result: BoothResult, hasPrompts: boolean, path: number | null, settings: number, expected: unknown, correct: boolean | null): TraceView {
  const clarifications = clarificationsOf(result);
  const retried = hasPrompts ? retryReasons(result.prompts, result.method) : null;
  const pairs: [string, string][] = [
    ['answer', result.answer === null ? '—' : answerText(result.answer)],
    ...(expected === undefined || expected === null ? [] : ([['expected', answerText(expected)]] satisfies [string, string][])),
    ...(correct === null ? [] : ([['correct', correct ? 'yes' : 'no']] satisfies [string, string][])),
    ['confidence', result.confidence === null ? '—' : numberText(result.confidence)],
    ...(result.agreement === null ? [] : ([['agreement', numberText(result.agreement)]] satisfies [string, string][])),
    ['method', result.method],
    ['attempts', String(result.nAttempts)],
    ...modelPairs(result),
    ['duration', durationText(result.durationMs)],
    ...(result.usage === null ? [] : ([['tokens', usageText(result.usage)]] satisfies [string, string][])),
    ...(retried === null ? [] : ([['retried for', retried]] satisfies [string, string][])),
    ...(result.reason ? ([['reason', `${result.reason}: ${result.detail ?? ''}`]] satisfies [string, string][]) : []),
    ...(result.interpretations.length > 0 ? ([['readings', result.interpretations.join(' | ')]] satisfies [string, string][]) : []),
    ...(clarifications.length === 0 ? [] : ([['clarified', clarifications.map((c) => saidText(c)).join('; then ')]] satisfies [string, string][])),
  ];
  const last = result.attempts.length - 1;
  const names = namesModels(result);
  const models = modelsOf(result);
  return {
    pairs,
    settings,
    path,
    attempts: result.attempts.map((a, i) => {
      // A clarification, or a cascade's next model, is recorded in the result itself: known with or without the prompts.
      const clarified = roundAt(result, i + 1) !== undefined || escalationAt(result, i + 1) !== undefined;
      const why = verdictOf(a, result.settings, readingsWentOut(result, i));
      return [
        i,
        a.answer === null ? '—' : answerText(a.answer),
        a.confidence === null ? '—' : numberText(a.confidence),
        why,
        a.ambiguous ? 'ambiguous' : why.startsWith('accepted') ? 'accepted' : 'rejected',
        // Without the prompts, which retry followed is not known; that one did is.
        hasPrompts || i === last || clarified ? nextStep(result, i) : 'asked again (the line did not keep its prompts)',
        durationText(a.durationMs),
        (a.usage ?? null) === null ? null : usageText(a.usage!),
        a.rawText,
        names ? modelText(modelOf(a)) : null,
      ] as const;
    }),
    votes: votesOf(result, hasPrompts),
    prompts: result.prompts.map((p, i) => [`attempt ${i}: ${promptKindName(p.kind)}`, p.text] as const),
    trace: result.trace.map((step) => [step.state, step.attempt] as const),
    clarifications: clarifications.map((c, i) => ({
      attempt: c.attempt,
      heading: roundName(i, c),
      readings: readingsOf(c),
      said: saidText(c),
      question: c.question,
    })),
    escalations: escalationsOf(result).map((e) => [e.attempt, escalationText(e)] as const),
    models: models.length < 2 ? [] : models.map((m) => [modelText(m.model), m.attempts, m.calls, m.usage === null ? '—' : usageText(m.usage)] as const),
    budget: stoppedByBudget(result) ? budgetText(result) : null,
    modelPath: modelPathText(result),
  };
}


/** Clusters are numbered from 1, winner first, and the winner says so in words, as on the trace page. */
const clusterName = (index: number) => (index === 0 ? '1 (winner)' : String(index + 1));

/** Each sampling attempt's samples, clusters and vote; without the prompts, the retry kind of an attempt is not named. */
function votesOf(result: BoothResult, hasPrompts: boolean): VoteView[] {
  const { settings } = result;
  if (settings === null) return [];
  return result.attempts.flatMap((attempt, i) => {
    if (attempt.samples === undefined) return [];
    const clusters = attempt.clusters ?? [];
    const clusterOf = new Map(clusters.flatMap((cluster, c) => cluster.samples.map((sample) => [sample, c] as const)));
    const share = shareText(clusters);
    const kind = hasPrompts ? `: ${promptKindName(result.prompts[i]?.kind ?? 'first')}` : '';
    return [
      {
        heading: `attempt ${i}${kind}, ${samplesAskedText(attempt, samplesMax(result, i))}`,
        pairs: [
          ...(share === null
            ? ([['vote', 'none: no sample parsed']] as const)
            : ([
                ['agreement', share],
                ['confidence', `${attempt.confidence === null ? '—' : numberText(attempt.confidence)} (${settings.confidenceFrom})`],
              ] as const)),
          ...(attempt.agreeError ? ([['agree failed', attempt.agreeError]] as const) : []),
        ],
        samples: attempt.samples.map((sample, n) => {
          const cluster = clusterOf.get(n);
          // Aborted in flight once the vote was settled, as the trace page says it.
          if (isSkipped(sample)) return [n, '—', '—', 'skipped', 'the vote was settled before it replied', '—'] as const;
          return [
            n,
            sample.answer === null ? '—' : answerText(sample.answer),
            sample.confidence === null ? '—' : numberText(sample.confidence),
            sample.callFailed ? 'call failed' : sample.parseOk ? 'parsed' : 'unparseable',
            sample.error ?? '',
            cluster === undefined ? '—' : clusterName(cluster),
          ] as const;
        }),
        clusters: clusters.map((cluster, c) => [clusterName(c), answerText(shownAnswer(cluster, attempt.samples ?? [])), cluster.count, numberText(cluster.meanConfidence), cluster.samples.join(', ')] as const),
      },
    ];
  });
}
