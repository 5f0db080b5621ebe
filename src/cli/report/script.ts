import { html } from '../../visualize/escape.js';

/**
 * The report page's script: the table of questions (sorted, filtered, searched, and drawn
 * only where it is scrolled to, so 10 000 rows cost what 60 do) and the trace of the
 * question clicked, built from the data the page holds as JSON. Every text from the
 * results goes in with `textContent`; markup comes only from the page's own templates.
 *
 * Written with no backslash, backtick or dollar-brace: it is the text of an `html`
 * template, which would read those, and the page's Content-Security-Policy names its hash.
 */
export const REPORT_SCRIPT = html`
(function () {
  'use strict';
  var byId = function (id) { return document.getElementById(id); };
  var data = JSON.parse(byId('report-data').textContent);
  var rows = data.rows;
  var traces = null;
  var KNOWN = new Set(['VERIFIED', 'REPAIRED', 'AMBIGUOUS', 'UNCERTAIN', 'BLOCKED']);
  var ROW_HEIGHT = 34;
  var OVERSCAN = 12;
  var scroll = byId('scroll');
  var body = byId('rows');
  var shownText = byId('shown');
  var search = byId('search');
  var methodFilter = byId('method-filter');
  var panel = byId('detail');
  var statuses = new Set(data.statuses);
  var numbers = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });
  var collator = new Intl.Collator('en', { numeric: true });
  var haystack = rows.map(function (r) { return (r[0] + ' ' + r[8] + ' ' + r[9]).toLowerCase(); });
  var order = rows.map(function (r, i) { return i; });
  var shown = order;
  var sortKey = -1;
  var sortDir = 1;
  var openRow = -1;
  var pending = false;

  /* As the trace page writes a duration (durationText): ms while they read easily, then seconds. */
  function duration(ms) { return ms < 10000 ? Math.round(ms) + ' ms' : (ms / 1000).toFixed(1) + ' s'; }
  function number(value) { return value === null ? '—' : numbers.format(value); }
  function element(tag, text, className) {
    var made = document.createElement(tag);
    if (text !== undefined && text !== null) made.textContent = text;
    if (className) made.className = className;
    return made;
  }
  function badge(status) { return element('span', status, 'badge b-' + (KNOWN.has(status) ? status : 'other')); }

  function rowElement(i) {
    var r = rows[i];
    var tr = document.createElement('tr');
    tr.tabIndex = 0;
    tr.dataset.row = String(i);
    if (i === openRow) tr.className = 'open';
    tr.appendChild(element('td', r[0]));
    tr.appendChild(element('td')).appendChild(badge(r[1]));
    tr.appendChild(element('td', r[2]));
    tr.appendChild(element('td', number(r[3]), 'n'));
    tr.appendChild(element('td', number(r[4]), 'n'));
    tr.appendChild(element('td', number(r[5]), 'n'));
    tr.appendChild(element('td', number(r[6]), 'n'));
    tr.appendChild(element('td', r[7] === null ? '—' : duration(r[7]), 'n'));
    var text = tr.appendChild(element('td'));
    if (r[10] !== null) text.appendChild(element('span', r[10] ? '✓ ' : '✗ ', r[10] ? 'ok' : 'bad'));
    if (r[8] !== '') text.appendChild(element('span', r[8] + ' → ', 'muted'));
    text.appendChild(document.createTextNode(r[9] === '' ? '—' : r[9]));
    return tr;
  }
  function spacer(height) {
    var tr = document.createElement('tr');
    var td = tr.appendChild(element('td'));
    td.colSpan = 9;
    td.style.height = height + 'px';
    td.style.padding = '0';
    td.style.border = '0';
    return tr;
  }
  function render() {
    pending = false;
    var first = Math.max(0, Math.floor(scroll.scrollTop / ROW_HEIGHT) - OVERSCAN);
    var last = Math.min(shown.length, first + Math.ceil(scroll.clientHeight / ROW_HEIGHT) + 2 * OVERSCAN);
    var parts = [];
    if (first > 0) parts.push(spacer(first * ROW_HEIGHT));
    for (var k = first; k < last; k += 1) parts.push(rowElement(shown[k]));
    if (last < shown.length) parts.push(spacer((shown.length - last) * ROW_HEIGHT));
    if (shown.length === 0) {
      var none = element('tr');
      var td = none.appendChild(element('td', 'No question matches.', 'muted'));
      td.colSpan = 9;
      parts.push(none);
    }
    body.replaceChildren.apply(body, parts);
  }
  function later() {
    if (!pending) { pending = true; requestAnimationFrame(render); }
  }
  function apply() {
    var query = search.value.trim().toLowerCase();
    var method = methodFilter.value;
    shown = order.filter(function (i) {
      var r = rows[i];
      return statuses.has(r[1]) && (method === '' || r[2] === method) && (query === '' || haystack[i].indexOf(query) !== -1);
    });
    shownText.textContent = shown.length === rows.length
      ? numbers.format(rows.length) + ' questions'
      : numbers.format(shown.length) + ' of ' + numbers.format(rows.length) + ' questions';
    scroll.scrollTop = 0;
    render();
  }
  function sortBy(key) {
    if (sortKey === key) sortDir = -sortDir;
    else { sortKey = key; sortDir = 1; }
    order = rows.map(function (r, i) { return i; }).sort(function (a, b) {
      var x = rows[a][key];
      var y = rows[b][key];
      /* Unknown values last, whichever way. */
      if (x === null || y === null) return x === y ? a - b : x === null ? 1 : -1;
      var c = typeof x === 'number' ? x - y : collator.compare(x, y);
      return c * sortDir || a - b;
    });
    document.querySelectorAll('th[data-key]').forEach(function (th) {
      th.setAttribute('aria-sort', Number(th.dataset.key) === key ? (sortDir === 1 ? 'ascending' : 'descending') : 'none');
    });
    apply();
  }

  function pairs(list) {
    var dl = element('dl', null, 'pairs');
    list.forEach(function (pair) { dl.appendChild(element('dt', pair[0])); dl.appendChild(element('dd', pair[1])); });
    return dl;
  }
  function table(headings, items, fill) {
    var t = element('table');
    var head = t.appendChild(element('thead')).appendChild(element('tr'));
    headings.forEach(function (h) { head.appendChild(element('th', h)); });
    var tbody = t.appendChild(element('tbody'));
    items.forEach(function (item) { tbody.appendChild(fill(item)); });
    return t;
  }
  function folded(summary, text) {
    var details = element('details');
    details.appendChild(element('summary', summary));
    details.appendChild(element('pre', text));
    return details;
  }
  function openTrace(i) {
    if (traces === null) traces = JSON.parse(byId('report-traces').textContent);
    var t = traces[i];
    var r = rows[i];
    openRow = i;
    var parts = [];
    var header = element('header');
    var title = header.appendChild(element('h2'));
    title.id = 'detail-title';
    title.appendChild(badge(r[1]));
    title.appendChild(document.createTextNode(' ' + r[0]));
    var close = header.appendChild(element('button', 'Close', null));
    close.id = 'close';
    close.type = 'button';
    close.addEventListener('click', closeTrace);
    parts.push(header);
    if (r[8] !== '') parts.push(element('p', r[8]));
    parts.push(pairs(t.pairs));
    if (t.budget !== null) {
      var stopped = element('p', t.budget, 'budget');
      stopped.id = 'detail-budget';
      parts.push(stopped);
    }
    var settings = data.settings[t.settings];
    if (settings === null) parts.push(element('p', 'An evidence check: no confidence threshold, retry, validator or timer.', 'muted small'));
    else parts.push(element('p', 'settings: ' + settings.map(function (p) { return p[0] + ' ' + p[1]; }).join(' · '), 'muted small'));
    parts.push(element('h3', 'Path through the machine'));
    var figure = element('figure');
    figure.id = 'detail-diagram';
    var drawing = t.path === null ? null : byId('path-' + Number(t.path));
    if (drawing !== null) figure.appendChild(drawing.content.cloneNode(true));
    else figure.appendChild(element('p', 'Not drawn: this file holds more distinct paths than a report draws (' + data.maxDrawn + '); toHtml(resultFrom(line)) from boothjs/visualize draws this one.', 'muted small'));
    parts.push(figure);
    if (t.modelPath !== null) {
      var path = element('p', 'models: ' + t.modelPath, 'muted small');
      path.id = 'detail-model-path';
      parts.push(path);
    }
    /* Each clarification, and the round it began, as the trace page shows them. */
    var rounds = new Map();
    t.clarifications.forEach(function (c, n) {
      if (!rounds.has(c.attempt)) rounds.set(c.attempt, c);
      if (n === 0) parts.push(element('h3', 'Clarifications'));
      var section = element('section', null, 'clarification');
      section.dataset.clarification = String(n);
      section.appendChild(element('h4', c.heading));
      section.appendChild(element('p', 'The question was ambiguous; the model offered ' + c.readings.length + (c.readings.length === 1 ? ' reading:' : ' readings:')));
      var list = section.appendChild(element('ol', null, 'readings'));
      c.readings.forEach(function (r) {
        var li = list.appendChild(element('li', r[1] ? r[0] + ' ' : r[0], r[1] ? 'chosen' : null));
        if (r[1]) li.appendChild(element('small', '(chosen)'));
      });
      section.appendChild(element('p', c.said, 'said'));
      section.appendChild(folded('the question as it stood', c.question));
      parts.push(section);
    });
    /* Each model a cascade tried, with what it spent. */
    if (t.models.length > 0) {
      parts.push(element('h3', 'Models'));
      var models = table(['model', 'attempts', 'calls', 'tokens'], t.models, function (m) {
        var tr = element('tr');
        m.forEach(function (value) { tr.appendChild(element('td', String(value))); });
        return tr;
      });
      models.id = 'detail-models';
      parts.push(models);
    }
    var escalations = new Map();
    t.escalations.forEach(function (e) { if (!escalations.has(e[0])) escalations.set(e[0], e[1]); });
    if (t.attempts.length > 0) {
      parts.push(element('h3', 'Attempts'));
      var withTokens = t.attempts.some(function (a) { return a[7] !== null; });
      var withModels = t.attempts.some(function (a) { return a[9] !== null && a[9] !== undefined; });
      var headings = ['#', 'answer', 'confidence'].concat(withModels ? ['model'] : [], ['why', 'then', 'duration'], withTokens ? ['tokens'] : [], ['raw reply']);
      /* A clarified round starts with a row that says what the person said; a cascade's next model with one that names it. */
      var items = [];
      t.attempts.forEach(function (a) {
        if (rounds.has(a[0])) items.push({ round: rounds.get(a[0]) });
        if (escalations.has(a[0])) items.push({ escalation: escalations.get(a[0]) });
        items.push(a);
      });
      var attempts = table(headings, items, function (a) {
        if (a.round !== undefined || a.escalation !== undefined) {
          var row = element('tr', null, a.round !== undefined ? 'round' : 'escalation');
          var cell = row.appendChild(element('td', a.round !== undefined ? a.round.heading + ': ' + a.round.said : a.escalation));
          cell.colSpan = headings.length;
          return row;
        }
        var tr = element('tr');
        tr.appendChild(element('td', String(a[0])));
        tr.appendChild(element('td', a[1]));
        tr.appendChild(element('td', a[2]));
        if (withModels) tr.appendChild(element('td', a[9] === null ? '—' : a[9], 'model'));
        tr.appendChild(element('td', a[3], 'why ' + (a[4] === 'accepted' || a[4] === 'ambiguous' ? a[4] : 'rejected')));
        tr.appendChild(element('td', a[5]));
        tr.appendChild(element('td', a[6]));
        if (withTokens) tr.appendChild(element('td', a[7] === null ? '—' : a[7]));
        tr.appendChild(element('td')).appendChild(folded(a[8].length + ' characters', a[8]));
        return tr;
      });
      attempts.id = 'detail-attempts';
      parts.push(attempts);
    }
    t.votes.forEach(function (v) {
      parts.push(element('h3', 'Samples and votes: ' + v.heading));
      parts.push(pairs(v.pairs));
      var samples = table(['sample', 'answer', 'confidence', 'reply', 'error', 'cluster'], v.samples, function (s) {
        var tr = element('tr', null, s[5] === '1 (winner)' ? 'winner' : s[3] === 'skipped' ? 'skipped' : null);
        s.forEach(function (value) { tr.appendChild(element('td', String(value))); });
        return tr;
      });
      samples.className = 'samples';
      parts.push(samples);
      if (v.clusters.length > 0) {
        var clusters = table(['cluster', 'answer', 'count', 'mean confidence', 'samples'], v.clusters, function (c) {
          var tr = element('tr', null, c[0] === '1 (winner)' ? 'winner' : null);
          c.forEach(function (value) { tr.appendChild(element('td', String(value))); });
          return tr;
        });
        clusters.className = 'clusters';
        parts.push(clusters);
      }
    });
    if (t.prompts.length > 0) {
      parts.push(element('h3', 'Prompts sent'));
      t.prompts.forEach(function (p) { parts.push(folded(p[0], p[1])); });
    }
    parts.push(element('h3', 'Trace'));
    var steps = element('ol', null, 'steps');
    var starts = new Map();
    t.clarifications.forEach(function (c, n) {
      var first = t.trace.findIndex(function (s) { return s[1] === c.attempt; });
      if (!starts.has(first)) starts.set(first, n);
    });
    var moved = new Map();
    t.escalations.forEach(function (e) {
      var first = t.trace.findIndex(function (s) { return s[1] === e[0]; });
      if (first !== -1 && !moved.has(first)) moved.set(first, e[1]);
    });
    t.trace.forEach(function (s, k) {
      var li = steps.appendChild(element('li', s[0] + ' '));
      li.appendChild(element('small', '(attempt ' + s[1] + ')'));
      if (starts.has(k)) {
        li.className = 'round-start';
        li.appendChild(document.createTextNode(' '));
        li.appendChild(element('small', 'round ' + (starts.get(k) + 2), 'round'));
      }
      if (moved.has(k)) {
        if (!starts.has(k)) li.className = 'escalation-start';
        li.appendChild(document.createTextNode(' '));
        li.appendChild(element('small', moved.get(k), 'escalation'));
      }
    });
    parts.push(steps);
    panel.replaceChildren.apply(panel, parts);
    panel.hidden = false;
    panel.scrollTop = 0;
    close.focus();
    render();
  }
  function closeTrace() {
    var was = openRow;
    panel.hidden = true;
    openRow = -1;
    render();
    var row = body.querySelector('tr[data-row="' + was + '"]');
    if (row !== null) row.focus();
  }

  byId('status-filter').addEventListener('change', function (event) {
    var box = event.target;
    if (box.checked) statuses.add(box.value); else statuses.delete(box.value);
    apply();
  });
  methodFilter.addEventListener('change', apply);
  search.addEventListener('input', apply);
  scroll.addEventListener('scroll', later);
  window.addEventListener('resize', later);
  document.querySelector('table.questions thead').addEventListener('click', function (event) {
    var th = event.target.closest('th[data-key]');
    if (th !== null) sortBy(Number(th.dataset.key));
  });
  body.addEventListener('click', function (event) {
    var tr = event.target.closest('tr[data-row]');
    if (tr !== null) openTrace(Number(tr.dataset.row));
  });
  body.addEventListener('keydown', function (event) {
    var tr = event.target.closest('tr[data-row]');
    if (tr !== null && event.key === 'Enter') openTrace(Number(tr.dataset.row));
  });
  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape' && !panel.hidden) closeTrace();
  });
  apply();
})();
`;
