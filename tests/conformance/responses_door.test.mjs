// The Responses door of `mneme serve` (POST /v1/responses, docs/api.md "Responses door")
// driven by the official `openai` client's `responses` API, as an agent written for
// OpenAI's stateful API would use it: only the base URL changes. A plain and a streamed
// answer, a 30-round function-tool loop chained by previous_response_id with compactions
// in between, a branch from an older response (X-Mneme-Rebased), and a client that keeps
// its own transcript, sends it whole with `store: false` and names its conversation by a
// `session-id` header (the stored rows are exactly the unique messages); a conversation of
// the Conversations API used by responses.create, its metadata replaced, its items and a
// response's input items;
// `responses.compact` answering a window whose compaction item is mneme's readable
// summary, resent as input without a rollback, and `responses.cancel` stopping a stream
// read by the client's stream helper (its begun items done incomplete, response.incomplete).
import test from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startRig } from './harness.mjs';

// The door's function tool, in the Responses shape (the fake's calls fill `city`).
const weatherFunction = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

// maxRetries 0: any error fails the test.
function responsesClient(rig, headers = {}) {
  return new OpenAI({ baseURL: `${rig.daemonUrl}/v1`, apiKey: 'unused', maxRetries: 0,
                      defaultHeaders: headers });
}

// The rows of the key's session as stored (every state), through the daemon's export.
async function storedRows(rig, key) {
  const res = await fetch(`${rig.daemonUrl}/v1/sessions/${encodeURIComponent(key)}/export`);
  assert.equal(res.status, 200);
  return (await res.text()).split('\n').filter((l) => l).map((l) => JSON.parse(l));
}

// What a client holds of the stored rows: not rolled back, not a summary, not the
// daemon's own system prompt (the first row).
function clientVisible(rows) {
  return rows.filter((r, i) => r.state !== 'rolled_back' && !r.is_summary
                               && !(i === 0 && r.role === 'system'));
}

// The output items of a response, as the client sends them back as input.
function functionCalls(response) {
  return response.output.filter((item) => item.type === 'function_call');
}

test('the official client through the Responses door', async (t) => {
  // Every answer to a request offering tools calls one, then a text (one round);
  // threshold_tokens keeps the threshold low so the long loops compact.
  const rig = await startRig({
    scenario: 'seed: 43\ntool_call_fraction: 1\ntool_rounds: 1\n',
    config: { compression: { threshold_tokens: 1500, protect_last_n: 4 } },
  });
  t.after(() => rig.stop());

  await t.test('responses.create: a response object, fetched again by its id', async () => {
    const client = responsesClient(rig);
    const { data, response } = await client.responses.create({
      model: 'mneme', instructions: 'Answer briefly.', input: 'Say something about rivers.',
    }).withResponse();
    assert.equal(data.object, 'response');
    assert.match(data.id, /^resp_/);
    assert.equal(data.status, 'completed');
    assert.ok(data.output_text.length > 0);
    assert.ok(data.usage.input_tokens > 0);
    assert.ok(response.headers.get('x-mneme-session-id'));
    const again = await client.responses.retrieve(data.id);
    assert.equal(again.id, data.id);
    assert.equal(again.output_text, data.output_text);
    const rows = clientVisible(await storedRows(rig, data.id));
    assert.deepEqual(rows.map((r) => [r.role, r.content.trim()]),
                     [['system', 'Answer briefly.'], ['user', 'Say something about rivers.'],
                      ['assistant', data.output_text.trim()]]);
  });

  await t.test('a streamed response: OpenAI\'s events, the text as stored', async () => {
    const client = responsesClient(rig);
    const stream = await client.responses.create({
      model: 'mneme', input: 'Tell a short story about a lighthouse.', stream: true,
    });
    let text = '';
    const types = [];
    let completed = null;
    let sequence = 0;
    for await (const event of stream) {
      assert.equal(event.sequence_number, sequence++);
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.deepEqual(types.filter((x) => x !== 'response.output_text.delta'), [
      'response.created', 'response.in_progress', 'response.output_item.added',
      'response.content_part.added', 'response.output_text.done', 'response.content_part.done',
      'response.output_item.done', 'response.completed']);
    assert.ok(completed);
    const rows = clientVisible(await storedRows(rig, completed.id));
    assert.equal(rows.at(-1).content, text.trim());
    assert.equal(completed.output[0].content[0].text, rows.at(-1).content);
  });

  await t.test('conversations.create, then responses.create({conversation}) and its items',
               async () => {
    const client = responsesClient(rig);
    const conv = await client.conversations.create({
      items: [{ type: 'message', role: 'user', content: 'Remember: the river is the Rhine.' }],
      metadata: { topic: 'rivers' },
    });
    assert.match(conv.id, /^conv_[0-9a-f]{32}$/);
    assert.deepEqual(conv.metadata, { topic: 'rivers' });
    assert.equal((await client.conversations.retrieve(conv.id)).id, conv.id);
    const updated = await client.conversations.update(conv.id, { metadata: { topic: 'lakes' } });
    assert.deepEqual(updated.metadata, { topic: 'lakes' });
    assert.deepEqual((await client.conversations.retrieve(conv.id)).metadata, { topic: 'lakes' });
    const { data: first, response } = await client.responses.create({
      model: 'mneme', conversation: conv.id, input: 'Which river?',
    }).withResponse();
    assert.equal(first.conversation.id, conv.id);
    const rows = clientVisible(await storedRows(rig, conv.id));
    assert.equal(response.headers.get('x-mneme-session-id'), rows[0].session_id);
    const second = await client.responses.create({
      model: 'mneme', conversation: { id: conv.id }, input: 'And its length?',
    });
    const added = await client.conversations.items.create(conv.id, {
      items: [{ type: 'message', role: 'user', content: 'A note for later.' }],
    });
    assert.equal(added.data.length, 1);
    // every page through the client's own cursor (limit 2)
    const texts = [];
    for await (const item of client.conversations.items.list(conv.id, { limit: 2, order: 'asc' }))
      texts.push(item.content[0].text.trim());
    assert.deepEqual(texts, ['Remember: the river is the Rhine.', 'Which river?',
                             first.output_text.trim(), 'And its length?',
                             second.output_text.trim(), 'A note for later.']);
    const newest = (await client.conversations.items.list(conv.id, { limit: 1 })).data[0];
    assert.equal(newest.id, added.data[0].id);
    const fetched = await client.conversations.items.retrieve(newest.id,
                                                              { conversation_id: conv.id });
    assert.deepEqual(fetched, newest);
    // the input items of each response: what it was sent since the last answer
    const inputs = [];
    for await (const item of client.responses.inputItems.list(second.id)) inputs.push(item);
    assert.deepEqual(inputs.map((i) => i.content[0].text), ['And its length?']);
    // a deleted item is a rolled-back row, kept
    const after = await client.conversations.items.delete(newest.id,
                                                          { conversation_id: conv.id });
    assert.equal(after.id, conv.id);
    const kept = await storedRows(rig, conv.id);
    assert.ok(kept.some((r) => r.state === 'rolled_back' && r.content === 'A note for later.'));
    await assert.rejects(
      client.conversations.items.retrieve(newest.id, { conversation_id: conv.id }),
      (e) => e instanceof OpenAI.NotFoundError);
    // a deleted conversation is unknown; its rows stay
    const gone = await client.conversations.delete(conv.id);
    assert.equal(gone.deleted, true);
    await assert.rejects(client.conversations.retrieve(conv.id),
                         (e) => e instanceof OpenAI.NotFoundError);
    await assert.rejects(
      client.responses.create({ model: 'mneme', conversation: conv.id, input: 'Still there?' }),
      (e) => e instanceof OpenAI.NotFoundError);
    assert.equal((await storedRows(rig, conv.id)).length, kept.length);
  });

  await t.test('a 30-round function-tool loop chained by previous_response_id', async () => {
    const client = responsesClient(rig);
    let previous = null;
    let key = null;
    let compactions = 0;
    const sent = [];
    for (let round = 0; round < 30; ++round) {
      let input = `Round ${round}: what is the weather in city ${round}?`;
      sent.push(['user', input]);
      for (;;) {
        const { data, response } = await client.responses.create({
          model: 'mneme', tools: [weatherFunction], input,
          ...(previous ? { previous_response_id: previous } : {}),
        }).withResponse();
        assert.equal(response.headers.get('x-mneme-rebased'), null);
        compactions += Number(response.headers.get('x-mneme-compactions') ?? 0);
        key ??= data.id;
        previous = data.id;
        const calls = functionCalls(data);
        if (calls.length === 0) {
          sent.push(['assistant', data.output_text.trim()]);
          break;
        }
        sent.push(['assistant', null]);
        input = calls.map((c) => ({ type: 'function_call_output', call_id: c.call_id,
                                    output: `weather ${round}: mild` }));
        for (const c of calls) sent.push(['tool', `weather ${round}: mild`]);
      }
    }
    assert.ok(compactions > 0, 'the session compacted during the loop');
    const rows = await storedRows(rig, key);
    const visible = clientVisible(rows);
    assert.equal(visible.length, sent.length);
    sent.forEach(([role, content], i) => {
      assert.equal(visible[i].role, role);
      if (content !== null) assert.equal(visible[i].content.trim(), content);
    });
    assert.ok(rows.some((r) => r.state === 'archived'));
    // The last response of the chain is still continuable after the compactions.
    const last = await client.responses.create({
      model: 'mneme', input: 'Thanks!', previous_response_id: previous,
    });
    assert.equal(last.status, 'completed');
  });

  await t.test('continuing an older response branches: X-Mneme-Rebased', async () => {
    const client = responsesClient(rig);
    const first = await client.responses.create({ model: 'mneme', input: 'Plan a trip to Oslo.' });
    let previous = first.id;
    for (let turn = 0; turn < 2; ++turn)
      previous = (await client.responses.create({
        model: 'mneme', input: `More detail, part ${turn}.`, previous_response_id: previous,
      })).id;
    const { data, response } = await client.responses.create({
      model: 'mneme', input: 'Actually: Bergen.', previous_response_id: first.id,
    }).withResponse();
    assert.equal(data.previous_response_id, first.id);
    assert.equal(response.headers.get('x-mneme-rebased'), '4');
    const rows = await storedRows(rig, first.id);
    assert.deepEqual(clientVisible(rows).map((r) => r.content.trim()),
                     ['Plan a trip to Oslo.', first.output_text.trim(), 'Actually: Bergen.',
                      data.output_text.trim()]);
    assert.equal(rows.filter((r) => r.state === 'rolled_back').length, 4);
  });

  await t.test('a whole transcript with store:false and a session-id header, 30 rounds', async () => {
    const client = responsesClient(rig, { 'session-id': 'own-transcript' });
    const transcript = [];
    let compactions = 0;
    let stored = 0;
    for (let round = 0; round < 30; ++round) {
      transcript.push({ role: 'user', content: `Round ${round}: weather in city ${round}?` });
      stored += 1;
      for (;;) {
        const { data, response } = await client.responses.create({
          model: 'mneme', instructions: 'You are a travel agent.', tools: [weatherFunction],
          input: transcript, store: false,
        }).withResponse();
        assert.equal(response.headers.get('x-mneme-rebased'), null);
        compactions += Number(response.headers.get('x-mneme-compactions') ?? 0);
        for (const item of data.output) transcript.push(item);
        const calls = functionCalls(data);
        stored += 1; // the answer: one assistant row, its text and its calls
        if (calls.length === 0) break;
        for (const c of calls) {
          transcript.push({ type: 'function_call_output', call_id: c.call_id,
                            output: `weather ${round}: mild` });
          stored += 1;
        }
      }
    }
    assert.ok(compactions > 0, 'the session compacted during the loop');
    const visible = clientVisible(await storedRows(rig, 'own-transcript'));
    assert.equal(visible[0].role, 'system'); // the instructions, once
    assert.equal(visible.length, stored + 1);
    const res = await fetch(`${rig.daemonUrl}/metrics`);
    assert.match(await res.text(), /\nmneme_responses_rebased_total 0\n/);
  });

  await t.test('responses.compact: the window with a readable summary, resent as input', async () => {
    const client = responsesClient(rig);
    const first = await client.responses.create({
      model: 'mneme', input: `Chapter 0 of a long tale. ${'words '.repeat(60)}`,
    });
    let previous = first.id;
    for (let turn = 1; turn < 8; ++turn)
      previous = (await client.responses.create({
        model: 'mneme', input: `Chapter ${turn}, please. ${'more '.repeat(60)}`,
        previous_response_id: previous,
      })).id;
    const compacted = await client.responses.compact({ model: 'mneme',
                                                       previous_response_id: previous });
    assert.equal(compacted.object, 'response.compaction');
    const items = compacted.output.filter((item) => item.type === 'compaction');
    const summaries = (await storedRows(rig, first.id)).filter((r) => r.is_summary
                                                                   && r.state === 'live');
    assert.ok(items.length >= 1);
    assert.equal(items.length, summaries.length);
    assert.equal(items.at(-1).encrypted_content, summaries.at(-1).content); // plain text
    assert.equal(items.at(-1).replaced_rows.last_id, summaries.at(-1).replaced_last_id);
    // The window resent whole with the next question, naming the chain's session.
    const before = (await storedRows(rig, first.id)).length;
    const { data, response } = await client.responses.create({
      model: 'mneme', prompt_cache_key: first.id,
      input: [...compacted.output, { role: 'user', content: 'And the epilogue?' }],
    }).withResponse();
    assert.equal(data.status, 'completed');
    assert.equal(response.headers.get('x-mneme-rebased'), null);
    const after = await storedRows(rig, first.id);
    assert.equal(after.length, before + 2); // the question and its answer, nothing else
    assert.equal(after.filter((r) => r.state === 'rolled_back').length, 0);
  });

  await t.test('responses.cancel stops a streamed response in flight', async () => {
    const client = responsesClient(rig);
    // The next chat call sends half its events, then nothing for 60 s.
    const faults = await fetch(`${rig.fakeUrl}/control/faults`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seed: 5, faults: [{ kind: 'trickle', purpose: 'chat',
                                                 silence_ms: 60000, max_count: 1 }] }),
    });
    assert.equal(faults.status, 200);
    // the client's stream helper, which accepts only OpenAI's own stream events
    const stream = client.responses.stream({ model: 'mneme', input: 'Tell a very long story.' });
    const types = [];
    const added = new Map();
    const done = new Map();
    let id;
    let cancelled;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.created') id = event.response.id;
      if (event.type === 'response.output_item.added') added.set(event.output_index, event.item);
      if (event.type === 'response.output_item.done') done.set(event.output_index, event.item);
      if (event.type === 'response.output_text.delta' && !types.includes('cancel asked')) {
        types.push('cancel asked');
        cancelled = await client.responses.cancel(id);
        assert.equal(cancelled.status, 'cancelled');
      }
    }
    assert.ok(types.includes('cancel asked'));
    assert.equal(types.at(-1), 'response.incomplete');
    // every item begun is done, incomplete, as streamed; the same in every view of it
    assert.ok(added.size > 0);
    assert.deepEqual([...done.keys()], [...added.keys()]);
    for (const item of done.values()) assert.equal(item.status, 'incomplete');
    const final = await stream.finalResponse(); // the helper parses it (adds `parsed`)
    assert.equal(final.status, 'cancelled');
    assert.equal(final.output.length, done.size);
    assert.equal(final.output_text, done.get(0).content[0].text);
    assert.deepEqual(cancelled.output, [...done.values()]);
    const stored = await client.responses.retrieve(id);
    assert.equal(stored.status, 'cancelled');
    assert.deepEqual(stored.output, [...done.values()]);
    await assert.rejects(client.responses.cancel((await client.responses.create({
      model: 'mneme', input: 'A short one.' })).id),
    (e) => e instanceof OpenAI.BadRequestError);
  });

  await t.test('errors are OpenAI errors naming the param', async () => {
    const client = responsesClient(rig);
    await assert.rejects(
      client.responses.create({ model: 'mneme', input: 'x', tools: [{ type: 'web_search' }] }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'tools[0].type');
    await assert.rejects(
      client.responses.create({ model: 'mneme', input: 'x', previous_response_id: 'resp_none' }),
      (e) => e instanceof OpenAI.BadRequestError && e.code === 'previous_response_not_found');
  });
});

test('a continuation re-sent with its Idempotency-Key gets the first answer, rolling nothing back',
  async (t) => {
    const rig = await startRig({ scenario: 'seed: 5\n' });
    t.after(() => rig.stop());
    const client = responsesClient(rig);
    const first = await client.responses.create({ model: 'mneme', input: 'Plan a trip.' });
    const body = { model: 'mneme', input: 'By train.', previous_response_id: first.id };
    const headers = { 'Idempotency-Key': 'train-1' };
    const answer = await client.responses.create(body, { headers });
    const { data, response } = await client.responses.create(body, { headers }).withResponse();
    assert.equal(response.headers.get('idempotent-replayed'), 'true');
    assert.equal(response.headers.get('x-mneme-rebased'), null);
    assert.equal(data.output_text, answer.output_text);
    let text = '';
    let completed = null;
    for await (const event of await client.responses.create({ ...body, stream: true },
                                                            { headers })) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.ok(completed);
    assert.equal(text, answer.output_text);
    // Two questions, two answers: nothing stored twice, nothing rolled back.
    const rows = await storedRows(rig, first.id);
    assert.deepEqual(clientVisible(rows).map((r) => r.role),
                     ['user', 'assistant', 'user', 'assistant']);
    assert.ok(rows.every((r) => r.state !== 'rolled_back'));
    // The replayed response continues the chain like the first.
    const next = await client.responses.create({ model: 'mneme', input: 'Thanks.',
                                                 previous_response_id: data.id });
    assert.ok(next.output_text.length > 0);
  });
