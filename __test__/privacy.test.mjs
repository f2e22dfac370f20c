// Files the package writes besides session files hold every session's text (the
// persistent listing cache): they are created private, 0600 (folders 0700),
// whatever the umask. Run in child processes with umask 000, where anything
// created with default modes would be world-writable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
const CACHE_FILE = 'pi-session-native-listing.v4.bin';

const mode = (p) => fs.statSync(p).mode & 0o777;

// Makes one session in <base>/sessions, lists it with the cache in argv[3] (by
// configureListing, or by the environment when argv[4] is "env"), and waits for
// the cache file, which is written after the listing has answered.
const child = `
process.umask(0);
const fs = require('fs');
const path = require('path');
const [base, cacheDir, how] = process.argv.slice(1);
const { SessionManager, configureListing } = require(${JSON.stringify(root)});
const sessions = path.join(base, 'sessions');
if (!fs.existsSync(sessions)) {
  const sm = SessionManager.create('/project', sessions);
  sm.appendMessage({ role: 'user', content: 'a private conversation', timestamp: 1 });
  sm.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'reply' }], timestamp: 2 });
}
if (how !== 'env') configureListing({ cacheDir });
(async () => {
  const file = path.join(cacheDir, ${JSON.stringify(CACHE_FILE)});
  const version = () => (fs.existsSync(file) ? fs.statSync(file).ino + ':' + fs.statSync(file).mtimeMs : '');
  const before = version();
  const infos = await SessionManager.list('/project', sessions, () => {});
  if (infos.length !== 1) throw new Error('listed ' + infos.length);
  for (let i = 0; i < 2000; i++) {
    const now = version();
    if (now && (now !== before || how === 'unchanged')) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  // Let the scan thread finish renaming before the process exits.
  await new Promise((r) => setTimeout(r, 50));
})();
`;

function run(base, cacheDir, how = '') {
  const agent = path.join(base, 'agent');
  const result = spawnSync(process.execPath, ['-e', child, base, cacheDir, how], {
    encoding: 'utf8',
    env: { ...process.env, PI_CODING_AGENT_DIR: agent, PI_SESSION_NATIVE_CACHE_DIR: how === 'env' ? cacheDir : '' },
  });
  assert.equal(result.status, 0, result.stderr);
}

function tempBase(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `pisn-privacy-${name}-`));
}

test('the listing cache: folders made for it 0700, its file 0600, under umask 000', () => {
  const base = tempBase('new');
  const cacheDir = path.join(base, 'cache', 'nested', 'listing');
  run(base, cacheDir);
  const file = path.join(cacheDir, CACHE_FILE);
  assert.ok(fs.existsSync(file), 'the cache file was written');
  assert.equal(mode(file).toString(8), '600');
  for (const made of [path.join(base, 'cache'), path.join(base, 'cache', 'nested'), cacheDir]) {
    assert.equal(mode(made).toString(8), '700', made);
  }
  // Nothing else is left in the folder: no temporary file survives its rename.
  assert.deepEqual(fs.readdirSync(cacheDir), [CACHE_FILE]);
  // The session files themselves keep the reference's default modes.
  const sessionFile = fs.readdirSync(path.join(base, 'sessions'))[0];
  assert.equal(mode(path.join(base, 'sessions', sessionFile)).toString(8), '666');
  fs.rmSync(base, { recursive: true, force: true });
});

test('the listing cache named by PI_SESSION_NATIVE_CACHE_DIR is private too', () => {
  const base = tempBase('env');
  const cacheDir = path.join(base, 'env-cache');
  run(base, cacheDir, 'env');
  assert.equal(mode(path.join(cacheDir, CACHE_FILE)).toString(8), '600');
  assert.equal(mode(cacheDir).toString(8), '700');
  fs.rmSync(base, { recursive: true, force: true });
});

test('an existing cache file readable by others is made private; an existing folder is left as it is', () => {
  const base = tempBase('existing');
  const cacheDir = path.join(base, 'shared-cache');
  fs.mkdirSync(cacheDir);
  fs.chmodSync(cacheDir, 0o755);
  run(base, cacheDir);
  const file = path.join(cacheDir, CACHE_FILE);
  assert.equal(mode(cacheDir).toString(8), '755', 'a folder the package did not make keeps its mode');
  // Widened by someone else, then read by a process with nothing new to write.
  fs.chmodSync(file, 0o644);
  run(base, cacheDir, 'unchanged');
  assert.equal(mode(file).toString(8), '600');
  // Widened again, then replaced by a process that writes a new cache.
  fs.chmodSync(file, 0o666);
  const sessions = path.join(base, 'sessions');
  const message = { type: 'message', id: 'later01', parentId: null, timestamp: '2024-01-01T00:00:00.000Z', message: { role: 'user', content: 'more', timestamp: 3 } };
  fs.appendFileSync(path.join(sessions, fs.readdirSync(sessions)[0]), JSON.stringify(message) + '\n');
  run(base, cacheDir);
  assert.equal(mode(file).toString(8), '600');
  fs.rmSync(base, { recursive: true, force: true });
});

test('the accounting cache (usageReport with a cache folder) is 0600 in a 0700 folder too', () => {
  const base = tempBase('usage');
  const cacheDir = path.join(base, 'usage-cache');
  const script = `
process.umask(0);
const fs = require('fs');
const path = require('path');
const [base, cacheDir] = process.argv.slice(1);
const { SessionManager, configureListing, usageReport } = require(${JSON.stringify(root)});
const sessions = path.join(base, 'sessions');
const sm = SessionManager.create('/project', sessions);
sm.appendMessage({ role: 'user', content: 'a private conversation', timestamp: 1 });
sm.appendMessage({ role: 'assistant', content: [{ type: 'text', text: 'reply' }], timestamp: 2,
  usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.5 } } });
configureListing({ cacheDir });
(async () => {
  await usageReport({ cwd: '/project', sessionDir: sessions, groupBy: 'day', timezone: 'UTC' });
  const written = () => fs.existsSync(cacheDir) && fs.readdirSync(cacheDir).some((n) => n.startsWith('pi-session-native-usage'));
  for (let i = 0; i < 2000 && !written(); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 50));
})();
`;
  const result = spawnSync(process.execPath, ['-e', script, base, cacheDir], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  const names = fs.readdirSync(cacheDir);
  const usage = names.filter((n) => n.startsWith('pi-session-native-usage'));
  assert.equal(usage.length, 1, `cache folder holds ${names.join(', ')}`);
  assert.equal(mode(path.join(cacheDir, usage[0])).toString(8), '600');
  assert.equal(mode(cacheDir).toString(8), '700');
  fs.rmSync(base, { recursive: true, force: true });
});
