// mneme's web console (docs/console.md): one page over the daemon's JSON API. Every
// request carries the token the user pasted (sessionStorage, this tab only); data is put
// into the page as text nodes only (never as HTML), so a message cannot inject markup.
//
// Views, chosen by the location's hash:
//   #/sessions                the stored sessions (filter, sort, pages of 50)
//   #/session/ID[/row/N]      one session: its transcript, paged by id, each compaction
//                             shown as a marker that opens the rows it replaced; its
//                             compaction log; row N (a search hit) opened and marked
//   #/search[?q=TEXT&user=U]  search across a user's sessions; a hit opens its row
//   #/facts, #/health         console-views.js (with the session's live-context chart)
'use strict';

const tokenKey = 'mneme.token';
const rowsPerPage = 200;
const sessionsPerPage = 50;

const $ = (id) => document.getElementById(id);

// ---- the API -------------------------------------------------------------------------

function token() { return sessionStorage.getItem(tokenKey); }

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

async function api(path) {
  const headers = { Accept: 'application/json' };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  const res = await fetch(path, { headers });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const message = body && body.error ? `${body.error.code}: ${body.error.message}`
                                       : `HTTP ${res.status}`;
    throw new ApiError(res.status, message);
  }
  return body;
}

const keyPath = (key) => `/v1/sessions/${encodeURIComponent(key)}`;

// ---- small DOM helpers ---------------------------------------------------------------

// An element with a class and children (strings become text nodes).
function el(tag, className, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  for (const child of children)
    if (child !== null && child !== undefined)
      node.append(child instanceof Node ? child : String(child));
  return node;
}

function showError(err) {
  const box = $('error');
  if (!err) { box.hidden = true; box.textContent = ''; return; }
  box.textContent = err.message || String(err);
  box.hidden = false;
  if (err.status === 401) signOut('The token was refused (401): sign in again.');
}

function showView(id) {
  for (const view of document.querySelectorAll('main > section'))
    view.hidden = view.id !== id;
}

// ---- formats -------------------------------------------------------------------------

// 335123 -> "335k", 9500 -> "9.5k", 812 -> "812".
function tokens(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

// 142000 -> "2 min 22 s", 3400 -> "3.4 s", 120 -> "120 ms".
function duration(ms) {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

function when(ms) { return ms > 0 ? new Date(ms).toLocaleString() : ''; }

// "kept 12/15 (80 %)" or "" when the replaced rows held no identifier.
function kept(c) {
  if (!(c.identifiers_in > 0)) return '';
  return `kept ${c.identifiers_kept}/${c.identifiers_in} identifiers` +
         ` (${Math.round(100 * c.identifiers_kept / c.identifiers_in)} %)`;
}

// One line of the compaction log: "335k → 10k tokens · 2 min 22 s · trigger · mode · model".
function logLine(c) {
  const parts = [`${tokens(c.tokens_before)} → ${tokens(c.tokens_after)} tokens`,
                 duration(c.duration_ms), c.trigger, c.mode];
  if (c.summarizer_model) parts.push(c.summarizer_model);
  const k = kept(c);
  if (k) parts.push(k);
  return parts.join(' · ');
}

// ---- sign in -------------------------------------------------------------------------

// Everything a token read, removed from the page (at sign-out and before a session loads).
function clearData() {
  for (const id of ['session-rows', 'transcript', 'compaction-log', 'failed-attempts', 'search-hits',
                    'live-chart', 'facts-list', 'health-facts', 'metrics-rows'])
    $(id).replaceChildren();
  for (const id of ['session-title', 'session-meta', 'sessions-page']) $(id).textContent = '';
  $('transcript-more').hidden = true;
  sessionList.all = [];
  health.samples = [];
}

function signOut(why) {
  sessionStorage.removeItem(tokenKey);
  clearData();
  history.replaceState(null, '', '#/sessions'); // the next token starts at the list
  $('nav').hidden = true;
  showView('sign-in-view');
  if (why) { $('error').textContent = why; $('error').hidden = false; }
}

async function signIn(ev) {
  ev.preventDefault();
  sessionStorage.setItem(tokenKey, $('token').value.trim());
  $('token').value = '';
  try {
    await api('/v1/sessions?limit=1');
  } catch (err) {
    signOut(`Sign-in failed: ${err.message}`);
    return;
  }
  showError(null);
  $('nav').hidden = false;
  if (!location.hash || location.hash === '#/') location.hash = '#/sessions';
  else route();
}

// ---- sessions ------------------------------------------------------------------------

const sessionList = { all: [], page: 0 };

async function loadSessions() {
  showView('sessions-view');
  const openOnly = $('open-only').checked ? '&open_only=true' : '';
  const body = await api(`/v1/sessions?limit=5000${openOnly}`);
  sessionList.all = body.sessions;
  sessionList.page = 0;
  renderSessions();
}

function shownSessions() {
  const needle = $('session-filter').value.trim().toLowerCase();
  const list = sessionList.all.filter((s) => !needle ||
    [s.session_key, s.user_id, s.id].some((f) => f.toLowerCase().includes(needle)));
  const [field, order] = $('session-sort').value.split('-');
  const value = { started: (s) => s.started_at_ms, key: (s) => s.session_key,
                  user: (s) => s.user_id }[field];
  list.sort((a, b) => (value(a) < value(b) ? -1 : value(a) > value(b) ? 1 : 0) *
                      (order === 'asc' ? 1 : -1));
  return list;
}

function renderSessions() {
  const list = shownSessions();
  const pages = Math.max(1, Math.ceil(list.length / sessionsPerPage));
  sessionList.page = Math.min(sessionList.page, pages - 1);
  const first = sessionList.page * sessionsPerPage;
  const rows = list.slice(first, first + sessionsPerPage).map((s) => {
    const link = el('a', null, s.session_key || s.id);
    link.href = `#/session/${encodeURIComponent(s.id)}`;
    return el('tr', null, el('td', null, link), el('td', null, s.user_id),
              el('td', 'mono', s.id), el('td', null, s.model), el('td', null, when(s.started_at_ms)),
              el('td', null, s.ended_at_ms ? `${when(s.ended_at_ms)} (${s.end_reason})` : 'open'),
              el('td', 'num', s.triggers ? s.triggers.compaction_count : ''));
  });
  $('session-rows').replaceChildren(...rows);
  $('sessions-page').textContent =
    `${list.length} sessions · page ${sessionList.page + 1} of ${pages}`;
  $('sessions-prev').disabled = sessionList.page === 0;
  $('sessions-next').disabled = sessionList.page >= pages - 1;
}

// ---- one session ---------------------------------------------------------------------

// The session shown: its compactions (from the compactions route) and the paging state.
const current = { id: "", compactions: [], nextFrom: 1, level: null };

const covers = (c, id) => id >= c.replaced_first_id && id <= c.replaced_last_id;

// The compactions of `candidates` not inside the range of another one of them: the
// markers of one level of the transcript (a later compaction may replace an earlier
// summary, whose marker then opens inside the later one's).
function outermost(candidates) {
  return candidates.filter((c) => !candidates.some((o) => o !== c && covers(o, c.id)));
}

function rowNode(m) {
  const head = el('div', 'row-head',
                  el('span', 'role', m.role), el('span', 'mono', `#${m.id}`),
                  el('span', `state state-${m.state}`, m.state.replace('_', ' ')),
                  m.is_summary ? el('span', 'badge', 'replacement') : null,
                  el('span', 'muted', when(m.timestamp_ms)),
                  el('span', 'muted', `${m.token_estimate} tokens`));
  const item = el('li', `row role-${m.role} state-${m.state}`, head);
  item.id = `row-${m.id}`;
  item.dataset.id = m.id;
  if (m.tool_call_id)
    item.append(el('div', 'tool-link', `result of ${m.tool_name || 'tool'} call ${m.tool_call_id}`));
  if (m.content) item.append(el('pre', 'content', m.content));
  for (const call of m.tool_calls || [])
    item.append(el('div', 'tool-call', `calls ${call.name} (${call.id}) `,
                   el('code', null, call.arguments)));
  return item;
}

// A compaction's marker: its log line, its summary (added when its row is read: it
// comes after the rows it replaced) and a button that opens the rows it replaced, each
// level rendered as the transcript is.
function markerNode(c) {
  const count = c.rows_replaced || (c.replaced_last_id - c.replaced_first_id + 1);
  const toggle = el('button', 'expand', `Show the rows it replaced (#${c.replaced_first_id}–#${c.replaced_last_id})`);
  toggle.type = 'button';
  toggle.setAttribute('aria-expanded', 'false');
  const originals = el('ol', 'transcript originals');
  originals.hidden = true;
  const item = el('li', `marker state-${c.state}`,
    el('div', 'row-head', el('span', 'role', 'compaction'), el('span', 'mono', `#${c.id}`),
       el('span', `state state-${c.state}`, c.state.replace('_', ' ')),
       el('span', 'muted', when(c.created_at_ms))),
    el('div', 'marker-line', c.logged ? logLine(c) : `${count} rows folded (no log row)`),
    toggle, originals);
  item.id = `marker-${c.id}`;
  item.dataset.id = c.id;
  item.expand = async () => {
    if (!originals.dataset.loaded) {
      const rows = [];
      let from = c.replaced_first_id;
      while (from !== null) {
        const page = await api(`${keyPath(current.id)}/rows?from=${from}&to=${c.replaced_last_id}&limit=1000`);
        rows.push(...page.rows);
        from = page.next_from;
      }
      const inner = current.compactions.filter((o) => o !== c && covers(c, o.id));
      const level = makeLevel(originals, outermost(inner));
      appendRows(level, rows);
      flushMarkers(level);
      originals.dataset.loaded = 'yes';
    }
    originals.hidden = false;
    toggle.setAttribute('aria-expanded', 'true');
    toggle.textContent = 'Hide the replaced rows';
  };
  toggle.addEventListener('click', () => {
    if (toggle.getAttribute('aria-expanded') === 'true') {
      originals.hidden = true;
      toggle.setAttribute('aria-expanded', 'false');
      toggle.textContent = `Show the rows it replaced (#${c.replaced_first_id}–#${c.replaced_last_id})`;
    } else {
      item.expand().catch(showError);
    }
  });
  return item;
}

// One level of a transcript: the list it fills and the markers still to place there.
function makeLevel(list, markers) {
  return { list, waiting: [...markers].sort((a, b) => a.replaced_first_id - b.replaced_first_id),
           markers };
}

// Rows in id order: a row inside a marker's range is left to that marker, which takes
// the place of its first replaced row; the summary row of a marker is shown in it.
function appendRows(level, rows) {
  for (const m of rows) {
    const mine = level.markers.find((c) => c.id === m.id);
    if (mine) {
      const node = level.list.querySelector(`:scope > #marker-${m.id} > .marker-line`);
      if (node && m.content) node.after(el('pre', 'content summary', m.content));
      continue;
    }
    while (level.waiting.length && level.waiting[0].replaced_first_id <= m.id)
      level.list.append(markerNode(level.waiting.shift()));
    if (level.markers.some((c) => covers(c, m.id))) continue;
    level.list.append(rowNode(m));
  }
}

function flushMarkers(level) {
  while (level.waiting.length) level.list.append(markerNode(level.waiting.shift()));
}

async function loadMoreRows() {
  const page = await api(`${keyPath(current.id)}/rows?from=${current.nextFrom}&limit=${rowsPerPage}`);
  appendRows(current.level, page.rows);
  current.nextFrom = page.next_from;
  if (current.nextFrom === null) flushMarkers(current.level);
  $('transcript-more').hidden = current.nextFrom === null;
}

function renderLog(body) {
  const committed = body.compactions.map((c) => {
    const link = el('a', null, `#${c.id}`);
    link.href = `#/session/${encodeURIComponent(current.id)}/row/${c.id}`;
    return el('li', `log-entry state-${c.state}`,
              el('div', 'row-head', link, el('span', 'muted', when(c.created_at_ms)),
                 el('span', 'muted', c.logged ? `${c.origin} · ${c.outcome}` : 'not logged')),
              el('div', 'marker-line', c.logged ? logLine(c) : `rows #${c.replaced_first_id}–#${c.replaced_last_id}`),
              c.detail ? el('div', 'detail', c.detail) : null);
  });
  $('compaction-log').replaceChildren(...committed);
  if (!committed.length) $('compaction-log').append(el('li', 'muted', 'no compaction yet'));
  const failed = body.attempts.filter((a) => a.outcome !== 'committed').map((a) =>
    el('li', 'log-entry failed',
       el('div', 'row-head', el('span', 'outcome', a.outcome), el('span', 'muted', when(a.at_ms))),
       el('div', 'marker-line', logLine(a)), a.detail ? el('div', 'detail', a.detail) : null));
  $('failed-attempts').replaceChildren(...failed);
  if (!failed.length) $('failed-attempts').append(el('li', 'muted', 'none'));
}

// Opens the markers that hide row `id` (outermost first) and marks the row.
async function reveal(id) {
  for (;;) {
    const row = document.getElementById(`row-${id}`) || document.getElementById(`marker-${id}`);
    if (row && !row.closest('[hidden]')) {
      row.classList.add('target');
      row.scrollIntoView({ block: 'center' });
      row.tabIndex = -1;
      row.focus();
      return;
    }
    const closed = [...document.querySelectorAll('#transcript .marker')].find((node) => {
      const c = current.compactions.find((o) => o.id === Number(node.dataset.id));
      return c && covers(c, id) && !node.closest('[hidden]') &&
             node.querySelector('.expand').getAttribute('aria-expanded') !== 'true';
    });
    if (!closed) return;
    await closed.expand();
  }
}

async function loadSession(id, targetRow) {
  showView('session-view');
  clearData();
  const [state, log] = await Promise.all([api(`${keyPath(id)}?live=false`),
                                          api(`${keyPath(id)}/compactions`)]);
  const s = state.session;
  current.id = s.id;
  current.compactions = log.compactions;
  current.nextFrom = 1;
  $('session-title').textContent = s.session_key || s.id;
  $('session-meta').textContent =
    `user ${s.user_id} · session ${s.id} · ${s.model} · started ${when(s.started_at_ms)}` +
    (s.ended_at_ms ? ` · ended ${when(s.ended_at_ms)} (${s.end_reason})` : ' · open') +
    (state.live_tokens ? ` · ${tokens(state.live_tokens)} live tokens` : '') +
    ` · ${log.compactions.length} compactions`;
  $('transcript').replaceChildren();
  current.level = makeLevel($('transcript'), outermost(log.compactions));
  renderLiveChart(state, log.compactions, log.attempts);
  renderLog(log);
  await loadMoreRows();
  if (targetRow) {
    while (current.nextFrom !== null && current.nextFrom <= targetRow) await loadMoreRows();
    await reveal(targetRow);
  }
}

// ---- search --------------------------------------------------------------------------

const cjkRun = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+)/u;

// What to mark for one query word: the word, and when it mixes Chinese, Japanese or Korean
// with other characters, each run of one kind too: the indexes split a word where its
// script changes, so `E1234错误` finds a row reading `E1234 错误`, where only the runs
// stand to be marked (runs of one character are left unmarked: they would mark noise).
function markedPieces(word) {
  const runs = word.split(cjkRun).filter(Boolean);
  return runs.length > 1 ? [word, ...runs.filter((r) => [...r].length > 1)] : [word];
}

// `text` with every occurrence of the query's words marked (case-insensitive; any script;
// the longest piece first where pieces overlap).
function highlighted(text, query) {
  const pieces = [...new Set(query.split(/\s+/).filter(Boolean).flatMap(markedPieces))]
    .sort((a, b) => b.length - a.length)
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const node = el('span', 'snippet');
  if (!pieces.length) { node.append(text); return node; }
  const pattern = new RegExp(`(${pieces.join('|')})`, 'giu');
  text.split(pattern).forEach((part, i) => node.append(i % 2 ? el('mark', null, part) : part));
  return node;
}

// Search is per user (docs/api.md): a user token searches its own user, an admin the
// user named (empty: the daemon's gateway.default_user).
async function runSearch(query, user) {
  showView('search-view');
  $('search-query').value = query;
  $('search-user').value = user;
  if (!query) { $('search-hits').replaceChildren(); return; }
  const inactive = $('search-inactive').checked ? '&include_inactive=true' : '';
  const who = user ? `&user=${encodeURIComponent(user)}` : '';
  const body = await api(`/v1/search?q=${encodeURIComponent(query)}&limit=10${who}${inactive}`);
  const hits = body.hits.map((h) => {
    const link = el('a', null, `${h.hit.role} #${h.hit.id} in ${h.session_id}`);
    link.href = `#/session/${encodeURIComponent(h.session_id)}/row/${h.hit.id}`;
    return el('li', 'hit', el('div', 'row-head', link, el('span', 'muted', `${h.kind} · ${h.route}`),
                              el('span', `state state-${h.hit.state}`, h.hit.state)),
              highlighted(h.snippet || h.hit.content, query));
  });
  $('search-hits').replaceChildren(...hits);
  if (!hits.length) $('search-hits').append(el('li', 'muted', 'no hit'));
}

// ---- routing -------------------------------------------------------------------------

async function route() {
  showError(null);
  if (token() === null) { showView('sign-in-view'); $('nav').hidden = true; return; }
  $('nav').hidden = false;
  const hash = location.hash.replace(/^#/, '') || '/sessions';
  const [path, queryText] = hash.split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === 'session' && parts[1])
      await loadSession(parts[1], parts[2] === 'row' ? Number(parts[3]) : 0);
    else if (parts[0] === 'search') {
      const params = new URLSearchParams(queryText || '');
      await runSearch(params.get('q') || '', params.get('user') || '');
    } else if (parts[0] === 'facts') {
      const params = new URLSearchParams(queryText || '');
      await runFacts(params.get('user') || '', params.get('q') || '');
    } else if (parts[0] === 'health')
      await runHealth();
    else
      await loadSessions();
  } catch (err) {
    showError(err);
  }
}

function start() {
  $('sign-in').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', () => signOut());
  $('session-filter').addEventListener('input', () => { sessionList.page = 0; renderSessions(); });
  $('session-sort').addEventListener('change', renderSessions);
  $('open-only').addEventListener('change', () => loadSessions().catch(showError));
  $('sessions-prev').addEventListener('click', () => { sessionList.page--; renderSessions(); });
  $('sessions-next').addEventListener('click', () => { sessionList.page++; renderSessions(); });
  $('transcript-more').addEventListener('click', () => loadMoreRows().catch(showError));
  $('search-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const params = new URLSearchParams({ q: $('search-query').value.trim() });
    const user = $('search-user').value.trim();
    if (user) params.set('user', user);
    const next = `#/search?${params}`;
    if (location.hash === next) route(); else location.hash = next;
  });
  startViews();
  window.addEventListener('hashchange', route);
  fetch('/v1/health').then((r) => r.json())
    .then((h) => { $('version').textContent = h.version || ''; }).catch(() => {});
  route();
}

document.addEventListener('DOMContentLoaded', start);
