// mneme's MCP server (docs/api.md "MCP server") driven by the official MCP TypeScript
// SDK (@modelcontextprotocol/sdk, pinned by package-lock.json): its Client over the
// Streamable HTTP transport at the daemon's /mcp, and over the stdio transport launching
// `mneme mcp --server URL --token T` as an agent host does. Each way: initialize (the
// SDK checks the negotiated version), list the tools, call each one and read its
// result; and a user token that cannot reach another user's facts or sessions.
import test from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startRig } from './harness.mjs';

const adminToken = 'mcp-conformance-admin';
const aliceToken = 'mneme_0000000a_alice-conformance';
const bobToken = 'mneme_0000000b_bob-conformance';
const toolNames = ['memory', 'session_context', 'session_search', 'skill_view', 'skills_list'];

// A daemon with two user tokens, an admin token and one skill.
async function startMcpRig() {
  const dir = mkdtempSync(path.join(tmpdir(), 'mneme-mcp-'));
  const sha = (t) => createHash('sha256').update(t).digest('hex');
  writeFileSync(path.join(dir, 'tokens'),
                `0000000a sha256:${sha(aliceToken)} user:alice\n`
                + `0000000b sha256:${sha(bobToken)} user:bob\n`);
  mkdirSync(path.join(dir, 'skills', 'deploy-app'), { recursive: true });
  writeFileSync(path.join(dir, 'skills', 'deploy-app', 'SKILL.md'),
                '---\nname: deploy-app\ndescription: how to deploy the app\n---\n'
                + '1. build the image\n2. push it to zq-registry\n');
  const rig = await startRig({
    config: {
      gateway: {
        auth_token: adminToken,
        tokens_file: path.join(dir, 'tokens'),
        skills_dir: path.join(dir, 'skills'),
      },
    },
  });
  const stop = rig.stop;
  rig.stop = async () => { await stop(); rmSync(dir, { recursive: true, force: true }); };
  return rig;
}

// mneme's REST API as the admin (to seed data and to check it).
async function rest(rig, method, route, body) {
  const res = await fetch(`${rig.daemonUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await res.json();
  assert.ok(res.status < 300, `${method} ${route}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function seed(rig) {
  await rest(rig, 'POST', '/v1/sessions/alice-chat/messages',
             { user: 'alice', role: 'user', content: 'alice plans the heliotrope launch' });
  await rest(rig, 'POST', '/v1/sessions/bob-chat/messages',
             { user: 'bob', role: 'user', content: 'bob keeps the heliotrope budget' });
  await rest(rig, 'PUT', '/v1/users/bob/facts/secret', { value: 'bob-only' });
}

const textOf = (result) => result.content.map((c) => c.text).join('');

function httpClient(rig, token) {
  return new StreamableHTTPClientTransport(new URL(`${rig.daemonUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
}

function stdioClient(rig, token) {
  return new StdioClientTransport({
    command: path.join(process.env.MNEME_BINARY_DIR, 'mneme'),
    args: ['mcp', '--server', rig.daemonUrl, '--token', token],
    stderr: 'pipe',
  });
}

async function connect(transport) {
  const client = new Client({ name: 'mneme-conformance', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// Everything an agent does with mneme's tools, as alice.
async function useEveryTool(client) {
  const server = client.getServerVersion();
  assert.equal(server.name, 'mneme');
  assert.ok(client.getServerCapabilities().tools, 'the tools capability');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), toolNames);
  for (const t of tools) assert.equal(t.inputSchema.type, 'object');

  const set = await client.callTool({ name: 'memory',
                                      arguments: { action: 'set', key: 'color', value: 'teal' } });
  assert.equal(set.isError, false, textOf(set));
  const listed = JSON.parse(textOf(await client.callTool({ name: 'memory',
                                                           arguments: { action: 'list' } })));
  assert.deepEqual(listed.facts.map((f) => [f.user_id, f.key, f.value]),
                   [['alice', 'color', 'teal']]);
  const searched = JSON.parse(textOf(await client.callTool(
    { name: 'memory', arguments: { action: 'search', query: 'teal' } })));
  assert.equal(searched.facts.length, 1);
  const removed = await client.callTool({ name: 'memory',
                                          arguments: { action: 'remove', key: 'color' } });
  assert.equal(removed.isError, false, textOf(removed));

  const found = JSON.parse(textOf(await client.callTool(
    { name: 'session_search', arguments: { query: 'heliotrope' } })));
  assert.equal(found.hits.length, 1, JSON.stringify(found));
  assert.match(found.hits[0].snippet, /launch/);

  const context = JSON.parse(textOf(await client.callTool(
    { name: 'session_context', arguments: { key: 'alice-chat' } })));
  assert.equal(context.session.session_key, 'alice-chat');
  assert.ok(context.live.some((m) => m.content === 'alice plans the heliotrope launch'));

  const skills = JSON.parse(textOf(await client.callTool({ name: 'skills_list', arguments: {} })));
  assert.deepEqual(skills.skills, [{ name: 'deploy-app', description: 'how to deploy the app' }]);
  const skill = await client.callTool({ name: 'skill_view', arguments: { name: 'deploy-app' } });
  assert.match(textOf(skill), /zq-registry/);

  const bad = await client.callTool({ name: 'memory', arguments: { action: 'set', key: 'k' } });
  assert.equal(bad.isError, true);
  assert.match(textOf(bad), /'value'/);
  await client.ping();
}

// Alice's token never reaches bob's memory.
async function staysInItsOwnUser(client) {
  const bobs = await client.callTool({ name: 'memory', arguments: { action: 'list', user: 'bob' } });
  assert.equal(bobs.isError, true);
  assert.match(textOf(bobs), /^error 403 forbidden/);
  assert.doesNotMatch(textOf(bobs), /bob-only/);
  const mine = textOf(await client.callTool({ name: 'memory', arguments: { action: 'list' } }));
  assert.doesNotMatch(mine, /bob-only/);
  const write = await client.callTool(
    { name: 'memory', arguments: { action: 'set', key: 'x', value: 'y', user: 'bob' } });
  assert.equal(write.isError, true);
  const search = textOf(await client.callTool(
    { name: 'session_search', arguments: { query: 'heliotrope' } }));
  assert.doesNotMatch(search, /budget/);
  const context = await client.callTool({ name: 'session_context', arguments: { key: 'bob-chat' } });
  assert.equal(context.isError, true);
  assert.match(textOf(context), /^error 404 not_found/);
}

// A daemon seeded for alice and bob; alice's client over `transport` uses every tool and
// stays within her own memory; bob's facts are unchanged afterwards.
async function aliceUsesTheTools(transport) {
  const rig = await startMcpRig();
  try {
    await seed(rig);
    const client = await connect(transport(rig, aliceToken));
    try {
      await useEveryTool(client);
      await staysInItsOwnUser(client);
    } finally {
      await client.close();
    }
    const bobsFacts = await rest(rig, 'GET', '/v1/users/bob/facts');
    assert.deepEqual(bobsFacts.facts.map((f) => f.key), ['secret']); // nothing written for bob
  } finally {
    await rig.stop();
  }
}

test('the MCP SDK client over Streamable HTTP: initialize, list and call every tool',
     () => aliceUsesTheTools(httpClient));

test('the MCP SDK client over stdio, launching `mneme mcp`', () => aliceUsesTheTools(stdioClient));

test('a wrong token is refused: the HTTP transport fails to initialize', async () => {
  const rig = await startMcpRig();
  try {
    const client = new Client({ name: 'mneme-conformance', version: '1.0.0' });
    await assert.rejects(client.connect(httpClient(rig, 'not-a-token')), /401|nauthorized/);
  } finally {
    await rig.stop();
  }
});
