// The conformance tests' rig: the mneme-fakellm and `mneme serve` of this build
// (MNEME_BINARY_DIR, set by ctest) started as child processes on a temporary directory,
// so a test drives the real daemon with the official `openai` client and can also call
// the fake straight, as an agent that keeps its own model calls does.
//
//   const rig = await startRig({ config: { compression: { protect_last_n: 4 } } });
//   rig.daemonUrl  // http://127.0.0.1:PORT of `mneme serve` (no token: loopback only)
//   rig.fakeUrl    // http://127.0.0.1:PORT of mneme-fakellm (OpenAI-compatible: /v1/...)
//   await rig.stop();
//   const { text, usage } = await readChunks(stream);  // a streamed answer read whole
//
// The daemon's configuration is JSON (YAML 1.2 reads it as it is): the defaults below
// point `model.base_url` at the fake and quiet the logs; `config` is merged over them
// section by section. `scenario` (YAML text) is the fake's fault plan, `fakeArgs` more
// of its flags (e.g. ['--window', '4000']). Every wait is bounded, so a child that never
// starts or never stops fails the test instead of hanging it. Who may touch it: any
// conformance test; keep it free of assertions about mneme's behaviour.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const binaryDir = process.env.MNEME_BINARY_DIR;
const startTimeoutMs = 30_000;
const stopTimeoutMs = 20_000;

// What each program prints on stdout once it listens, right before its port.
const daemonMarker = /listening on http:\/\/127\.0\.0\.1:(\d+)/;
const fakeMarker = /listening http:\/\/127\.0\.0\.1:(\d+)/;

const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function requireBinaryDir() {
  if (!binaryDir)
    throw new Error('MNEME_BINARY_DIR is not set: run the conformance tests through ctest ' +
                    '(ctest --test-dir build -R conformance)');
  return binaryDir;
}

// Starts `program` of the build with `args`; resolves with { child, port } once its
// stdout shows `marker`, rejects with what it printed when it exits or times out first.
function startListening(program, args, marker, errFile) {
  const executable = path.join(requireBinaryDir(), program);
  return new Promise((resolve, reject) => {
    const child = spawn(executable, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let seen = '';
    let errors = '';
    const fail = (why) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${program} ${why}; stdout: ${seen} stderr: ${errors}`));
    };
    const timer = setTimeout(() => fail(`did not listen within ${startTimeoutMs} ms`),
                             startTimeoutMs);
    child.stderr.on('data', (piece) => {
      errors += piece;
      if (errFile) writeFileSync(errFile, errors);
    });
    child.stdout.on('data', (piece) => {
      seen += piece;
      const found = marker.exec(seen);
      if (found) {
        clearTimeout(timer);
        resolve({ child, port: Number(found[1]) });
      }
    });
    child.on('error', (e) => fail(`could not start: ${e.message}`));
    child.on('exit', (code, signal) => {
      running.delete(child);
      fail(`exited (code ${code}, signal ${signal}) before listening`);
    });
  });
}

// SIGTERM, then SIGKILL if the child has not exited within stopTimeoutMs.
function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      running.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// `over` merged into `base` key by key (objects recursively, anything else replaced).
export function mergeConfig(base, over) {
  const merged = { ...base };
  for (const [key, value] of Object.entries(over ?? {}))
    merged[key] = isPlainObject(value) && isPlainObject(base[key])
      ? mergeConfig(base[key], value) : value;
  return merged;
}

export async function startRig({ config = {}, scenario = '', fakeArgs = [] } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'mneme-conformance-'));
  const children = [];
  const stop = async () => {
    for (const child of children.reverse()) await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const fakeFlags = ['--port', '0', '--log-level', 'warn', ...fakeArgs];
    if (scenario) {
      writeFileSync(path.join(dir, 'scenario.yaml'), scenario);
      fakeFlags.push('--scenario', path.join(dir, 'scenario.yaml'));
    }
    const fake = await startListening('mneme-fakellm', fakeFlags, fakeMarker,
                                      path.join(dir, 'fakellm.err'));
    children.push(fake.child);
    const fakeUrl = `http://127.0.0.1:${fake.port}`;

    const settings = mergeConfig({
      model: { base_url: fakeUrl, timeout: 30 },
      logging: { level: 'warn' },
    }, config);
    const configFile = path.join(dir, 'mneme.yaml');
    writeFileSync(configFile, JSON.stringify(settings, null, 2));
    const db = path.join(dir, 'mneme.db');
    const daemon = await startListening(
      'mneme', ['serve', '--config', configFile, '--db', db, '--port', '0'], daemonMarker,
      path.join(dir, 'serve.err'));
    children.push(daemon.child);
    return {
      dir, db, fakeUrl, stop,
      daemonUrl: `http://127.0.0.1:${daemon.port}`,
      // What the daemon wrote on stderr so far (for a failing test's message).
      daemonLog: () => { try { return readFileSync(path.join(dir, 'serve.err'), 'utf8'); }
                         catch { return ''; } },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

// A `chat.completion.chunk` stream read to its end: the text of choice 0's deltas, the
// last finish_reason, the usage chunk (null when none came) and every chunk's `object`.
export async function readChunks(stream) {
  const read = { text: '', finish: null, usage: null, objects: new Set() };
  for await (const chunk of stream) {
    read.objects.add(chunk.object);
    if (chunk.usage) read.usage = chunk.usage;
    for (const choice of chunk.choices) {
      read.text += choice.delta.content ?? '';
      read.finish = choice.finish_reason ?? read.finish;
    }
  }
  return read;
}

// A function tool the tests offer (the fake's calls fill its required `city`).
export const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    },
  },
};
