// mneme-fakellm as the official `openai` client sees it: the fake stands in for the
// upstream in every soak, benchmark and conformance test, so the SDK nobody here wrote
// must read its plain answers, its streams (usage chunk included) and its tool calls in
// both forms exactly as it reads OpenAI's. Also proves the rig: the daemon of the build
// starts on the fake and answers /v1/health.
import test from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { readChunks, startRig, weatherTool } from './harness.mjs';

test('the official client reads the fake LLM', async (t) => {
  // Every answer to a request offering tools calls one (tool_call_fraction 1).
  const rig = await startRig({ scenario: 'seed: 7\ntool_call_fraction: 1\ntool_rounds: 1\n' });
  t.after(() => rig.stop());
  const client = new OpenAI({ baseURL: `${rig.fakeUrl}/v1`, apiKey: 'unused', maxRetries: 0 });

  await t.test('the daemon of the build is up on the fake', async () => {
    const health = await fetch(`${rig.daemonUrl}/v1/health`);
    assert.equal(health.status, 200);
  });

  await t.test('non-streamed answer with usage', async () => {
    const answer = await client.chat.completions.create({
      model: 'fake', messages: [{ role: 'user', content: 'Say something about rivers.' }],
    });
    assert.equal(answer.object, 'chat.completion');
    assert.equal(answer.choices[0].message.role, 'assistant');
    assert.ok(answer.choices[0].message.content.length > 0);
    assert.ok(answer.usage.prompt_tokens > 0);
    assert.ok(answer.usage.completion_tokens > 0);
  });

  await t.test('streamed answer: pieces add up, usage chunk last', async () => {
    const stream = await client.chat.completions.create({
      model: 'fake', stream: true, stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Tell a short story about a lighthouse.' }],
    });
    const { text, usage, finish, objects } = await readChunks(stream);
    assert.deepEqual([...objects], ['chat.completion.chunk']);
    assert.ok(text.length > 0);
    assert.equal(finish, 'stop');
    assert.ok(usage && usage.completion_tokens > 0);
  });

  await t.test('tool calls, plain and streamed, then the answer to their results', async () => {
    const messages = [{ role: 'user', content: 'What is the weather in Lisbon?' }];
    const plain = await client.chat.completions.create({
      model: 'fake', messages, tools: [weatherTool],
    });
    const calls = plain.choices[0].message.tool_calls;
    assert.equal(plain.choices[0].finish_reason, 'tool_calls');
    assert.ok(calls.length >= 1);
    assert.equal(calls[0].function.name, 'get_weather');
    assert.equal(typeof JSON.parse(calls[0].function.arguments).city, 'string');

    // The same request streamed: the SDK's stream helper reassembles the fragments.
    const runner = client.chat.completions.stream({ model: 'fake', messages, tools: [weatherTool] });
    const streamed = await runner.finalChatCompletion();
    const streamedCalls = streamed.choices[0].message.tool_calls;
    assert.deepEqual(streamedCalls.map((c) => c.function.name), calls.map((c) => c.function.name));
    for (const call of streamedCalls) JSON.parse(call.function.arguments);

    messages.push(plain.choices[0].message);
    for (const call of calls)
      messages.push({ role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 C' });
    const after = await client.chat.completions.create({ model: 'fake', messages, tools: [weatherTool] });
    assert.equal(after.choices[0].finish_reason, 'stop');
    assert.match(after.choices[0].message.content, /Sunny, 21 C/);
  });

  await t.test('a bad request is an APIError with status 400', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'fake', messages: [] }),
      (e) => e instanceof OpenAI.APIError && e.status === 400);
  });
});
