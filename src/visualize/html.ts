import { answerText } from '../util/values.js';
import type { Cluster, ConfidenceSource } from '../decide/agreement.js';
import type { Attempt, Sample } from '../decide/attempt.js';
import type { CallTry } from '../decide/call-retries.js';
import type { Clarification } from '../decide/prompts.js';
import type { BoothResult } from '../results/result.js';
import { numberText } from '../util/numbers.js';
import { redactUrls } from '../util/urls.js';
import { clarificationsOf, readingsOf, readingsWentOut, roundAt, roundName, saidText } from './clarifications.js';
import { graphvizSvg, type Html, html, join } from './escape.js';
import { durationText, nextStep, settingsRows, usageText, verdictOf } from './explain.js';
import { retryReasons } from './retries.js';
import { promptKindName, shareText, shownAnswer } from './sequence.js';
import { budgetText, escalationAt, escalationsOf, escalationText, isSkipped, modelOf, modelPairs, modelPathText, modelsOf, modelText, namesModels, samplesAskedText, samplesMax, stoppedByBudget } from './models.js';

const STYLE = html`
  :root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dde5; --red: #c0392b; --ok: #1e7b4a; --warn: #9a6a00; }
  * { box-sizing: border-box; }
  body { margin: 0; padding: 24px 32px 48px; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #f7f8fa; }
  h1 { margin: 0 0 4px; font-size: 28px; }
  h2 { margin: 32px 0 8px; font-size: 17px; }
  .status-VERIFIED, .status-REPAIRED { color: var(--ok); }
  .status-AMBIGUOUS, .status-UNCERTAIN { color: var(--warn); }
  .status-BLOCKED { color: var(--red); }
  .summary { display: flex; flex-wrap: wrap; gap: 8px 24px; margin: 8px 0; color: var(--muted); }
  .summary b { color: var(--ink); font-weight: 600; }
  .caveat { color: var(--muted); font-size: 12px; }
  figure { margin: 0; padding: 12px; overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
  figure svg { max-width: 100%; min-width: var(--least-width, 0); height: auto; }
  table { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line); }
  th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
  th { background: #eef0f4; font-weight: 600; }
  td.rejected { color: var(--red); }
  td.accepted { color: var(--ok); }
  td.ambiguous { color: var(--warn); }
  td.duration, td.tokens { white-space: nowrap; font-variant-numeric: tabular-nums; }
  ol.tries { margin: 4px 0 0; padding: 0; list-style: none; color: var(--muted); }
  ol.tries li.failed { color: var(--red); }
  pre { margin: 6px 0 0; padding: 8px; max-height: 320px; overflow: auto; white-space: pre-wrap; word-break: break-word; background: #f1f3f6; border-radius: 4px; font: 12px/1.45 ui-monospace, Menlo, Consolas, monospace; }
  details summary { cursor: pointer; color: var(--muted); }
  ol.trace { padding-left: 20px; columns: 3; }
`;

// Added only to pages with samples, so a one-sample page stays byte for byte as it was.
const VOTE_STYLE = html`  h3 { margin: 20px 0 6px; font-size: 15px; }
  tr.winner td { background: #eaf6ef; }
  table.clusters { margin-top: 8px; }
`;

// Added only to pages of clarified runs, as the votes' style is.
const CLARIFY_STYLE = html`  section.clarification { margin: 0 0 12px; padding: 8px 12px; background: #fff; border: 1px solid var(--line); border-left: 4px solid var(--warn); border-radius: 4px; }
  section.clarification h3 { margin: 0 0 4px; font-size: 15px; }
  section.clarification p { margin: 4px 0; }
  ol.readings { margin: 4px 0; }
  ol.readings li { white-space: pre-wrap; overflow-wrap: anywhere; }
  ol.readings li.chosen { font-weight: 600; }
  tr.round td { background: #fff7e0; font-weight: 600; }
  ol.trace small.round { color: var(--warn); font-weight: 600; }
`;

// Added only to pages of runs that name their models, stop their samples early or ran out of budget.
const SPEND_STYLE = html`  tr.escalation td { background: #eef3fb; font-weight: 600; }
  ol.trace small.escalation { color: #2b6cb0; font-weight: 600; }
  tr.skipped td { color: var(--muted); font-style: italic; }
  p.budget { margin: 8px 0; padding: 6px 10px; background: #fdecea; border-left: 4px solid var(--red); border-radius: 4px; }
  table.models { margin-top: 4px; }
`;

/** The page of `toHtml()`: inline SVG and CSS, no script, nothing fetched. */
export function renderHtml(result: BoothResult, svg: string): string {
  const answer = result.answer === null ? '—' : answerText(result.answer);
  const summary = [
    ['answer', answer],
    ['confidence', result.confidence === null ? '—' : numberText(result.confidence)],
    ...(result.agreement === null ? [] : [['agreement', numberText(result.agreement)]]),
    ['method', result.method],
    ['attempts', String(result.nAttempts)],
    ...modelPairs(result),
    ['duration', durationText(result.durationMs)],
    // Null means no call reported usage: unknown, so the page says nothing rather than 0.
    ...(result.usage === null ? [] : [['tokens', usageText(result.usage)]]),
    ...retried(result),
    ...(result.reason ? [['reason', `${result.reason}: ${result.detail ?? ''}`]] : []),
    ...(result.interpretations.length > 0 ? [['readings', result.interpretations.join(' | ')]] : []),
    ...clarifiedPair(result),
  ];
  const votes = votesSection(result);
  const clarified = clarificationsOf(result).length > 0;
  const spend = namesModels(result) || stoppedByBudget(result) || result.attempts.some((a) => (a.samples ?? []).some(isSkipped));
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Booth trace: ${result.status}</title>
<style>${STYLE}${votes === null ? '' : VOTE_STYLE}${clarified ? CLARIFY_STYLE : ''}${spend ? SPEND_STYLE : ''}</style>
</head>
<body>
<header>
<h1 id="status" class="status-${result.status}">${result.status}</h1>
<div class="summary" id="summary">${pairs(summary)}</div>
${stoppedByBudget(result) ? budgetLine(result) : ''}${settingsLine(result)}
<p class="caveat">VERIFIED and REPAIRED mean an acceptance condition was met, never that the answer is true.</p>
</header>
<h2>Path through the machine</h2>
<figure id="diagram"${leastWidth(svg)}>${graphvizSvg(svg)}</figure>
${modelPath(result)}${clarified ? clarificationsSection(result) : ''}${modelsSection(result)}${result.attempts.length > 0 ? attemptsTable(result) : ''}${votes ?? ''}
${result.prompts.length > 0 ? promptsList(result) : ''}
<h2>Trace</h2>
<ol class="trace" id="trace">${traceItems(result)}</ol>
</body>
</html>
`.text;
}

/** The size below which a diagram's labels are not shrunk, in CSS px. */
const LEAST_LABEL_PX = 11;
/** How high Graphviz draws a label, in the SVG's units: render.ts lays the machine out with 12-point labels. */
const LABEL_UNITS = 12;

/**
 * The diagram is drawn as wide as the page, but never so narrow that its labels read under
 * 11 px: a machine too wide for that scrolls sideways in its figure instead. The checkpoint
 * machine fitted a 1 400 px page at that size until \`awaitingClarification\` widened it.
 */
function leastWidth(svg: string): Html | '' {
  const width = /viewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"/.exec(svg)?.[1];
  return width === undefined ? '' : html` style="--least-width: ${Math.ceil((Number(width) * LEAST_LABEL_PX) / LABEL_UNITS)}px"`;
}

/** The header's `clarified` entry: what the person who asked said, each time. */
function clarifiedPair(result: BoothResult): string[][] {
  const clarifications = clarificationsOf(result);
  return clarifications.length === 0 ? [] : [['clarified', clarifications.map((c) => saidText(c)).join('; then ')]];
}

/**
 * Each clarification: the round it began, the readings the model offered (the chosen one
 * marked in words, not only in weight), what the person said, and the question as it stood.
 */
function clarificationsSection(result: BoothResult): Html {
  const sections = clarificationsOf(result).map(
    (c, i) => html`<section class="clarification" data-clarification="${i}">
<h3>${roundName(i, c)}</h3>
<p>The question was ambiguous; the model offered ${c.readings.length} reading${c.readings.length === 1 ? '' : 's'}:</p>
<ol class="readings">${readingsOf(c).map(([reading, chosen]) => (chosen ? html`<li class="chosen">${reading} <small>(chosen)</small></li>` : html`<li>${reading}</li>`))}</ol>
<p class="said">${saidText(c)}</p>
<details><summary>the question as it stood</summary><pre>${c.question}</pre></details>
</section>`,
  );
  return html`<h2>Clarifications</h2>
<div id="clarifications">${join(sections, html`\n`)}</div>
`;
}

/** The states, with the first of each clarified round, and of each model a cascade moved on to, marked. */
function traceItems(result: BoothResult): Html[] {
  const starts = new Map<number, number>();
  clarificationsOf(result).forEach((c, i) => {
    const first = result.trace.findIndex((step) => step.attempt === c.attempt);
    if (!starts.has(first)) starts.set(first, i);
  });
  const models = new Map<number, string | null>();
  escalationsOf(result).forEach((e) => {
    const first = result.trace.findIndex((step) => step.attempt === e.attempt);
    if (first !== -1 && !models.has(first)) models.set(first, e.model);
  });
  return result.trace.map((s, i) => {
    const round = starts.get(i);
    const escalated = models.has(i) ? html` <small class="escalation">escalated to ${modelText(models.get(i) ?? null)}</small>` : '';
    return round === undefined
      ? html`<li${models.has(i) ? ESCALATION_START : ''}>${s.state} <small>(attempt ${s.attempt})</small>${escalated}</li>`
      : html`<li class="round-start">${s.state} <small>(attempt ${s.attempt})</small> <small class="round">round ${round + 2}</small>${escalated}</li>`;
  });
}

const ESCALATION_START = html` class="escalation-start"`;

/** Under the diagram, which model made which attempts: the path's states do not say. */
function modelPath(result: BoothResult): Html | '' {
  const text = modelPathText(result);
  return text === null ? '' : html`<p class="summary" id="model-path">models: <b>${text}</b></p>
`;
}

/** The run stopped before a call its budget could not afford: said in words above the settings. */
function budgetLine(result: BoothResult): Html {
  return html`<p class="budget" id="budget">${budgetText(result)}</p>
`;
}

/** Each model the run asked, in the order first tried, with what it spent; nothing unless several were tried. */
function modelsSection(result: BoothResult): Html | '' {
  const models = modelsOf(result);
  if (models.length < 2) return '';
  const rows = models.map(
    (m, i) => html`<tr data-model="${i}">
<td>${modelText(m.model)}</td>
<td>${m.attempts}</td>
<td>${m.calls}</td>
<td class="tokens">${m.usage === null ? '—' : usageText(m.usage)}</td>
</tr>`,
  );
  return html`<h2>Models</h2>
<table id="models" class="models">
<thead><tr><th>model</th><th>attempts</th><th>calls</th><th>tokens</th></tr></thead>
<tbody>${join(rows, html`\n`)}</tbody>
</table>
`;
}

/** The row before the first attempt of the next model of a cascade. */
function escalationRow(index: number, text: string, columns: number): Html {
  return html`<tr class="escalation" data-escalation="${index}"><td colspan="${columns}">${text}</td></tr>
`;
}

/** The header's `retried for` entry, when the retries had reasons other than the method's. */
function retried(result: BoothResult): string[][] {
  const reasons = retryReasons(result.prompts, result.method);
  return reasons === null ? [] : [['retried for', reasons]];
}

function settingsLine(result: BoothResult): Html {
  if (result.settings === null) {
    return html`<p class="summary" id="settings">An evidence check: the answer was scored against the caller's evidence, with no model call, so there is no confidence threshold, retry, validator or timer.</p>`;
  }
  return html`<div class="summary" id="settings">settings: ${pairs(settingsRows(result.settings))}</div>`;
}

function pairs(rows: readonly (readonly string[])[]): Html[] {
  return rows.map(([k, v]) => html`<span data-name="${k ?? ''}">${k ?? ''} <b>${v ?? ''}</b></span>`);
}

function attemptsTable(result: BoothResult): Html {
  // A column only when some call reported usage; an attempt whose calls reported none reads —.
  // `?? null`: attempts saved by a Booth from before usage was kept have none.
  const tokens = result.attempts.some((a) => (a.usage ?? null) !== null);
  // A column only when the run names its models: which one made each attempt.
  const models = namesModels(result);
  const columns = 7 + (tokens ? 1 : 0) + (models ? 1 : 0);
  const rows = result.attempts.map((a, i) => {
    const verdict = verdictOf(a, result.settings, readingsWentOut(result, i));
    const round = roundAt(result, i);
    const escalation = escalationAt(result, i);
    return html`${round === undefined ? '' : roundRow(round.index, round.clarification, columns)}${escalation === undefined ? '' : escalationRow(escalation.index, escalationText(escalation.escalation), columns)}<tr data-attempt="${i}">
<td>${i}</td>
<td>${a.answer === null ? '—' : answerText(a.answer)}${a.ambiguous ? AMBIGUOUS_MARK : ''}</td>
<td>${a.confidence === null ? '—' : numberText(a.confidence)}</td>
${models ? html`<td class="model">${modelText(modelOf(a))}</td>\n` : ''}<td class="why ${a.ambiguous ? 'ambiguous' : verdict.startsWith('accepted') ? 'accepted' : 'rejected'}">${verdict}${callTriesList(a)}</td>
<td class="next">${nextStep(result, i)}</td>
<td class="duration">${durationText(a.durationMs)}</td>
${tokens ? html`<td class="tokens">${(a.usage ?? null) === null ? '—' : usageText(a.usage!)}</td>\n` : ''}<td>${rawReply(a.callFailed ? redactUrls(a.rawText) : a.rawText)}</td>
</tr>`;
  });
  return html`<h2>Attempts</h2>
<table id="attempts">
<thead><tr><th>#</th><th>answer</th><th>confidence</th>${models ? html`<th>model</th>` : ''}<th>why</th><th>then</th><th>duration</th>${tokens ? html`<th>tokens</th>` : ''}<th>raw reply</th></tr></thead>
<tbody>${join(rows, html`\n`)}</tbody>
</table>`;
}

const AMBIGUOUS_MARK = html` <small>(ambiguous)</small>`;

/** The row before a clarified round's first attempt: which round, and what the person said. */
function roundRow(index: number, clarification: Clarification, columns: number): Html {
  return html`<tr class="round" data-round="${index + 2}"><td colspan="${columns}">${roundName(index, clarification)}: ${saidText(clarification)}</td></tr>
`;
}

/**
 * Every call an attempt made, once one of several failed: why each failed and how long
 * Booth waited before the next, so the diagram's `backingOff ×2` has its reasons beside it.
 * A sampled attempt's calls are listed sample by sample. Nothing for a single call: the
 * verdict already quotes its error.
 */
function callTriesList(attempt: Attempt<unknown>): Html | '' {
  const calls =
    attempt.samples === undefined
      ? attempt.callTries.map((callTry, n) => ({ name: `try ${n + 1}`, callTry }))
      : // A skipped sample's call was aborted, not failed: the samples table says so.
        attempt.samples.flatMap((sample, s) => (isSkipped(sample) ? [] : sample.callTries.map((callTry, n) => ({ name: `sample ${s}, try ${n + 1}`, callTry }))));
  if (calls.length < 2 || calls.every(({ callTry }) => callTry.error === null)) return '';
  const items = calls.map(({ name, callTry }) => html`<li class="${callTry.error === null ? 'replied' : 'failed'}">${name} ${tryText(callTry)}</li>`);
  return html`<ol class="tries">${items}</ol>`;
}

/**
 * One call's outcome. Its error with URLs redacted, as Booth's adapters write theirs: a
 * `callFn` of the caller's own may quote an endpoint with its key.
 */
function tryText(callTry: CallTry): string {
  if (callTry.error === null) return 'replied';
  const error = redactUrls(callTry.error);
  if (callTry.permanent === true) return `failed for good: ${error}`;
  return callTry.delayMs === null ? `failed: ${error}` : `failed: ${error}; then waited ${durationText(callTry.delayMs)}`;
}

/** A reply as the model wrote it, collapsed under its length. */
function rawReply(text: string): Html {
  return html`<details><summary>${text.length} characters</summary><pre>${text}</pre></details>`;
}

/** Every sampling attempt's replies and how they voted; empty for a one-sample run. */
function votesSection(result: BoothResult): Html | null {
  const blocks = result.attempts.flatMap((attempt, i) => {
    if (attempt.samples === undefined || result.settings === null) return [];
    const heading = `attempt ${i}: ${promptKindName(result.prompts[i]?.kind ?? 'first')}, ${samplesAskedText(attempt, samplesMax(result, i))}`;
    return [voteBlock(i, heading, attempt, attempt.samples, result.settings.confidenceFrom)];
  });
  return blocks.length === 0 ? null : html`\n<h2>Samples and votes</h2>\n<div id="votes">${join(blocks, html`\n`)}</div>`;
}

/** Clusters are numbered from 1, winner first, and the winner says so in words, not only in colour. */
function clusterName(index: number): string {
  return index === 0 ? '1 (winner)' : String(index + 1);
}

function voteBlock(
  index: number,
  heading: string,
  attempt: Attempt<unknown>,
  samples: readonly Sample<unknown>[],
  confidenceFrom: ConfidenceSource,
): Html {
  const clusters = attempt.clusters ?? [];
  const clusterOf = new Map(clusters.flatMap((cluster, c) => cluster.samples.map((sample) => [sample, c] as const)));
  const share = shareText(clusters);
  const figures = [
    ...(share === null
      ? [['vote', 'none: no sample parsed']]
      : [
          ['agreement', share],
          ['confidence', `${attempt.confidence === null ? '—' : numberText(attempt.confidence)} (${confidenceFrom})`],
        ]),
    ...(attempt.agreeError ? [['agree failed', attempt.agreeError]] : []),
  ];
  const sampleRows = samples.map((sample, s) => {
    const cluster = clusterOf.get(s);
    if (isSkipped(sample)) {
      // Aborted in flight once the vote was settled: no reply, no vote, no failure.
      return html`<tr data-sample="${s}" class="skipped">
<td>${s}</td>
<td class="answer">—</td>
<td>—</td>
<td>skipped</td>
<td class="error">the vote was settled before it replied</td>
<td class="cluster">—</td>
<td></td>
</tr>`;
    }
    return html`<tr data-sample="${s}"${cluster === 0 ? WINNER_CLASS : ''}>
<td>${s}</td>
<td class="answer">${sample.answer === null ? '—' : answerText(sample.answer)}${sample.ambiguous ? AMBIGUOUS_MARK : ''}</td>
<td>${sample.confidence === null ? '—' : numberText(sample.confidence)}</td>
<td class="${sample.parseOk ? 'accepted' : 'rejected'}">${sample.callFailed ? 'call failed' : sample.parseOk ? 'parsed' : 'unparseable'}</td>
<td class="error">${sample.error === null ? '' : sample.callFailed ? redactUrls(sample.error) : sample.error}</td>
<td class="cluster">${cluster === undefined ? '—' : clusterName(cluster)}</td>
<td>${rawReply(sample.rawText)}</td>
</tr>`;
  });
  return html`<section class="vote" data-vote="${index}">
<h3>${heading}</h3>
<div class="summary">${pairs(figures)}</div>
<table class="samples">
<thead><tr><th>sample</th><th>answer</th><th>confidence</th><th>reply</th><th>error</th><th>cluster</th><th>raw reply</th></tr></thead>
<tbody>${join(sampleRows, html`\n`)}</tbody>
</table>
${clustersTable(clusters, samples)}
</section>`;
}

const WINNER_CLASS = html` class="winner"`;

/** The clusters, winner first; nothing when no sample parsed, as there was no vote. */
function clustersTable(clusters: readonly Cluster<unknown>[], samples: readonly Sample<unknown>[]): Html | '' {
  if (clusters.length === 0) return '';
  const rows = clusters.map(
    (cluster, c) => html`<tr data-cluster="${c}"${c === 0 ? WINNER_CLASS : ''}>
<td>${clusterName(c)}</td>
<td class="answer">${answerText(shownAnswer(cluster, samples))}</td>
<td>${cluster.count}</td>
<td>${numberText(cluster.meanConfidence)}</td>
<td>${cluster.samples.join(', ')}</td>
</tr>`,
  );
  return html`<table class="clusters">
<thead><tr><th>cluster</th><th>answer</th><th>count</th><th>mean confidence</th><th>samples</th></tr></thead>
<tbody>${join(rows, html`\n`)}</tbody>
</table>`;
}

function promptsList(result: BoothResult): Html {
  const items = result.prompts.map(
    (p, i) => html`<details><summary>attempt ${i}: ${promptKindName(p.kind)}</summary><pre>${p.text}</pre></details>`,
  );
  return html`<h2>Prompts sent</h2>\n<div id="prompts">${join(items, html`\n`)}</div>`;
}
