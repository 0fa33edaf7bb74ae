// The OpenAI door of `mneme serve` (POST /v1/chat/completions, docs/api.md "OpenAI door")
// driven by the official `openai` client, as an existing agent would use it: only the
// base URL and the X-Mneme-Session header change. Non-streamed and streamed answers, a
// tool loop in the stateful style, a 200-turn tool loop in the full-history style with
// compactions in between (the client never sees an error; the stored rows are exactly the
// unique messages sent and answered, read back through the daemon's HTTP API), and a
// branch (an edited earlier message) answered with X-Mneme-Rebased.
import test from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { readChunks, startRig, weatherTool } from './harness.mjs';

// A client of the door for one session key; maxRetries 0: any error fails the test.
function doorClient(rig, key) {
  return new OpenAI({
    baseURL: `${rig.daemonUrl}/v1`, apiKey: 'unused', maxRetries: 0,
    defaultHeaders: { 'X-Mneme-Session': key },
  });
}

// The rows of the key's session as stored (every state), through the daemon's export.
async function storedRows(rig, key) {
  const res = await fetch(`${rig.daemonUrl}/v1/sessions/${encodeURIComponent(key)}/export`);
  assert.equal(res.status, 200);
  return (await res.text()).split('\n').filter((l) => l).map((l) => JSON.parse(l));
}

// What a client would send back of the stored rows: not rolled back, not a summary,
// not the daemon's own system prompt (the first row).
function clientVisible(rows) {
  return rows.filter((r, i) => r.state !== 'rolled_back' && !r.is_summary
                               && !(i === 0 && r.role === 'system'));
}

// The message of an answer as the client keeps it in its transcript.
function kept(message) {
  const out = { role: 'assistant', content: message.content ?? '' };
  if (message.tool_calls?.length) out.tool_calls = message.tool_calls;
  return out;
}

function sameAsStored(sent, row) {
  assert.equal(row.role, sent.role);
  assert.equal(row.content.trim(), (sent.content ?? '').trim());
  if (sent.role === 'tool') assert.equal(row.tool_call_id, sent.tool_call_id);
  const calls = (sent.tool_calls ?? []).map((c) => [c.id, c.function.name, c.function.arguments]);
  assert.deepEqual((row.tool_calls ?? []).map((c) => [c.id, c.name, c.arguments]), calls);
}

test('the official client through the OpenAI door', async (t) => {
  // Every answer to a request offering tools calls one, then a text (one round).
  // threshold_tokens keeps the threshold low so the long loop compacts.
  const rig = await startRig({
    scenario: 'seed: 27\ntool_call_fraction: 1\ntool_rounds: 1\n',
    config: { compression: { threshold_tokens: 6000, protect_last_n: 6 } },
  });
  t.after(() => rig.stop());

  await t.test('non-streamed answer, with the session in the headers', async () => {
    const client = doorClient(rig, 'plain');
    const { data, response } = await client.chat.completions.create({
      model: 'mneme', messages: [{ role: 'user', content: 'Say something about rivers.' }],
    }).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.choices[0].message.role, 'assistant');
    assert.ok(data.choices[0].message.content.length > 0);
    assert.equal(data.choices[0].finish_reason, 'stop');
    assert.ok(data.usage.prompt_tokens > 0);
    assert.ok(response.headers.get('x-mneme-session-id'));
    assert.equal(response.headers.get('x-mneme-compactions'), '0');
    const rows = clientVisible(await storedRows(rig, 'plain'));
    assert.deepEqual(rows.map((r) => r.role), ['user', 'assistant']);
  });

  await t.test('streamed answer: pieces add up to the stored answer, usage chunk last', async () => {
    const client = doorClient(rig, 'streamed');
    const stream = await client.chat.completions.create({
      model: 'mneme', stream: true, stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Tell a short story about a lighthouse.' }],
    });
    const { text, usage, finish, objects } = await readChunks(stream);
    assert.deepEqual([...objects], ['chat.completion.chunk']);
    assert.equal(finish, 'stop');
    assert.ok(usage && usage.prompt_tokens > 0);
    const rows = clientVisible(await storedRows(rig, 'streamed'));
    assert.equal(rows[1].content, text.trim());
  });

  await t.test('a tool loop in the stateful style: only the results are sent back', async () => {
    const client = doorClient(rig, 'stateful-tools');
    const first = await client.chat.completions.create({
      model: 'mneme', tools: [weatherTool],
      messages: [{ role: 'user', content: 'What is the weather in Oslo?' }],
    });
    assert.equal(first.choices[0].finish_reason, 'tool_calls');
    const calls = first.choices[0].message.tool_calls;
    assert.ok(calls.length > 0);
    const results = calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: 'sunny, 21 C' }));
    const second = await client.chat.completions.create({
      model: 'mneme', tools: [weatherTool], messages: results,
    });
    assert.equal(second.choices[0].finish_reason, 'stop');
    const rows = clientVisible(await storedRows(rig, 'stateful-tools'));
    assert.deepEqual(rows.map((r) => r.role),
                     ['user', 'assistant', ...results.map(() => 'tool'), 'assistant']);
  });

  await t.test('a 200-turn tool loop in the full-history style, compacted on the way', async () => {
    const client = doorClient(rig, 'full-history');
    const history = [{ role: 'system', content: 'You are a travel agent.' }];
    let compactions = 0;
    for (let turn = 0; turn < 200; ++turn) {
      history.push({ role: 'user', content: `Turn ${turn}: what is the weather in city ${turn}?` });
      for (;;) {
        const { data, response } = await client.chat.completions.create({
          model: 'mneme', tools: [weatherTool], messages: history,
        }).withResponse();
        compactions += Number(response.headers.get('x-mneme-compactions') ?? 0);
        assert.equal(response.headers.get('x-mneme-rebased'), null);
        const message = data.choices[0].message;
        history.push(kept(message));
        if (data.choices[0].finish_reason !== 'tool_calls') break;
        for (const c of message.tool_calls)
          history.push({ role: 'tool', tool_call_id: c.id, content: `weather ${turn}: mild` });
      }
    }
    assert.ok(compactions > 0, 'the session compacted during the loop');
    const stored = clientVisible(await storedRows(rig, 'full-history'));
    assert.equal(stored.length, history.length);
    history.forEach((m, i) => sameAsStored(m, stored[i]));
    assert.ok((await storedRows(rig, 'full-history')).some((r) => r.state === 'archived'));
  });

  await t.test('an edited earlier message is a branch: rolled back, X-Mneme-Rebased', async () => {
    const client = doorClient(rig, 'branch');
    const history = [{ role: 'user', content: 'Plan a trip to Oslo.' }];
    for (let turn = 0; turn < 3; ++turn) {
      const answer = await client.chat.completions.create({ model: 'mneme', messages: history });
      history.push(kept(answer.choices[0].message));
      history.push({ role: 'user', content: `More detail, part ${turn}.` });
    }
    // The client edits its second message and resends the shortened transcript.
    const edited = [history[0], history[1], { role: 'user', content: 'Actually: Bergen.' }];
    const { response } = await client.chat.completions.create({
      model: 'mneme', messages: edited,
    }).withResponse();
    assert.equal(response.headers.get('x-mneme-rebased'), '4');
    const rows = await storedRows(rig, 'branch');
    const visible = clientVisible(rows);
    assert.deepEqual(visible.slice(0, 3).map((r) => r.content.trim()),
                     edited.map((m) => m.content.trim()));
    assert.equal(rows.filter((r) => r.state === 'rolled_back').length, 4);
  });

  await t.test('errors are OpenAI errors: a 400 is not retried and names the param', async () => {
    const client = new OpenAI({ baseURL: `${rig.daemonUrl}/v1`, apiKey: 'unused', maxRetries: 2,
                                defaultHeaders: { 'X-Mneme-Session': 'errors' } });
    await assert.rejects(
      client.chat.completions.create({ model: 'mneme', messages: [] }),
      (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'messages'
             && e.type === 'invalid_request_error');
  });

  await t.test('GET /v1/models lists the configured model', async () => {
    const client = doorClient(rig, 'models');
    const models = await client.models.list();
    assert.equal(models.data.length, 1);
    assert.equal(models.data[0].object, 'model');
  });
});

test('an upstream failure is retried by the official client and stored once', async (t) => {
  // The first chat call fails (503 from the fake); the SDK retries the same request.
  const rig = await startRig({
    scenario: 'seed: 3\nfaults:\n  - kind: unavailable\n    purpose: chat\n    max_count: 1\n',
  });
  t.after(() => rig.stop());
  const client = new OpenAI({
    baseURL: `${rig.daemonUrl}/v1`, apiKey: 'unused', maxRetries: 2,
    defaultHeaders: { 'X-Mneme-Session': 'retried' },
  });
  const history = [{ role: 'system', content: 'You answer briefly.' },
                   { role: 'user', content: 'Is the river frozen?' }];
  const answer = await client.chat.completions.create({ model: 'mneme', messages: history });
  assert.equal(answer.choices[0].finish_reason, 'stop');
  history.push(kept(answer.choices[0].message));
  const rows = await storedRows(rig, 'retried');
  const stored = clientVisible(rows);
  assert.equal(stored.length, history.length);
  history.forEach((m, i) => sameAsStored(m, stored[i]));
  // The client did see the failure (and retried): the unanswered message of the failed
  // attempt was rolled back, not stored twice.
  const metrics = await (await fetch(`${rig.daemonUrl}/metrics`)).text();
  assert.match(metrics, /\nmneme_openai_errors_total 1\n/);
  assert.deepEqual(rows.filter((r) => r.state === 'rolled_back').map((r) => r.content),
                   ['Is the river frozen?']);
});

// The value of one unlabelled counter of /metrics.
async function counter(rig, name) {
  const metrics = await (await fetch(`${rig.daemonUrl}/metrics`)).text();
  const line = metrics.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `${name} is exported`);
  return Number(line.split(' ')[1]);
}

test('a full-history client continues across child sessions without a rebase', async (t) => {
  // compression.in_place: false: each compaction continues the key in a child session
  // holding copies of head and tail. The client's transcript is the conversation, so
  // every later message must still be stored once, and nothing rolled back.
  const rig = await startRig({
    scenario: 'seed: 5\ntool_call_fraction: 0\n',
    config: { compression: { threshold_tokens: 6000, protect_last_n: 6, in_place: false } },
  });
  t.after(() => rig.stop());
  const client = doorClient(rig, 'children');
  const history = [{ role: 'system', content: 'You are a travel agent.' }];
  const sessions = new Set();
  let appendedBefore = 0;
  let sentAfterFirst = 0;
  for (let turn = 0; turn < 80; ++turn) {
    history.push({ role: 'user', content: `Turn ${turn}: what is the weather in city ${turn}?` });
    const { data, response } = await client.chat.completions.create({
      model: 'mneme', messages: history,
    }).withResponse();
    assert.equal(response.headers.get('x-mneme-rebased'), null, `turn ${turn}`);
    sessions.add(response.headers.get('x-mneme-session-id'));
    history.push(kept(data.choices[0].message));
    if (turn === 0) {
      appendedBefore = await counter(rig, 'mneme_messages_appended_total');
      sentAfterFirst = history.length;
    }
  }
  assert.ok(sessions.size >= 2, 'the key continued in a child session');
  // Each message after the first exchange was appended once: the user's and the answer.
  const appended = await counter(rig, 'mneme_messages_appended_total') - appendedBefore;
  assert.equal(appended, history.length - sentAfterFirst);
  assert.equal(await counter(rig, 'mneme_openai_rebased_total'), 0);
});

test('a request re-sent with its Idempotency-Key gets the first answer, whole and streamed',
  async (t) => {
    const rig = await startRig({ scenario: 'seed: 5\n' });
    t.after(() => rig.stop());
    const client = doorClient(rig, 'idem');
    const body = { model: 'mneme', messages: [{ role: 'user', content: 'Name a river.' }] };
    const headers = { 'Idempotency-Key': 'river-1' };
    const first = await client.chat.completions.create(body, { headers });
    const { data, response } = await client.chat.completions.create(body, { headers })
      .withResponse();
    assert.equal(response.headers.get('idempotent-replayed'), 'true');
    assert.equal(data.choices[0].message.content, first.choices[0].message.content);
    const read = await readChunks(
      await client.chat.completions.create({ ...body, stream: true }, { headers }));
    assert.equal(read.text, first.choices[0].message.content);
    assert.equal(read.finish, 'stop');
    assert.deepEqual(clientVisible(await storedRows(rig, 'idem')).map((r) => r.role),
                     ['user', 'assistant']);
    await assert.rejects(
      client.chat.completions.create(
        { ...body, messages: [{ role: 'user', content: 'A lake?' }] }, { headers }),
      (err) => err.status === 422 && err.code === 'idempotency_key_reused');
  });
