import { createHash } from 'node:crypto';
import { numberText } from '../../util/numbers.js';
import { costText, countText, durationText } from '../../visualize/explain.js';
import { graphvizSvg, type Html, html, scriptJson } from '../../visualize/escape.js';
import type { Calibration } from '../calibrate.js';
import { MAX_DRAWN_PATHS, type ReportModel } from './model.js';
import { REPORT_SCRIPT } from './script.js';

/**
 * The report page: one HTML file, its CSS, script, data and drawings inline, that fetches
 * nothing. Every value from the results file is written through the `html` tag or, as the
 * data the script reads, through `scriptJson`; the script puts text in with `textContent`
 * only. A Content-Security-Policy allows the page's own script by its hash and nothing else:
 * no request, and no handler attribute, would run even if markup got in.
 */

/** The statuses in the order they are documented, each with its colour; a status outside them is grey. */
const STATUS_COLORS: Readonly<Record<string, string>> = {
  VERIFIED: '#1a7f4b',
  REPAIRED: '#2b6cb0',
  AMBIGUOUS: '#b7791f',
  UNCERTAIN: '#c0392b',
  BLOCKED: '#6b46c1',
};
const OTHER_COLOR = '#718096';
const colorOf = (status: string) => STATUS_COLORS[status] ?? OTHER_COLOR;

const STYLE = html`
:root { color-scheme: light; --ink: #1a202c; --muted: #5a6478; --line: #e2e6ee; --bg: #f6f7f9; --card: #ffffff; --accent: #2b6cb0;
  --VERIFIED: #1a7f4b; --REPAIRED: #2b6cb0; --AMBIGUOUS: #b7791f; --UNCERTAIN: #c0392b; --BLOCKED: #6b46c1; --other: #718096; }
* { box-sizing: border-box; }
body { margin: 0; padding: 28px 36px 48px; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
h1 { margin: 0; font-size: 26px; letter-spacing: -0.01em; }
h2 { margin: 32px 0 12px; font-size: 17px; }
h3 { margin: 0 0 8px; font-size: 13px; font-weight: 600; color: var(--muted); text-transform: uppercase; letter-spacing: 0.04em; }
.sub { color: var(--muted); margin: 2px 0 18px; }
.num { font-variant-numeric: tabular-nums; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(360px, 1fr)); gap: 14px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; }
.big { font-size: 26px; font-weight: 650; line-height: 1.2; }
.muted { color: var(--muted); }
.small { font-size: 12px; }
.statusbar { display: flex; height: 14px; border-radius: 7px; overflow: hidden; margin: 10px 0 10px; background: var(--line); }
.statusbar span { display: block; height: 100%; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 18px; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 6px; vertical-align: 0; }
table.plain { border-collapse: collapse; width: 100%; }
table.plain td, table.plain th { padding: 3px 6px; border-bottom: 1px solid var(--line); text-align: left; }
table.plain td.n, table.plain th.n { text-align: right; font-variant-numeric: tabular-nums; }
.bars div { display: grid; grid-template-columns: 88px 1fr 64px; gap: 8px; align-items: center; margin: 3px 0; }
.bars i { display: block; height: 10px; border-radius: 3px; background: var(--accent); min-width: 1px; }
.flag { color: var(--UNCERTAIN); font-weight: 600; }
svg text { font: 11px system-ui, sans-serif; fill: var(--muted); }
.badge { display: inline-block; padding: 0 8px; border-radius: 9px; font-size: 12px; font-weight: 600; color: #fff; line-height: 18px; }
.b-VERIFIED { background: var(--VERIFIED); } .b-REPAIRED { background: var(--REPAIRED); } .b-AMBIGUOUS { background: var(--AMBIGUOUS); }
.b-UNCERTAIN { background: var(--UNCERTAIN); } .b-BLOCKED { background: var(--BLOCKED); } .b-other { background: var(--other); }
.toolbar { display: flex; flex-wrap: wrap; gap: 10px 16px; align-items: center; margin-bottom: 10px; }
.toolbar input[type=search] { flex: 1 1 280px; max-width: 460px; padding: 7px 10px; border: 1px solid #c8cfdb; border-radius: 7px; font: inherit; }
.toolbar select { padding: 6px 8px; border: 1px solid #c8cfdb; border-radius: 7px; font: inherit; background: #fff; }
.chips { display: flex; flex-wrap: wrap; gap: 6px; }
.chips label { display: inline-flex; align-items: center; gap: 6px; padding: 3px 10px; border: 1px solid var(--line); border-radius: 14px; background: #fff; cursor: pointer; user-select: none; }
.chips input { margin: 0; }
#shown { margin-left: auto; }
#scroll { height: 68vh; min-height: 320px; overflow: auto; background: var(--card); border: 1px solid var(--line); border-radius: 10px; }
table.questions { width: 100%; border-collapse: separate; border-spacing: 0; table-layout: fixed; }
table.questions th { position: sticky; top: 0; z-index: 1; background: #eef1f6; text-align: left; font-weight: 600; padding: 0; border-bottom: 1px solid var(--line); }
table.questions th button { all: unset; box-sizing: border-box; display: block; width: 100%; padding: 8px 10px; cursor: pointer; }
table.questions th button:focus-visible { outline: 2px solid var(--accent); outline-offset: -2px; }
table.questions th[aria-sort=ascending] button::after { content: " ▲"; font-size: 10px; }
table.questions th[aria-sort=descending] button::after { content: " ▼"; font-size: 10px; }
table.questions td { height: 34px; padding: 0 10px; border-bottom: 1px solid var(--line); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
table.questions td.n { text-align: right; font-variant-numeric: tabular-nums; }
table.questions th.n button { text-align: right; }
table.questions tbody tr[data-row] { cursor: pointer; }
table.questions tbody tr[data-row]:hover td { background: #f3f6fb; }
table.questions tbody tr[data-row]:focus { outline: 2px solid var(--accent); outline-offset: -2px; }
table.questions tbody tr.open td { background: #e8f0fb; }
col.c-id { width: 9%; } col.c-status { width: 9.5%; } col.c-method { width: 9%; } col.c-attempts { width: 6.5%; } col.c-conf { width: 7.5%; }
col.c-agree { width: 7.5%; } col.c-tokens { width: 7%; } col.c-ms { width: 7.5%; }
.ok { color: var(--VERIFIED); } .bad { color: var(--UNCERTAIN); }
#detail { position: fixed; top: 0; right: 0; bottom: 0; width: min(980px, 72vw); overflow: auto; background: #fff; border-left: 1px solid var(--line); box-shadow: -10px 0 30px rgba(20, 30, 50, 0.14); padding: 20px 26px 40px; z-index: 5; }
#detail[hidden] { display: none; }
#detail header { display: flex; align-items: center; gap: 12px; }
#detail header h2 { margin: 0; font-size: 20px; flex: 1; overflow-wrap: anywhere; }
#close { font: inherit; padding: 5px 12px; border: 1px solid #c8cfdb; border-radius: 7px; background: #fff; cursor: pointer; }
dl.pairs { display: grid; grid-template-columns: max-content 1fr; gap: 3px 14px; margin: 12px 0; }
dl.pairs dt { color: var(--muted); }
dl.pairs dd { margin: 0; overflow-wrap: anywhere; }
#detail figure { margin: 8px 0; padding: 10px; background: #fafbfc; border: 1px solid var(--line); border-radius: 8px; text-align: center; }
#detail figure svg { max-width: 100%; height: auto; }
#detail table { width: 100%; border-collapse: collapse; }
#detail th, #detail td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; overflow-wrap: anywhere; }
#detail th { background: #eef1f6; white-space: nowrap; }
td.accepted { color: var(--VERIFIED); } td.rejected { color: var(--UNCERTAIN); } td.ambiguous { color: var(--AMBIGUOUS); }
pre { margin: 6px 0 0; padding: 8px; max-height: 280px; overflow: auto; white-space: pre-wrap; word-break: break-word; background: #f1f3f6; border-radius: 6px; font: 12px/1.45 ui-monospace, Menlo, Consolas, monospace; text-align: left; }
details summary { cursor: pointer; color: var(--muted); }
ol.steps { columns: 3; padding-left: 22px; }
#detail tr.winner td { background: #eaf6ef; }
#detail table.clusters { margin-top: 8px; }
.caveat { color: var(--muted); font-size: 12px; }
#detail section.clarification { margin: 0 0 10px; padding: 6px 12px; border: 1px solid var(--line); border-left: 4px solid var(--AMBIGUOUS); border-radius: 6px; }
#detail section.clarification h4 { margin: 4px 0; }
#detail section.clarification p { margin: 4px 0; }
ol.readings li { white-space: pre-wrap; overflow-wrap: anywhere; }
ol.readings li.chosen { font-weight: 600; }
#detail tr.round td { background: #fff7e0; font-weight: 600; }
ol.steps small.round { color: var(--AMBIGUOUS); font-weight: 600; }
#detail tr.escalation td { background: #eef3fb; font-weight: 600; }
ol.steps small.escalation { color: var(--accent); font-weight: 600; }
#detail tr.skipped td { color: var(--muted); font-style: italic; }
#detail p.budget { margin: 8px 0; padding: 6px 10px; background: #fdecea; border-left: 4px solid var(--UNCERTAIN); border-radius: 4px; }
`;

/** The page of a report. */
export function renderReport(model: ReportModel, svgs: readonly string[]): string {
  // The statuses start checked: the filter's set begins with every one.
  const data = { rows: model.rows, statuses: Object.keys(model.summary.byStatus), settings: model.settings, maxDrawn: MAX_DRAWN_PATHS };
  const script = REPORT_SCRIPT.text;
  const hash = createHash('sha256').update(script).digest('base64');
  const policy = `default-src 'none'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Booth report: ${model.source}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>Booth report</h1>
<p class="sub">${model.source} · ${countText(model.summary.results)} questions${settingsLine(model)}</p>
</header>
${summarySection(model)}
${model.calibration === null && Object.keys(model.accuracy).length === 0 ? '' : accuracySection(model)}
<h2 id="questions-title">Questions</h2>
<div class="toolbar">
<div class="chips" id="status-filter" role="group" aria-label="statuses shown">${Object.entries(model.summary.byStatus).map(
    ([status, n]) => html`<label><input type="checkbox" checked value="${status}"><span class="dot" style="background:${colorOf(status)}"></span>${status} <span class="muted num">${countText(n)}</span></label>`,
  )}</div>
<select id="method-filter" aria-label="method"><option value="">every method</option>${Object.entries(model.summary.byMethod).map(
    ([method, n]) => html`<option value="${method}">${method} (${countText(n)})</option>`,
  )}</select>
<input type="search" id="search" placeholder="search ids, questions and answers" aria-label="search ids, questions and answers">
<span id="shown" class="muted num"></span>
</div>
<div id="scroll" tabindex="-1">
<table class="questions" id="table">
<colgroup><col class="c-id"><col class="c-status"><col class="c-method"><col class="c-attempts"><col class="c-conf"><col class="c-agree"><col class="c-tokens"><col class="c-ms"><col></colgroup>
<thead><tr>${COLUMNS.map(([key, name, numeric]) => html`<th data-key="${key}"${numeric ? NUMERIC : ''} aria-sort="none"><button type="button">${name}</button></th>`)}</tr></thead>
<tbody id="rows"></tbody>
</table>
</div>
<p class="caveat">Click a row, or press Enter on it, for the question's trace. VERIFIED and REPAIRED mean an acceptance condition was met, never that the answer is true.</p>
<aside id="detail" hidden aria-labelledby="detail-title"></aside>
${svgs.map((svg, i) => html`<template id="path-${i}">${graphvizSvg(svg)}</template>\n`)}<script type="application/json" id="report-data">${scriptJson(data)}</script>
<script type="application/json" id="report-traces">${scriptJson(model.traces)}</script>
<script>${REPORT_SCRIPT}</script>
</body>
</html>
`.text;
}

const NUMERIC = html` class="n"`;

/** What the run was asked to do, when its lines agree; a warning when they do not, as their figures then mix runs. */
function settingsLine(model: ReportModel): Html | '' {
  if (model.settings.length > 1) return html`<br><span class="flag small">The lines ran with different settings: the figures below mix them.</span>`;
  const [shared] = model.settings;
  if (!shared) return '';
  return html`<br><span class="small">settings: ${shared.map(([name, value]) => `${name} ${value}`).join(' · ')}</span>`;
}

/** The table's columns: the index of their value in a row, their heading, and whether they hold numbers. */
const COLUMNS: readonly (readonly [number, string, boolean])[] = [
  [0, 'id', false],
  [1, 'status', false],
  [2, 'method', false],
  [3, 'attempts', true],
  [4, 'confidence', true],
  [5, 'agreement', true],
  [6, 'tokens', true],
  [7, 'time', true],
  [8, 'question · answer', false],
];

const share = (n: number, of: number) => (of === 0 ? '—' : `${((n / of) * 100).toFixed(1)}%`);

function summarySection(model: ReportModel): Html {
  const { summary, latency } = model;
  const total = summary.results;
  const accepted = (summary.byStatus['VERIFIED'] ?? 0) + (summary.byStatus['REPAIRED'] ?? 0);
  const statusBar = Object.entries(summary.byStatus).map(
    ([status, n]) => html`<span style="width:${((n / Math.max(total, 1)) * 100).toFixed(3)}%;background:${colorOf(status)}" title="${status} ${n}"></span>`,
  );
  const legend = Object.entries(summary.byStatus).map(
    ([status, n]) => html`<span><span class="dot" style="background:${colorOf(status)}"></span>${status} <b class="num">${countText(n)}</b> <span class="muted num">${share(n, total)}</span></span>`,
  );
  const methods = Object.entries(summary.byMethod).map(
    ([method, n]) =>
      html`<tr><td>${method}${METHOD_FLAGS.get(method) ?? ''}</td><td class="n">${countText(n)}</td><td class="n muted">${share(n, total)}</td></tr>`,
  );
  const mostAttempts = Math.max(1, ...model.attemptCounts.values());
  const attempts = [...model.attemptCounts].map(
    ([k, n]) => html`<div><span>${k} attempt${k === 1 ? '' : 's'}</span><i style="width:${((n / mostAttempts) * 100).toFixed(2)}%"></i><span class="num">${countText(n)}</span></div>`,
  );
  const calledOff = summary.byMethod['call_failure'] ?? 0;
  const budgetStopped = summary.byMethod['budget'] ?? 0;
  const badReplies = summary.byMethod['parse_failure'] ?? 0;
  return html`<section class="grid" id="summary">
<div class="card" id="by-status">
<h3>Status</h3>
<div class="big num">${share(accepted, total)} <span class="small muted">accepted (VERIFIED or REPAIRED)</span></div>
<div class="statusbar">${statusBar}</div>
<div class="legend">${legend}</div>
</div>
<div class="card" id="by-method">
<h3>Method: what decided</h3>
<table class="plain">${methods}</table>
</div>
<div class="card" id="outages">
<h3>Outages and bad replies</h3>
<div><b class="num">${countText(summary.everyCallFailed)}</b> question${summary.everyCallFailed === 1 ? '' : 's'} never heard from the model: every call failed${calledOff > 0 ? html` <span class="flag small">outage</span>` : ''}</div>
<div class="muted small">${countText(summary.failedCalls)} failed calls in all, retries included; ${countText(calledOff)} ended as call_failure</div>
<div style="margin-top:8px"><b class="num">${countText(summary.unparseable)}</b> unparseable replies</div>
<div class="muted small">the model answered without a usable JSON object; ${countText(badReplies)} question${badReplies === 1 ? '' : 's'} ended as parse_failure</div>
</div>
<div class="card" id="attempts">
<h3>Attempts per question</h3>
<div class="big num">${summary.meanAttempts.toFixed(2)} <span class="small muted">on average</span></div>
<div class="bars">${attempts}</div>
</div>
<div class="card" id="latency">
<h3>Time per question</h3>
<div class="num">p50 <b>${durationText(latency.p50)}</b> · p90 <b>${durationText(latency.p90)}</b> · p99 <b>${durationText(latency.p99)}</b></div>
${histogram(latency.sorted, latency)}
</div>
<div class="card" id="tokens">
<h3>Tokens and cost</h3>
${model.spent.length === 0 ? html`<div class="muted">No call reported usage: the tokens are unknown.</div>` : model.spent.map((line) => html`<div>${line}</div>`)}
</div>
${model.models.length === 0 && budgetStopped === 0 ? '' : spendCard(model, budgetStopped)}</section>`;
}

/** Methods the summary marks beside their count: what they mean for the run as a whole. */
const METHOD_FLAGS = new Map<string, Html>([
  ['call_failure', html` <span class="flag small">outage</span>`],
  ['budget', html` <span class="flag small">stopped by the budget</span>`],
]);

/**
 * What each model spent over the file, in the order first tried, and how many questions the
 * budget stopped: a cascade's figures, to see which model answered and at what cost.
 */
function spendCard(model: ReportModel, budgetStopped: number): Html {
  const rows = model.models.map(
    (m) => html`<tr><td>${m.model}</td><td class="n">${countText(m.questions)}</td><td class="n">${countText(m.accepted)}</td><td class="n">${countText(m.attempts)}</td><td class="n">${countText(m.calls)}</td><td class="n">${m.usage === null ? '—' : countText(m.usage.totalTokens)}</td><td class="n">${m.usage === null || m.usage.costUsd === null ? '—' : costText(m.usage.costUsd)}</td></tr>`,
  );
  return html`<div class="card" id="models">
<h3>Models and budget</h3>
<div><b class="num">${countText(budgetStopped)}</b> question${budgetStopped === 1 ? '' : 's'} stopped by the budget${budgetStopped > 0 ? html` <span class="flag small">budget</span>` : ''}</div>
<div class="muted small">a question stopped before a call its budget could not afford ends UNCERTAIN, method budget</div>
${rows.length === 0 ? '' : html`<table class="plain" style="margin-top:8px"><tr><th>model</th><th class="n">questions</th><th class="n">accepted</th><th class="n">attempts</th><th class="n">calls</th><th class="n">tokens</th><th class="n">cost</th></tr>${rows}</table>
<div class="muted small">per model, in the order first tried; accepted: the VERIFIED or REPAIRED answers it gave. — when its calls reported no usage, or no cost.</div>`}
</div>
`;
}

/**
 * Bars of how many questions took how long, with the p50 and p90 marked. The axis ends at
 * the p99, the slower 1% counted in the last bar: a few stragglers would otherwise squeeze
 * every other question into its first bars.
 */
function histogram(sorted: readonly number[], latency: ReportModel['latency']): Html {
  const width = 320;
  const height = 90;
  const bins = 32;
  const slowest = sorted.at(-1) ?? 0;
  const top = latency.p99 > 0 && latency.p99 < slowest ? latency.p99 : slowest;
  if (sorted.length === 0 || top === 0) return html`<div class="muted small">No times recorded.</div>`;
  const counts = new Array<number>(bins).fill(0);
  for (const ms of sorted) counts[Math.min(bins - 1, Math.floor((ms / top) * bins))]! += 1;
  const most = Math.max(...counts);
  const barWidth = width / bins;
  const bars = counts.map((n, i) => {
    const h = (n / most) * (height - 16);
    const range = i === bins - 1 && top < slowest ? `${durationText((i * top) / bins)} and more` : `${durationText((i * top) / bins)} – ${durationText(((i + 1) * top) / bins)}`;
    return html`<rect x="${(i * barWidth + 0.5).toFixed(1)}" y="${(height - h).toFixed(1)}" width="${(barWidth - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="#2b6cb0" opacity="0.8"><title>${range}: ${n}</title></rect>`;
  });
  // p50's name left of its line, p90's right of its own: close together, they still read.
  const mark = (ms: number, name: string, side: 'end' | 'start') => {
    const x = Math.min(width, (ms / top) * width);
    return html`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="4" y2="${height}" stroke="#1a202c" stroke-dasharray="3 3"/><text x="${(x + (side === 'end' ? -3 : 3)).toFixed(1)}" y="10" text-anchor="${side}">${name}</text>`;
  };
  return html`<svg viewBox="-4 0 ${width + 8} ${height + 18}" width="100%" role="img" aria-label="time per question">${bars}${mark(latency.p50, 'p50', 'end')}${mark(latency.p90, 'p90', 'start')}<line x1="0" x2="${width}" y1="${height}" y2="${height}" stroke="#cbd2dc"/><text x="0" y="${height + 14}">0</text><text x="${width}" y="${height + 14}" text-anchor="end">${durationText(top)}${top < slowest ? ' (p99)' : ''}</text></svg>`;
}

function accuracySection(model: ReportModel): Html {
  const rows = Object.entries(model.accuracy).map(
    ([status, { count, correct }]) =>
      html`<tr><td><span class="dot" style="background:${colorOf(status)}"></span>${status}</td><td class="n">${share(correct, count)}</td><td class="n muted">${countText(correct)} of ${countText(count)}</td></tr>`,
  );
  const { calibration } = model;
  return html`<h2>Accuracy against the expected answers</h2>
<section class="grid" id="accuracy">
<div class="card">
<h3>Accuracy by status</h3>
<table class="plain"><tr><th>status</th><th class="n">right</th><th class="n">of</th></tr>${rows}</table>
<p class="muted small">Over the results with an expected answer, compared as <code>booth calibrate</code> compares them.</p>
</div>
${calibration === null ? '' : calibrationCard(calibration)}
</section>`;
}

/** A reliability diagram, as `booth calibrate --svg` draws one but without its optional libraries: Booth's own SVG. */
function calibrationCard(c: Calibration): Html {
  const size = 240;
  const pad = 30;
  const x = (v: number) => (pad + v * size).toFixed(1);
  const y = (v: number) => (pad / 2 + (1 - v) * size).toFixed(1);
  const filled = c.bins.filter((bin) => bin.count > 0 && bin.meanConfidence !== null && bin.accuracy !== null);
  const most = Math.max(1, ...filled.map((bin) => bin.count));
  const line = filled.map((bin) => `${x(bin.meanConfidence!)},${y(bin.accuracy!)}`).join(' ');
  const points = filled.map(
    (bin) =>
      html`<circle cx="${x(bin.meanConfidence!)}" cy="${y(bin.accuracy!)}" r="${(3 + 9 * Math.sqrt(bin.count / most)).toFixed(1)}" fill="#c0392b" fill-opacity="0.8" stroke="#fff"><title>${bin.lower.toFixed(1)}–${bin.upper.toFixed(1)}: ${bin.count} answers, accuracy ${bin.accuracy!.toFixed(3)}, mean confidence ${bin.meanConfidence!.toFixed(3)}</title></circle>`,
  );
  const ticks = [0, 0.25, 0.5, 0.75, 1].map(
    (t) => html`<text x="${x(t)}" y="${(pad / 2 + size + 14).toFixed(1)}" text-anchor="middle">${t}</text><text x="${pad - 5}" y="${(Number(y(t)) + 4).toFixed(1)}" text-anchor="end">${t}</text>`,
  );
  const threshold = c.threshold
    ? `threshold ${numberText(c.threshold.value)} reaches precision ${c.threshold.precision.toFixed(3)} (target ${c.targetPrecision}) and accepts ${(c.threshold.coverage * 100).toFixed(1)}%`
    : `no threshold reaches precision ${c.targetPrecision}`;
  return html`<div class="card" id="calibration">
<h3>Calibration: confidence against accuracy</h3>
<svg viewBox="0 0 ${size + pad + 10} ${size + pad + 12}" width="${size + pad + 10}" role="img" aria-label="reliability diagram">
<rect x="${pad}" y="${pad / 2}" width="${size}" height="${size}" fill="#fafbfc" stroke="#e2e6ee"/>
<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#a0aec0" stroke-dasharray="4 4"/>
<polyline points="${line}" fill="none" stroke="#c0392b" stroke-width="2"/>
${points}${ticks}
</svg>
<div class="num">n ${countText(c.count)} · accuracy ${c.accuracy.toFixed(3)} · ECE ${c.ece.toFixed(4)} · Brier ${c.brier.toFixed(4)}</div>
<div class="muted small">${threshold}. The dashed line is perfect calibration; a dot is a tenth of the confidence range, its size the answers in it.</div>
</div>`;
}

