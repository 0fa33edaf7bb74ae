// mneme's web console (docs/console.md), the views beside the transcript: the live-context
// chart of one session, a user's facts, the daemon's health and metrics. Loaded after
// console.js, whose helpers ($, api, el, tokens, when, showView, current) it uses; data is
// put into the page as text nodes and SVG attributes only, never as HTML.
//
// Views, chosen by the location's hash (console.js routes them here):
//   #/facts[?user=U&q=TEXT]   a user's facts (newest first, or those matching TEXT)
//   #/health                  /v1/health, and /metrics for an admin token
'use strict';

const svgNs = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(svgNs, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

// ---- the live-context chart ------------------------------------------------------------

// The live context of a session over its life as points {at, tokens, kind}: each committed
// compaction with a log row rises to its tokens_before and drops to its tokens_after at its
// time; the last point is the live context now (or at the session's end). A compaction
// without a log row (written before the log existed, or a micro-compaction fold) has no
// token figures and is left out; failed attempts are points of kind "failed".
function liveContextPoints(session, liveTokens, compactions, attempts) {
  const points = [{ at: session.started_at_ms, tokens: 0, kind: 'start' }];
  const logged = compactions.filter((c) => c.logged && c.at_ms > 0)
    .sort((a, b) => a.at_ms - b.at_ms);
  for (const c of logged) {
    points.push({ at: c.at_ms, tokens: c.tokens_before, kind: 'before' });
    points.push({ at: c.at_ms, tokens: c.tokens_after, kind: 'after' });
  }
  const end = session.ended_at_ms || Date.now();
  if (liveTokens > 0) points.push({ at: Math.max(end, points[points.length - 1].at), tokens: liveTokens, kind: 'now' });
  const failed = attempts.filter((a) => a.outcome !== 'committed' && a.at_ms > 0)
    .map((a) => ({ at: a.at_ms, tokens: a.tokens_before, kind: 'failed' }));
  return { line: points, failed };
}

// The chart as an SVG of width x height user units (it scales with its box).
// `state` is the session route's answer (live_tokens, threshold_tokens: a dashed line).
function renderLiveChart(state, compactions, attempts) {
  const figure = $('live-chart');
  const liveTokens = state.live_tokens || 0, threshold = state.threshold_tokens || 0;
  const { line, failed } = liveContextPoints(state.session, liveTokens, compactions, attempts);
  const peak = Math.max(1, threshold, ...line.map((p) => p.tokens), ...failed.map((p) => p.tokens));
  const first = line[0].at;
  const last = Math.max(first + 1, ...line.map((p) => p.at), ...failed.map((p) => p.at));
  const width = 600, height = 160, pad = 6;
  const x = (at) => pad + (width - 2 * pad) * (at - first) / (last - first);
  const y = (n) => height - pad - (height - 2 * pad) * n / peak;
  const path = line.map((p, i) => `${i ? 'L' : 'M'}${x(p.at).toFixed(1)},${y(p.tokens).toFixed(1)}`).join(' ');
  const drops = line.filter((p) => p.kind === 'after').length;
  const label = `Live context over the session's life: peak ${tokens(peak)} tokens, ` +
                `${drops} compaction${drops === 1 ? '' : 's'} with a log row` +
                (failed.length ? `, ${failed.length} failed attempt${failed.length === 1 ? '' : 's'}` : '') +
                (liveTokens > 0 ? `, ${tokens(liveTokens)} live now` : '');
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label,
                             class: 'chart' },
                    svg('line', { x1: pad, y1: height - pad, x2: width - pad, y2: height - pad, class: 'axis' }),
                    svg('path', { d: path, class: 'live-line' }));
  if (threshold > 0)
    chart.append(svg('line', { x1: pad, y1: y(threshold).toFixed(1), x2: width - pad,
                               y2: y(threshold).toFixed(1), class: 'threshold' },
                     svg('title', {}, `compaction threshold ${tokens(threshold)} tokens`)));
  for (const p of line.filter((q) => q.kind === 'after'))
    chart.append(svg('circle', { cx: x(p.at).toFixed(1), cy: y(p.tokens).toFixed(1), r: 3, class: 'drop' },
                     svg('title', {}, `${when(p.at)}: compacted to ${tokens(p.tokens)} tokens`)));
  for (const p of failed)
    chart.append(svg('circle', { cx: x(p.at).toFixed(1), cy: y(p.tokens).toFixed(1), r: 3, class: 'failed-point' },
                     svg('title', {}, `${when(p.at)}: attempt at ${tokens(p.tokens)} tokens did not commit`)));
  chart.dataset.points = String(line.length);
  chart.dataset.drops = String(drops);
  figure.replaceChildren(chart, el('figcaption', 'muted', label));
}

// ---- facts -----------------------------------------------------------------------------

// A user token may read only its own user's facts; its user is the one of its sessions
// when the session list has been read and holds a single user.
function guessedUser() {
  const users = new Set(sessionList.all.map((s) => s.user_id));
  return users.size === 1 ? [...users][0] : '';
}

async function runFacts(user, query) {
  showView('facts-view');
  const who = user || guessedUser();
  $('facts-user').value = who;
  $('facts-query').value = query;
  if (!who) {
    $('facts-list').replaceChildren(el('li', 'muted', 'name a user to list their facts'));
    return;
  }
  const inactive = $('facts-inactive').checked ? '&include_inactive=true' : '';
  const q = query ? `&q=${encodeURIComponent(query)}` : '';
  const body = await api(`/v1/users/${encodeURIComponent(who)}/facts?limit=200${q}${inactive}`);
  const items = body.facts.map((f) => {
    const source = f.source_session ? el('a', null, f.source_session) : el('span', 'muted', 'no session');
    if (f.source_session) source.href = `#/session/${encodeURIComponent(f.source_session)}`;
    return el('li', `fact state-${f.state}`,
              el('div', 'row-head', el('span', 'role', f.key),
                 el('span', `state state-${f.active ? 'live' : 'rolled_back'}`, f.state),
                 el('span', 'muted', when(f.updated_at_ms || f.created_at_ms)), source),
              el('pre', 'content', f.value));
  });
  $('facts-list').replaceChildren(...items);
  if (!items.length) $('facts-list').append(el('li', 'muted', 'no fact'));
}

// ---- health and metrics ----------------------------------------------------------------

// Prometheus text exposition -> [{name, labels, value}], histogram buckets left out (their
// _sum and _count stay).
function parseMetrics(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1].endsWith('_bucket')) continue;
    samples.push({ name: m[1], labels: m[2] ? m[2].slice(1, -1) : '', value: Number(m[3]) });
  }
  return samples;
}

const health = { samples: [] };

function renderMetrics() {
  const needle = $('metrics-filter').value.trim().toLowerCase();
  const rows = health.samples
    .filter((s) => !needle || `${s.name}{${s.labels}}`.toLowerCase().includes(needle))
    .map((s) => el('tr', null, el('td', 'mono', s.name), el('td', 'mono', s.labels),
                   el('td', 'num', Number.isInteger(s.value) ? s.value : s.value.toPrecision(4))));
  $('metrics-rows').replaceChildren(...rows);
}

async function runHealth() {
  showView('health-view');
  const h = await api('/v1/health');
  const facts = [['status', h.status], ['version', h.version], ['summarizer', h.summarizer],
                 ['sessions hosted', h.sessions_hosted],
                 ['resident memory', h.rss_bytes > 0 ? `${(h.rss_bytes / 1048576).toFixed(1)} MiB` : '']];
  $('health-facts').replaceChildren(...facts.map(([k, v]) =>
    el('div', 'health-item', el('dt', null, k), el('dd', null, v === undefined ? '' : v))));
  const headers = { Accept: 'text/plain' };
  if (token()) headers.Authorization = `Bearer ${token()}`;
  const res = await fetch('/metrics', { headers });
  if (!res.ok) {
    health.samples = [];
    $('metrics-note').textContent = res.status === 403
      ? 'The metrics need an admin token (GET /metrics answered 403).'
      : `GET /metrics answered ${res.status}.`;
  } else {
    health.samples = parseMetrics(await res.text());
    $('metrics-note').textContent = `${health.samples.length} samples from GET /metrics`;
  }
  renderMetrics();
}

function startViews() {
  $('facts-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params = new URLSearchParams();
    const user = $('facts-user').value.trim(), q = $('facts-query').value.trim();
    if (user) params.set('user', user);
    if (q) params.set('q', q);
    const next = `#/facts?${params}`;
    if (location.hash === next) route(); else location.hash = next;
  });
  $('metrics-filter').addEventListener('input', renderMetrics);
  $('health-refresh').addEventListener('click', () => runHealth().catch(showError));
}
