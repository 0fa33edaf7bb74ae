// The web console (docs/console.md) in a real browser: Debian's Chromium (/usr/bin/chromium,
// or MNEME_CHROMIUM) driven by puppeteer-core, pinned by this folder's lock file; nothing
// is downloaded. A daemon with an admin token and the fake LLM gets a session that
// compacted (rows appended, then a manual compaction); the test signs in with the token,
// opens the session, opens the compaction's marker and finds the rows it replaced, reads
// the compaction log entry and the live-context chart, searches a CJK term that lands on
// its row and a word mixing scripts, lists alice's facts and the daemon's health and
// metrics; then a user token of another user (bob) lists none of it, is refused the session
// as unknown and alice's facts as forbidden, and sees no metric. A page that was served
// without a token shows no data until then. When Chromium is absent the test is skipped
// and says why (it is installed by .ci/test). A failing step leaves a screenshot in the
// rig's directory's parent (printed).
import test from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startRig } from './harness.mjs';

const chromium = process.env.MNEME_CHROMIUM || '/usr/bin/chromium';
const adminToken = 'console-test-admin-token';
const bobToken = 'mneme_0000000b_console-test-bob';
const key = 'console/demo 1';
const stepTimeoutMs = 20_000;

// The session's rows: a head, a middle with identifiers (a path, a command, a CJK name)
// that the compaction replaces, and a tail it keeps.
const middle = [
  'Deploy plan: the config lives in /etc/mneme/prod.yaml and the build runs `make release`.',
  'The 数据库迁移 step moves the orders table; it took 42 ms on staging.',
  'Error E1234 came back from the payments gateway at https://pay.example.com/v2/charge.',
  'Rollback means running `kubectl rollout undo deploy/api` within 5 min.',
  'We agreed the cache TTL is 300 s for the catalogue service.',
  'The on-call rota is in docs/oncall.md and changes each Monday.',
];

async function call(rig, method, route, body) {
  const res = await fetch(`${rig.daemonUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await res.json();
  assert.ok(res.ok, `${method} ${route}: ${res.status} ${JSON.stringify(answer)}\n${rig.daemonLog()}`);
  return answer;
}

async function sessionThatCompacted(rig) {
  const rows = [];
  const append = async (role, content) => {
    const r = await call(rig, 'POST', `/v1/sessions/${encodeURIComponent(key)}/messages`,
                         { user: 'alice', role, content });
    rows.push({ id: r.id, content });
    return r;
  };
  for (let i = 0; i < 2; ++i) {
    await append('user', `Opening question ${i}: what is the plan?`);
    await append('assistant', `Opening answer ${i}: we write it down first.`);
  }
  for (const text of middle) {
    await append('user', text);
    await append('assistant', `Noted: ${text}`);
  }
  for (let i = 0; i < 3; ++i) {
    await append('user', `Closing question ${i}?`);
    await append('assistant', `Closing answer ${i}.`);
  }
  const report = await call(rig, 'POST', `/v1/sessions/${encodeURIComponent(key)}/compact?user=alice`, {});
  assert.equal(report.committed, true, `the compaction committed: ${JSON.stringify(report)}`);
  await call(rig, 'PUT', '/v1/users/alice/facts/deploy.window', { value: 'Tuesdays 10:00–12:00 (部署窗口)' });
  const log = await call(rig, 'GET', `/v1/sessions/${encodeURIComponent(key)}/compactions?user=alice`);
  assert.equal(log.compactions.length, 1);
  return { rows, compaction: log.compactions[0], sessionId: log.session_id };
}

// Runs `step`; on failure writes a screenshot and says where.
async function step(page, shots, name, body) {
  try {
    return await body();
  } catch (err) {
    const file = path.join(shots, `${name}.png`);
    await page.screenshot({ path: file, fullPage: true }).catch(() => {});
    err.message += ` (screenshot: ${file})`;
    throw err;
  }
}

const texts = (page, selector) =>
  page.$$eval(selector, (nodes) => nodes.map((n) => n.textContent));

test('the console signs in, opens a compaction marker, shows the log and finds a CJK term',
     { skip: existsSync(chromium) ? false : `no Chromium at ${chromium} (apt-get install chromium)` },
     async () => {
  const { default: puppeteer } = await import('puppeteer-core');
  const shots = mkdtempSync(path.join(tmpdir(), 'mneme-console-shots-'));
  const tokensFile = path.join(shots, 'tokens');
  writeFileSync(tokensFile,
                `0000000b sha256:${createHash('sha256').update(bobToken).digest('hex')} user:bob\n`);
  const rig = await startRig({
    config: { gateway: { auth_token: adminToken, tokens_file: tokensFile },
              compression: { protect_last_n: 6 } },
  });
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const { rows, compaction, sessionId } = await sessionThatCompacted(rig);
    const replaced = rows.filter((r) => r.id >= compaction.replaced_first_id &&
                                        r.id <= compaction.replaced_last_id);
    assert.ok(replaced.length > 0, 'the compaction replaced appended rows');

    const page = await browser.newPage();
    page.setDefaultTimeout(stepTimeoutMs);
    await page.setViewport({ width: 1280, height: 900 }); // the transcript beside the log
    const consoleErrors = [];
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });

    await step(page, shots, '1-page', async () => {
      const res = await page.goto(`${rig.daemonUrl}/console/`);
      assert.equal(res.status(), 200, 'the page needs no token');
      const csp = res.headers()['content-security-policy'];
      assert.match(csp, /script-src 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline/);
      await page.waitForSelector('#sign-in-view:not([hidden])');
      assert.equal((await texts(page, '#session-rows tr')).length, 0, 'no data before sign-in');
    });

    await step(page, shots, '2-wrong-token', async () => {
      await page.type('#token', 'not-the-token');
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#error:not([hidden])');
      assert.match(await page.$eval('#error', (n) => n.textContent), /unauthorized/);
    });

    await step(page, shots, '3-sign-in', async () => {
      await page.type('#token', adminToken);
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#sessions-view:not([hidden]) #session-rows tr');
      const listed = await texts(page, '#session-rows tr td:first-child');
      assert.ok(listed.includes(key), `the session is listed: ${listed}`);
      assert.equal(await page.evaluate(() => sessionStorage.getItem('mneme.token')), adminToken);
    });

    await step(page, shots, '4-open-session', async () => {
      await page.$$eval('#session-rows a', (links, k) => links.find((a) => a.textContent === k).click(), key);
      await page.waitForSelector(`#marker-${compaction.id}`);
      const shown = await page.$$eval('#transcript > li.row', (n) => n.map((x) => Number(x.dataset.id)));
      for (const r of replaced)
        assert.ok(!shown.includes(r.id), `replaced row ${r.id} is folded under its marker`);
      assert.ok(shown.includes(rows[0].id), 'the head stays in the transcript');
      assert.ok(shown.includes(rows[rows.length - 1].id), 'the tail stays in the transcript');
    });

    await step(page, shots, '4b-live-chart', async () => {
      const chart = await page.waitForSelector('#live-chart svg.chart');
      const [points, drops, d] = await chart.evaluate((n) =>
        [Number(n.dataset.points), Number(n.dataset.drops), n.querySelector('.live-line').getAttribute('d')]);
      assert.equal(drops, 1, 'one logged compaction drops the line');
      assert.equal(points, 4, 'start, before and after the compaction, the live context now');
      const ys = d.split(/[ML]/).filter(Boolean).map((xy) => Number(xy.split(',')[1]));
      assert.ok(ys[1] < ys[2], `the compaction lowers the live context (SVG y grows down): ${d}`);
      assert.ok(ys[3] >= ys[1], `the context now is below its peak before the compaction: ${d}`);
      assert.match(await chart.evaluate((n) => n.getAttribute('aria-label')), /1 compaction with a log row/);
    });

    await step(page, shots, '5-expand-marker', async () => {
      await page.click(`#marker-${compaction.id} button.expand`);
      await page.waitForSelector(`#marker-${compaction.id} .originals:not([hidden]) li.row`);
      const inside = await page.$$eval(`#marker-${compaction.id} .originals > li.row`,
        (n) => n.map((x) => ({ id: Number(x.dataset.id), text: x.querySelector('.content')?.textContent,
                               state: x.querySelector('.state').textContent })));
      assert.deepEqual(inside.map((r) => r.id), replaced.map((r) => r.id));
      assert.deepEqual(inside.map((r) => r.text), replaced.map((r) => r.content));
      assert.ok(inside.every((r) => r.state === 'archived'), 'every original is kept, archived');
      if (process.env.MNEME_CONSOLE_SCREENSHOT)
        await page.screenshot({ path: process.env.MNEME_CONSOLE_SCREENSHOT, fullPage: true });
    });

    await step(page, shots, '6-compaction-log', async () => {
      const [entry] = await texts(page, '#compaction-log .log-entry .marker-line');
      assert.ok(entry, 'one log entry');
      assert.ok(entry.includes(' → ') && entry.includes(' tokens'), entry);
      assert.ok(entry.includes(compaction.trigger), `the trigger: ${entry}`);
      assert.ok(entry.includes(compaction.mode), `the mode: ${entry}`);
      assert.ok(entry.includes(`kept ${compaction.identifiers_kept}/${compaction.identifiers_in}`),
                `the identifiers kept: ${entry}`);
    });

    await step(page, shots, '7-search-cjk', async () => {
      await page.click('nav a[href="#/search"]');
      await page.waitForSelector('#search-view:not([hidden])');
      await page.type('#search-query', '数据库迁移');
      await page.type('#search-user', 'alice'); // an admin names the user searched
      await page.click('#search-form button[type=submit]');
      await page.waitForSelector('#search-hits li.hit');
      const marked = await texts(page, '#search-hits li.hit mark');
      assert.ok(marked.includes('数据库迁移'), `the term is highlighted: ${marked}`);
      // One slot per conversation: the hit is one of the rows holding the term (the
      // summary too, when it kept it).
      const holding = rows.filter((r) => r.content.includes('数据库迁移')).map((r) => r.id);
      const hrefs = await page.$$eval('#search-hits li.hit a', (n) => n.map((a) => a.getAttribute('href')));
      const prefix = `#/session/${encodeURIComponent(sessionId)}/row/`;
      const href = hrefs.find((h) => h.startsWith(prefix));
      assert.ok(href, `a hit opens a row of the session: ${hrefs}`);
      const hitId = Number(href.slice(prefix.length));
      assert.ok(holding.includes(hitId) || hitId === compaction.id, `the hit ${hitId} holds the term`);
      await page.click(`#search-hits a[href="${href}"]`);
      const landed = await page.waitForSelector(`#row-${hitId}.target, #marker-${hitId}.target`);
      assert.equal(await landed.evaluate((n) => n.closest('[hidden]') === null), true,
                   'the row is shown (opened inside its marker when archived)');
      assert.ok((await landed.evaluate((n) => n.textContent)).includes('数据库迁移'));
    });

    await step(page, shots, '7b-search-mixed-script', async () => {
      await page.goto(`${rig.daemonUrl}/console/#/search?q=${encodeURIComponent('迁移step')}&user=alice`);
      await page.waitForSelector('#search-hits li.hit mark');
      const marked = await texts(page, '#search-hits li.hit mark');
      assert.ok(marked.includes('迁移') && marked.includes('step'),
                `each script's run of the word is marked: ${marked}`);
    });

    await step(page, shots, '7c-facts', async () => {
      await page.click('nav a[href="#/facts"]');
      await page.waitForSelector('#facts-view:not([hidden])');
      await page.type('#facts-user', 'alice');
      await page.click('#facts-form button[type=submit]');
      await page.waitForSelector('#facts-list li.fact');
      const [fact] = await texts(page, '#facts-list li.fact');
      assert.ok(fact.includes('deploy.window') && fact.includes('部署窗口'), fact);
    });

    await step(page, shots, '7d-health', async () => {
      await page.click('nav a[href="#/health"]');
      await page.waitForSelector('#health-view:not([hidden]) #metrics-rows tr');
      const shown = await texts(page, '#health-facts .health-item');
      assert.ok(shown.some((t) => t.startsWith('status') && t.endsWith('ok')), `${shown}`);
      await page.type('#metrics-filter', 'mneme_compaction_attempts_total');
      const rows = await page.$$eval('#metrics-rows tr', (n) => n.map((r) => [...r.cells].map((c) => c.textContent)));
      assert.ok(rows.length > 0 && rows.every((r) => r[0] === 'mneme_compaction_attempts_total'),
                `the filter keeps that metric: ${JSON.stringify(rows)}`);
      assert.ok(rows.some((r) => Number(r[2]) >= 1), `the compaction counted: ${JSON.stringify(rows)}`);
    });

    await step(page, shots, '8-another-user', async () => {
      await page.click('#sign-out');
      await page.waitForSelector('#sign-in-view:not([hidden])');
      assert.equal(await page.evaluate(() => sessionStorage.getItem('mneme.token')), null);
      await page.type('#token', bobToken);
      await page.click('#sign-in button[type=submit]');
      await page.waitForSelector('#sessions-view:not([hidden])');
      await page.waitForFunction(() => /sessions/.test(document.querySelector('#sessions-page').textContent));
      assert.deepEqual(await texts(page, '#session-rows tr'), [], "bob lists none of alice's sessions");
      await page.goto(`${rig.daemonUrl}/console/#/session/${encodeURIComponent(sessionId)}`);
      await page.waitForSelector('#error:not([hidden])');
      assert.match(await page.$eval('#error', (n) => n.textContent), /^not_found: /);
      assert.equal(await page.$$eval('#transcript li', (n) => n.length), 0, 'no row of it shown');
      await page.goto(`${rig.daemonUrl}/console/#/facts?user=alice`);
      await page.waitForFunction(() => /^forbidden: /.test(document.querySelector('#error').textContent));
      assert.equal(await page.$$eval('#facts-list li.fact', (n) => n.length), 0, "none of alice's facts");
      await page.goto(`${rig.daemonUrl}/console/#/health`);
      await page.waitForFunction(() => /admin token/.test(document.querySelector('#metrics-note').textContent));
      assert.equal(await page.$$eval('#metrics-rows tr', (n) => n.length), 0, 'no metric for a user token');
    });

    assert.deepEqual(consoleErrors.filter((e) => !/40[134]/.test(e)), [],
                     'no script error and no CSP violation');
  } finally {
    await browser.close();
    await rig.stop();
  }
});
