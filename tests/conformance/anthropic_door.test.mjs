// The Anthropic Messages door of `mneme serve` (POST /v1/messages, docs/api.md
// "Anthropic door") driven by the official `@anthropic-ai/sdk` client, as an existing
// agent would use it: only the base URL and the X-Mneme-Session header change. A plain
// and a streamed answer, a 30-round tool_use / tool_result loop resending the full
// history with compactions between calls (every message stored once, never a rebase),
// messages.countTokens, and an upstream 529 and 429 retried by the SDK itself.
import test from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startRig } from './harness.mjs';

const weather = {
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

// A client of the door for one session key; maxRetries 0 unless given: any error fails.
function messagesClient(rig, key, maxRetries = 0) {
  return new Anthropic({
    baseURL: rig.daemonUrl, apiKey: 'unused', maxRetries,
    defaultHeaders: { 'X-Mneme-Session': key },
  });
}

// The rows of the key's session as stored (every state), through the daemon's export.
async function exportedRows(rig, key) {
  const res = await fetch(`${rig.daemonUrl}/v1/sessions/${encodeURIComponent(key)}/export`);
  assert.equal(res.status, 200);
  return (await res.text()).split('\n').filter((l) => l).map((l) => JSON.parse(l));
}

// What a client would send back: not rolled back, not a summary, not a system row.
function sentBack(rows) {
  return rows.filter((r) => r.state !== 'rolled_back' && !r.is_summary && r.role !== 'system');
}

async function metricValue(rig, name) {
  const metrics = await (await fetch(`${rig.daemonUrl}/metrics`)).text();
  const line = metrics.split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `${name} is exported`);
  return Number(line.split(' ')[1]);
}

// The rows the client's transcript stands for, in order: a string or text blocks are one
// row, each tool_result block one tool row, an assistant message one row with its calls.
function expectedRows(history) {
  const rows = [];
  for (const m of history) {
    if (typeof m.content === 'string') {
      rows.push({ role: m.role, content: m.content, calls: [] });
      continue;
    }
    const text = m.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
    if (m.role === 'assistant') {
      const calls = m.content.filter((b) => b.type === 'tool_use')
        .map((b) => [b.id, b.name, JSON.stringify(b.input)]);
      rows.push({ role: 'assistant', content: text, calls });
      continue;
    }
    for (const b of m.content.filter((x) => x.type === 'tool_result'))
      rows.push({ role: 'tool', content: b.content, tool_call_id: b.tool_use_id, calls: [] });
    if (m.content.some((b) => b.type === 'text'))
      rows.push({ role: 'user', content: text, calls: [] });
  }
  return rows;
}

test('the official Anthropic client through the Messages door', async (t) => {
  // Requests offering tools call one for up to 30 rounds, then answer with text; the low
  // threshold makes the long loop compact between calls.
  const rig = await startRig({
    scenario: 'seed: 44\ntool_call_fraction: 1\ntool_rounds: 30\n',
    config: { compression: { threshold_tokens: 6000, protect_last_n: 6 } },
  });
  t.after(() => rig.stop());

  await t.test('messages.create: a message, the session in the headers', async () => {
    const client = messagesClient(rig, 'plain');
    const { data, response } = await client.messages.create({
      model: 'claude-sonnet-4-5', max_tokens: 512,
      system: 'You answer briefly.',
      messages: [{ role: 'user', content: 'Say something about rivers.' }],
    }).withResponse();
    assert.equal(data.type, 'message');
    assert.equal(data.role, 'assistant');
    assert.match(data.id, /^msg_/);
    assert.equal(data.stop_reason, 'end_turn');
    assert.equal(data.content[0].type, 'text');
    assert.ok(data.content[0].text.length > 0);
    assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0);
    assert.ok(response.headers.get('x-mneme-session-id'));
    assert.equal(response.headers.get('x-mneme-compactions'), '0');
    const rows = sentBack(await exportedRows(rig, 'plain'));
    assert.deepEqual(rows.map((r) => r.role), ['user', 'assistant']);
    assert.equal(rows[1].content, data.content[0].text);
  });

  await t.test('messages.stream: the events add up to the stored answer', async () => {
    const client = messagesClient(rig, 'streamed');
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-5', max_tokens: 512,
      messages: [{ role: 'user', content: 'Tell a short story about a lighthouse.' }],
    });
    const types = [];
    let text = '';
    stream.on('streamEvent', (e) => types.push(e.type));
    stream.on('text', (delta) => { text += delta; });
    const message = await stream.finalMessage();
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    assert.ok(types.includes('content_block_delta'));
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.content[0].text, text);
    const rows = sentBack(await exportedRows(rig, 'streamed'));
    assert.equal(rows[1].content.trim(), text.trim());
  });

  await t.test('a 30-round tool loop resending the full history, compacted on the way',
    async () => {
      const client = messagesClient(rig, 'tool-loop');
      const history = [{ role: 'user', content: 'Check the weather in every city you know.' }];
      let compactions = 0;
      // 30 rounds of tool_use answered by tool_result, then the answer to the last results.
      for (let round = 0; round <= 30; ++round) {
        const { data, response } = await client.messages.create({
          model: 'claude-sonnet-4-5', max_tokens: 1024, system: 'You are a weather agent.',
          tools: [weather], messages: history,
        }).withResponse();
        compactions += Number(response.headers.get('x-mneme-compactions') ?? 0);
        assert.equal(response.headers.get('x-mneme-rebased'), null, `round ${round}`);
        history.push({ role: 'assistant', content: data.content });
        if (round === 30) break;
        assert.equal(data.stop_reason, 'tool_use', `round ${round}`);
        history.push({
          role: 'user',
          content: data.content.filter((b) => b.type === 'tool_use').map((b) => ({
            type: 'tool_result', tool_use_id: b.id,
            content: `${b.input.city}: mild, round ${round}. ${'Details. '.repeat(200)}`,
          })),
        });
      }
      assert.ok(compactions > 0, 'the session compacted during the loop');
      const rows = await exportedRows(rig, 'tool-loop');
      assert.ok(rows.some((r) => r.state === 'archived'));
      const stored = sentBack(rows);
      const expected = expectedRows(history);
      assert.equal(stored.length, expected.length);
      expected.forEach((want, i) => {
        assert.equal(stored[i].role, want.role, `row ${i}`);
        assert.equal(stored[i].content.trim(), want.content.trim(), `row ${i}`);
        if (want.role === 'tool') assert.equal(stored[i].tool_call_id, want.tool_call_id);
        const calls = (stored[i].tool_calls ?? [])
          .map((c) => [c.id, c.name, JSON.stringify(JSON.parse(c.arguments || '{}'))]);
        assert.deepEqual(calls, want.calls, `row ${i}`);
      });
      assert.equal(await metricValue(rig, 'mneme_anthropic_rebased_total'), 0);
    });

  await t.test('stop_sequences: the answer ends before the sequence and names it', async () => {
    // The fake (an OpenAI-compatible upstream) stops on `stop` and names the string as
    // vLLM does; the door answers stop_reason stop_sequence, whole and streamed.
    const data = await messagesClient(rig, 'stops').messages.create({
      model: 'claude-sonnet-4-5', max_tokens: 256, stop_sequences: ['nowhere', 'river'],
      messages: [{ role: 'user', content: 'Tell me about the river.' }],
    });
    assert.equal(data.stop_reason, 'stop_sequence');
    assert.equal(data.stop_sequence, 'river');
    assert.ok(!data.content[0].text.includes('river'), data.content[0].text);
    const stream = messagesClient(rig, 'stops-streamed').messages.stream({
      model: 'claude-sonnet-4-5', max_tokens: 256, stop_sequences: ['river'],
      messages: [{ role: 'user', content: 'A river story, please.' }],
    });
    const message = await stream.finalMessage();
    assert.equal(message.stop_reason, 'stop_sequence');
    assert.equal(message.stop_sequence, 'river');
    const plain = await messagesClient(rig, 'stops-plain').messages.create({
      model: 'claude-sonnet-4-5', max_tokens: 256, stop_sequences: ['river'],
      messages: [{ role: 'user', content: 'And the sea?' }],
    });
    assert.equal(plain.stop_reason, 'end_turn');
    assert.equal(plain.stop_sequence, null);
  });

  await t.test('messages.countTokens: what mneme would send', async () => {
    const client = messagesClient(rig, 'plain');
    const alone = await new Anthropic({ baseURL: rig.daemonUrl, apiKey: 'unused' })
      .messages.countTokens({
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: 'How many tokens is this? '.repeat(50) }],
      });
    assert.ok(alone.input_tokens > 50);
    // The session's live context plus the new message.
    const rows = sentBack(await exportedRows(rig, 'plain'));
    const counted = await client.messages.countTokens({
      model: 'claude-sonnet-4-5', system: 'You answer briefly.',
      messages: [...rows.map((r) => ({ role: r.role, content: r.content })),
                 { role: 'user', content: 'And lakes?' }],
    });
    assert.ok(counted.input_tokens > 0);
  });

  await t.test('a 400 names the block type and is not retried', async () => {
    const client = messagesClient(rig, 'refused', 2);
    await assert.rejects(
      client.messages.create({
        model: 'claude-sonnet-4-5', max_tokens: 64,
        messages: [{ role: 'user', content: [
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'memo' } }] }],
      }),
      (e) => e instanceof Anthropic.BadRequestError && e.status === 400
             && e.error?.error?.type === 'invalid_request_error'
             && /"document"/.test(e.error.error.message));
    assert.equal(await metricValue(rig, 'mneme_anthropic_errors_total'), 1);
  });
});

// A client whose every answer's status (and Retry-After, into `afters` when given) is
// recorded, the SDK's retries included.
function recordingClient(rig, headers, statuses, afters = null) {
  return new Anthropic({
    baseURL: rig.daemonUrl, apiKey: 'unused', maxRetries: 2, defaultHeaders: headers,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      statuses.push(res.status);
      afters?.push(res.headers.get('retry-after'));
      return res;
    },
  });
}

test('an upstream 529 and 429 are retried by the official client', async (t) => {
  // The first chat call fails with 503 (the door answers 529 overloaded_error), the
  // second with a 429 (rate_limit_error) whose Retry-After the door passes on (the 529
  // carries mneme's own 1 s); the SDK retries both and the third succeeds.
  // Stateless: in a session, mneme answers a long-context 429 itself (it compacts and
  // calls again), so only a pass-through hands it to the client.
  const rig = await startRig({
    scenario: 'seed: 3\nfaults:\n'
      + '  - kind: unavailable\n    purpose: chat\n    max_count: 1\n'
      + '  - kind: long_context_429\n    purpose: chat\n    max_count: 1\n    retry_after: 2\n',
  });
  t.after(() => rig.stop());
  const statuses = [];
  const afters = [];
  const answer = await recordingClient(rig, {}, statuses, afters).messages.create({
    model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Hi?' }],
  });
  assert.equal(answer.stop_reason, 'end_turn');
  assert.deepEqual(statuses, [529, 429, 200]);
  assert.deepEqual(afters, ['1', '2', null]);
  assert.equal(await metricValue(rig, 'mneme_anthropic_errors_total'), 2);

  // In a session: the failed attempt's message is rolled back, the retry stores it once.
  const faults = await fetch(`${rig.fakeUrl}/control/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ seed: 4, faults: [{ kind: 'unavailable', purpose: 'chat', max_count: 1 }] }),
  });
  assert.equal(faults.status, 200);
  statuses.length = 0;
  const history = [{ role: 'user', content: 'Is the river frozen?' }];
  const kept = await recordingClient(rig, { 'X-Mneme-Session': 'retried' }, statuses)
    .messages.create({ model: 'claude-sonnet-4-5', max_tokens: 256, system: 'Be brief.',
                       messages: history });
  assert.equal(kept.stop_reason, 'end_turn');
  assert.deepEqual(statuses, [529, 200]);
  const rows = await exportedRows(rig, 'retried');
  assert.deepEqual(sentBack(rows).map((r) => r.role), ['user', 'assistant']);
  assert.deepEqual(rows.filter((r) => r.state === 'rolled_back').map((r) => r.content),
                   ['Is the river frozen?']);
});

test('a request re-sent with its Idempotency-Key gets the first answer, whole and streamed',
  async (t) => {
    const rig = await startRig({ scenario: 'seed: 5\n' });
    t.after(() => rig.stop());
    const client = messagesClient(rig, 'idem');
    const body = { model: 'claude-sonnet-4-5', max_tokens: 512,
                   messages: [{ role: 'user', content: 'Name a river.' }] };
    const headers = { 'Idempotency-Key': 'river-1' };
    const first = await client.messages.create(body, { headers });
    const { data, response } = await client.messages.create(body, { headers }).withResponse();
    assert.equal(response.headers.get('idempotent-replayed'), 'true');
    assert.equal(data.content[0].text, first.content[0].text);
    let text = '';
    const stream = client.messages.stream(body, { headers });
    stream.on('text', (delta) => { text += delta; });
    const streamed = await stream.finalMessage();
    assert.equal(streamed.stop_reason, 'end_turn');
    assert.equal(text, first.content[0].text);
    // One question, one answer stored; another question under the key is refused.
    assert.deepEqual(sentBack(await exportedRows(rig, 'idem')).map((r) => r.role),
                     ['user', 'assistant']);
    await assert.rejects(
      client.messages.create({ ...body, messages: [{ role: 'user', content: 'A lake?' }] },
                             { headers }),
      (err) => err.status === 422 && err.error?.error?.type === 'invalid_request_error');
  });
