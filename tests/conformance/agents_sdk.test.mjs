// The OpenAI Agents SDK (@openai/agents, pinned in package.json) against the Responses
// door with its default settings: only OPENAI_BASE_URL points at mneme. An agent with
// two function tools runs 30 turns chained by previousResponseId across compactions,
// then a second process continues the same conversation from the last response id; the
// session holds every user input once, in order (agents_runner.mjs is the agent).
import test from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startRig } from './harness.mjs';

const run = promisify(execFile);

async function runAgent(rig, turns, label, previous) {
  const args = ['agents_runner.mjs', String(turns), label, ...(previous ? [previous] : [])];
  const { stdout } = await run(process.execPath, args, {
    cwd: import.meta.dirname ?? new URL('.', import.meta.url).pathname,
    timeout: 600_000,
    env: { ...process.env, OPENAI_BASE_URL: `${rig.daemonUrl}/v1`, OPENAI_API_KEY: 'unused',
           OPENAI_AGENTS_DISABLE_TRACING: '1' },
  });
  return JSON.parse(stdout.trim().split('\n').at(-1));
}

test('the Agents SDK with its defaults, 30 turns across compactions, then a second process',
     async (t) => {
  const rig = await startRig({
    scenario: 'seed: 44\ntool_call_fraction: 1\ntool_rounds: 1\n',
    config: { compression: { threshold_tokens: 1500, protect_last_n: 4 } },
  });
  t.after(() => rig.stop());
  const one = await runAgent(rig, 30, 'first');
  const two = await runAgent(rig, 3, 'second', one.last);
  const res = await fetch(`${rig.daemonUrl}/v1/sessions/${encodeURIComponent(one.first)}/export`);
  assert.equal(res.status, 200, rig.daemonLog());
  const rows = (await res.text()).split('\n').filter((l) => l).map((l) => JSON.parse(l));
  const users = rows.filter((r) => r.role === 'user' && !r.is_summary && r.state !== 'rolled_back');
  assert.deepEqual(users.map((r) => r.content), [...one.inputs, ...two.inputs]);
  assert.ok(rows.some((r) => r.state === 'archived'), 'the session compacted');
  // The SDK ran the model's calls with its own tools and sent their outputs back.
  const outputs = rows.filter((r) => r.role === 'tool' && /^(mild|noon) in /.test(r.content));
  assert.ok(outputs.length >= 33, `${outputs.length} tool outputs stored`);
});
