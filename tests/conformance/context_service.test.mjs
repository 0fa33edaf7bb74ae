// The context service (issue 27 item 2; docs/api.md "Context service") as an agent that
// keeps its own model calls uses it: a hand-written loop asks mneme what to send
// (/context), calls the fake LLM straight with the official `openai` client, reports
// each answer and its usage (/usage), runs the tools the model calls itself, and hands a
// refusal of the model to mneme (/model_error). Checked: the client never sees an error,
// the context mneme answers is always a request the upstream accepts, compactions
// happen between the turns, every user message stays stored and findable, and a
// context-length error ends in a compaction and a retry that succeeds.
import test from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startRig } from './harness.mjs';

const lookupTool = {
  type: 'function',
  function: {
    name: 'lookup_order',
    description: 'The state of an order',
    parameters: {
      type: 'object',
      properties: { order: { type: 'string' } },
      required: ['order'],
    },
  },
};

// POST to the context service; a non-200 answer fails the test with the body.
async function service(rig, key, op, body) {
  const res = await fetch(`${rig.daemonUrl}/v1/sessions/${encodeURIComponent(key)}/${op}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  assert.equal(res.status, 200, `${op}: ${JSON.stringify(answer)}\n${rig.daemonLog()}`);
  return answer;
}

// One user message through the agent's own loop: context -> model -> usage, and for
// every tool call the agent's tool result -> context -> model again, until text.
// Returns the final answer text and the compactions mneme reported on the way.
async function agentTurn(rig, client, key, text, stats) {
  let ctx = await service(rig, key, 'context', {
    messages: [{ role: 'user', content: text }], tools: [lookupTool], model: 'fake',
  });
  for (let round = 0; round < 8; ++round) {
    stats.compactions += ctx.compactions.length;
    const completion = await client.chat.completions.create({
      model: 'fake', messages: ctx.messages, tools: [lookupTool],
    });
    const message = completion.choices[0].message;
    stats.answers += 1;
    const usage = await service(rig, key, 'usage', {
      prompt_tokens: completion.usage.prompt_tokens,
      completion_tokens: completion.usage.completion_tokens,
      answer: message, // the SDK's message, verbatim
    });
    assert.ok(usage.answer_id > 0);
    stats.compactions += usage.compactions.length;
    if (!message.tool_calls?.length) return message.content;
    stats.toolRounds += 1;
    stats.toolResults += message.tool_calls.length;
    const results = message.tool_calls.map((call) => ({
      role: 'tool', tool_call_id: call.id,
      content: JSON.stringify({ order: JSON.parse(call.function.arguments).order ?? '?',
                                state: 'shipped', note: 'x'.repeat(300) }),
    }));
    ctx = await service(rig, key, 'context', { messages: results, tools: [lookupTool] });
  }
  throw new Error('the tool loop did not end');
}

test('a hand-written agent loop gets its context from mneme and calls the model itself',
     async (t) => {
  // Half the answers to a request offering tools call one, one round per message; mneme
  // compacts above 1,500 tokens keeping the last 4 rows.
  const rig = await startRig({
    config: { compression: { threshold_tokens: 1500, protect_last_n: 4 } },
    scenario: 'seed: 11\ntool_call_fraction: 0.5\ntool_rounds: 1\n',
  });
  t.after(() => rig.stop());
  const client = new OpenAI({ baseURL: `${rig.fakeUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  const key = 'agent-loop';
  const stats = { compactions: 0, toolRounds: 0, toolResults: 0, answers: 0 };
  const sent = [];
  for (let i = 0; i < 30; ++i) {
    const text = `Message ${i}: where is order A-${1000 + i}? ${'detail '.repeat(40)}`;
    sent.push(text);
    const answer = await agentTurn(rig, client, key, text, stats);
    assert.ok(answer.length > 0);
  }
  assert.ok(stats.toolRounds > 0, 'the model called a tool at least once');
  assert.ok(stats.compactions > 0, 'mneme compacted between the turns');

  // The stored rows (archived included) are exactly what the agent sent and reported,
  // once each, besides the system prompt and the summaries.
  const exported = await (await fetch(`${rig.daemonUrl}/v1/sessions/${key}/export`)).text();
  const rows = exported.trim().split('\n').map((line) => JSON.parse(line));
  const own = rows.filter((r) => !r.is_summary);
  assert.deepEqual(own.filter((r) => r.role === 'user').map((r) => r.content), sent);
  assert.equal(own.filter((r) => r.role === 'assistant').length, stats.answers);
  assert.equal(own.filter((r) => r.role === 'tool').length, stats.toolResults);
  assert.ok(rows.some((r) => r.is_summary), 'a summary row was stored');
  const found = await (await fetch(
    `${rig.daemonUrl}/v1/search?q=${encodeURIComponent('A-1003')}`)).json();
  assert.ok(found.hits.length > 0, JSON.stringify(found));
});

test('a context-length error from the model ends in a compaction and a retry that fits',
     async (t) => {
  // The fake's window (1,500 tokens) is far below mneme's threshold: only the model's
  // own refusal can make mneme compact.
  const rig = await startRig({
    config: { compression: { protect_last_n: 4 } },
    scenario: 'seed: 3\nwindow_tokens: 1500\n',
  });
  t.after(() => rig.stop());
  const client = new OpenAI({ baseURL: `${rig.fakeUrl}/v1`, apiKey: 'unused', maxRetries: 0 });
  const key = 'agent-overflow';
  let refused = null;
  for (let i = 0; i < 40 && !refused; ++i) {
    const ctx = await service(rig, key, 'context', {
      messages: [{ role: 'user', content: `Turn ${i}: ${'tell me more about rivers '.repeat(12)}` }],
    });
    try {
      const completion = await client.chat.completions.create({ model: 'fake', messages: ctx.messages });
      await service(rig, key, 'usage', {
        prompt_tokens: completion.usage.prompt_tokens,
        completion_tokens: completion.usage.completion_tokens,
        answer: completion.choices[0].message,
      });
    } catch (e) {
      assert.ok(e instanceof OpenAI.APIError, String(e));
      refused = { error: e, sent: ctx.messages.length };
    }
  }
  assert.ok(refused, 'the fake refused a request over its window');
  assert.equal(refused.error.status, 400);

  const advice = await service(rig, key, 'model_error', {
    status: refused.error.status, body: JSON.stringify({ error: refused.error.error }),
  });
  assert.equal(advice.kind, 'context_overflow');
  assert.equal(advice.trigger, 'T9_context_overflow');
  assert.equal(advice.retry, true);
  assert.equal(advice.retry_after_backoff, false);
  assert.equal(advice.compacted, true);
  assert.ok(advice.messages.length < refused.sent, 'the retry sends fewer messages');

  const retried = await client.chat.completions.create({ model: 'fake', messages: advice.messages });
  assert.ok(retried.choices[0].message.content.length > 0);
  const usage = await service(rig, key, 'usage', {
    prompt_tokens: retried.usage.prompt_tokens,
    completion_tokens: retried.usage.completion_tokens,
    answer: retried.choices[0].message,
  });
  assert.ok(usage.answer_id > 0);
});
