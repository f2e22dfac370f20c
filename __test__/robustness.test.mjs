// Where the reference loses data, hangs or aborts, this package must not. These
// are not differential: the reference fails these cases (see README, "Differences").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = path.resolve(import.meta.dirname ?? path.dirname(new URL(import.meta.url).pathname), '..');
const { SessionManager, buildSessionContext } = require(root);
const binding = require(path.join(root, 'binding.js'));

function tempDir(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `pisn-${name}-`));
}

const user = (text) => ({ role: 'user', content: text, timestamp: 1 });

function writeLines(file, entries) {
  fs.writeFileSync(file, entries.map((e) => JSON.stringify(e)).join('\n') + '\n');
}

const header = { type: 'session', version: 3, id: 'cycle-session', timestamp: '2024-01-01T00:00:00.000Z', cwd: '/x' };
const msg = (id, parentId, text) => ({
  type: 'message',
  id,
  parentId,
  timestamp: '2024-01-01T00:00:01.000Z',
  message: user(text),
});

test('a Rust panic reaches JavaScript as an Error and the process lives on', () => {
  assert.throws(() => binding.panicForTest('deliberate'), { message: 'deliberate' });
  // The addon still works after the panic.
  const sm = SessionManager.inMemory('/x');
  sm.appendMessage(user('still here'));
  assert.equal(sm.getEntries().length, 1);
});

test('parentId cycles and self-parents: every walk returns', () => {
  const dir = tempDir('cycle');
  const file = path.join(dir, 's.jsonl');
  writeLines(file, [header, msg('a', 'b', 'one'), msg('b', 'a', 'two'), msg('c', 'c', 'self')]);
  const sm = SessionManager.open(file);
  assert.deepEqual(sm.getBranch('b').map((e) => e.id), ['a', 'b']);
  assert.deepEqual(sm.getBranch('c').map((e) => e.id), ['c']);
  sm.branch('b');
  assert.deepEqual(
    sm.buildSessionContext().messages.map((m) => m.content),
    ['one', 'two'],
  );
  assert.equal(sm.buildContextEntries().length, 2);
  // a and b are each other's children: neither is a root; c is its own parent: a root.
  assert.deepEqual(sm.getTree().map((n) => n.entry.id), ['c']);
  const entries = sm.getEntries();
  assert.equal(buildSessionContext(entries, 'a').messages.length, 2);
});

test('repeated ids that would make getTree cyclic give a tree', () => {
  const dir = tempDir('dup');
  const file = path.join(dir, 's.jsonl');
  writeLines(file, [header, msg('x', null, 'first x'), msg('y', 'x', 'y'), msg('x', 'y', 'second x')]);
  const sm = SessionManager.open(file);
  const roots = sm.getTree();
  // The reference loops: the node of the last "x" is a root, y its child, and
  // that node again y's child. Here it stays where it is met first.
  assert.equal(roots.length, 1);
  assert.equal(roots[0].entry.message.content, 'second x');
  assert.equal(roots[0].children[0].entry.id, 'y');
  assert.deepEqual(roots[0].children[0].children, []);
  assert.doesNotThrow(() => JSON.stringify(roots));
  assert.equal(sm.getBranch('x').length, 2);
});

test('a rejected setSessionFile leaves the manager and both files as they were', () => {
  const dir = tempDir('reject');
  const sm = SessionManager.create('/x', dir);
  sm.appendMessage(user('kept'));
  const before = sm.getSessionFile();
  const garbage = path.join(dir, 'garbage.jsonl');
  fs.writeFileSync(garbage, 'not json\n');
  assert.throws(() => sm.setSessionFile(garbage), {
    message: `Session file is not a valid pi session: ${garbage}`,
  });
  assert.equal(sm.getSessionFile(), before);
  sm.appendMessage(user('after'));
  assert.equal(fs.readFileSync(garbage, 'utf8'), 'not json\n');
  assert.deepEqual(
    SessionManager.open(before).getEntries().map((e) => e.message.content),
    ['kept', 'after'],
  );
});

test('a v2 file nested 20,000 deep migrates instead of being destroyed', () => {
  const dir = tempDir('deep');
  const file = path.join(dir, 's.jsonl');
  const deep = '['.repeat(20000) + ']'.repeat(20000);
  const lines = [
    JSON.stringify({ ...header, version: 2 }),
    `{"type":"message","id":"a","parentId":null,"timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"x","deep":${deep}}}`,
  ];
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const sm = SessionManager.open(file);
  assert.equal(sm.getHeader().version, 3);
  const written = fs.readFileSync(file, 'utf8').split('\n');
  assert.equal(written.length, 3);
  assert.equal(JSON.parse(written[0]).version, 3);
  assert.equal(written[1], lines[1]);
  assert.equal(sm.getEntries()[0].message.content, 'x');
});

test('ENOSPC on a real tiny filesystem: the error is Node-shaped, file and memory unchanged', (t) => {
  const mountPoint = tempDir('tinyfs');
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', mountPoint]);
  if (mounted.status !== 0) {
    t.skip(`cannot mount a tmpfs here (needs root): ${String(mounted.stderr).trim()}`);
    return;
  }
  try {
    const sm = SessionManager.create('/x', mountPoint);
    sm.appendMessage(user('first'));
    const file = sm.getSessionFile();
    const big = 'y'.repeat(6000);
    let failure;
    for (let i = 0; i < 100 && !failure; i++) {
      const beforeBytes = fs.readFileSync(file);
      const beforeCount = sm.getEntries().length;
      const beforeLeaf = sm.getLeafId();
      try {
        sm.appendMessage(user(`${i} ${big}`));
      } catch (error) {
        failure = error;
        assert.match(error.message, /^ENOSPC: no space left on device, write$/);
        assert.equal(error.code, 'ENOSPC');
        assert.deepEqual(fs.readFileSync(file), beforeBytes, 'the file is cut back to its last whole line');
        assert.equal(sm.getEntries().length, beforeCount);
        assert.equal(sm.getLeafId(), beforeLeaf);
      }
    }
    assert.ok(failure, 'the 64 KB filesystem filled up');
    const reopened = SessionManager.open(file);
    assert.deepEqual(
      reopened.getEntries().map((e) => e.id),
      sm.getEntries().map((e) => e.id),
    );
  } finally {
    spawnSync('umount', [mountPoint]);
  }
});

const appender = `
const { SessionManager } = require(${JSON.stringify(root)});
const [file, tag, count] = process.argv.slice(1);
const sm = SessionManager.open(file);
for (let i = 0; i < Number(count); i++) {
  const id = sm.appendMessage({ role: 'user', content: tag + ' ' + i + ' ' + 'z'.repeat(i % 7 * 300), timestamp: i });
  process.stdout.write(id + '\\n');
}
`;

function seededSession(dir) {
  const sm = SessionManager.create('/x', dir);
  sm.appendMessage(user('start'));
  return sm.getSessionFile();
}

test('SIGKILL during appends leaves every completed entry, whole', async () => {
  const dir = tempDir('kill');
  for (let round = 0; round < 8; round++) {
    const file = seededSession(dir);
    const child = spawn(process.execPath, ['-e', appender, file, `r${round}`, '100000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    await new Promise((resolve) => setTimeout(resolve, 80 + round * 37));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    const completed = out.split('\n').slice(0, -1);
    const sm = SessionManager.open(file);
    const ids = new Set(sm.getEntries().map((e) => e.id));
    for (const id of completed) assert.ok(ids.has(id), `round ${round}: entry ${id} was reported written`);
    // A kill can land inside the write of the last line (Linux stops a large
    // write short on a fatal signal); reopening ends that torn line with a
    // newline as the reference does, and it is skipped. Every other line is whole.
    const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
    const torn = lines.filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
    assert.ok(torn.length <= 1, `round ${round}: ${torn.length} unreadable lines`);
    if (torn.length === 1) assert.equal(lines.at(-1), torn[0], 'only the last line can be torn');
  }
});

test('two processes appending to one session: lines stay whole and both files reopen', async () => {
  const dir = tempDir('two');
  const file = seededSession(dir);
  const run = (tag) =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, ['-e', appender, file, tag, '300'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.on('close', (code) => resolve({ code, ids: out.split('\n').slice(0, -1) }));
    });
  const [a, b] = await Promise.all([run('A'), run('B')]);
  assert.equal(a.code, 0);
  assert.equal(b.code, 0);
  const lines = fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
  assert.equal(lines.length, 2 + 600);
  for (const line of lines) JSON.parse(line);
  const reopened = SessionManager.open(file);
  const ids = new Set(reopened.getEntries().map((e) => e.id));
  for (const id of [...a.ids, ...b.ids]) assert.ok(ids.has(id));
});

test('a 100 MB single line and JSON nested 100,000 deep load and build', () => {
  const dir = tempDir('big');
  const file = path.join(dir, 's.jsonl');
  const big = 'b'.repeat(100 * 1024 * 1024);
  const deep = '['.repeat(100000) + ']'.repeat(100000);
  const lines = [
    JSON.stringify(header),
    JSON.stringify(msg('a', null, big)),
    `{"type":"message","id":"b","parentId":"a","timestamp":"2024-01-01T00:00:02.000Z","message":{"role":"user","content":"deep","nested":${deep}}}`,
  ];
  fs.writeFileSync(file, lines.join('\n') + '\n');
  const sm = SessionManager.open(file);
  const context = sm.buildSessionContext();
  assert.equal(context.messages.length, 2);
  assert.equal(context.messages[0].content.length, big.length);
  assert.equal(context.messages[1].content, 'deep');
  assert.equal(sm.getTree()[0].children[0].entry.id, 'b');
});

test('a sparse 10 GB file of NUL bytes: a clear error, memory bounded, listing skips it', async () => {
  const dir = tempDir('sparse');
  const file = path.join(dir, 'sparse.jsonl');
  const fd = fs.openSync(file, 'w');
  fs.ftruncateSync(fd, 10 * 1024 * 1024 * 1024);
  fs.closeSync(fd);
  const rssBefore = process.memoryUsage().rss;
  assert.throws(() => SessionManager.open(file), { message: `Session file is not a valid pi session: ${file}` });
  assert.deepEqual(await SessionManager.listAll(dir), []);
  // The file is never held whole; allow generous slack for the runtime.
  assert.ok(process.memoryUsage().rss - rssBefore < 128 * 1024 * 1024);
  fs.rmSync(dir, { recursive: true });
});

test('raw NUL bytes inside lines: skipped as JSON.parse skips them, same as the reference', async () => {
  const { SessionManager: Reference } = await import(
    path.join(root, 'node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js')
  );
  const lines = [
    JSON.stringify(header),
    JSON.stringify(msg('a', null, 'before')),
    `{"type":"message","id":"n","parentId":"a","timestamp":"2024-01-01T00:00:01.000Z","message":{"role":"user","content":"raw\u0000nul"}}`.replace('\\u0000', '\u0000'),
    '\u0000\u0000\u0000',
    JSON.stringify(msg('b', 'a', 'after')),
  ];
  const seen = [Reference, SessionManager].map((Impl) => {
    const dir = tempDir('nul');
    const file = path.join(dir, 's.jsonl');
    fs.writeFileSync(file, lines.join('\n') + '\n');
    assert.ok(fs.readFileSync(file).includes(0));
    return Impl.open(file).getEntries().map((e) => e.id);
  });
  assert.deepEqual(seen[1], seen[0]);
  assert.deepEqual(seen[1], ['a', 'b']);
});

test('a directory named x.jsonl and a dangling symlink fail as in the reference', async () => {
  const { SessionManager: Reference } = await import(
    path.join(root, 'node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js')
  );
  const outcome = (fn) => {
    try {
      fn();
      return 'ok';
    } catch (error) {
      return `${error.code}: ${error.message.replace(/'[^']*'/, "'<path>'")}`;
    }
  };
  for (const [name, make] of [
    ['x.jsonl', (p) => fs.mkdirSync(p)],
    ['dangling.jsonl', (p) => fs.symlinkSync(path.join(path.dirname(p), 'nowhere'), p)],
  ]) {
    const results = [Reference, SessionManager].map((Impl) => {
      const dir = tempDir('odd');
      const file = path.join(dir, name);
      make(file);
      return outcome(() => {
        const sm = Impl.open(file);
        sm.appendMessage(user('x'));
      });
    });
    assert.equal(results[1], results[0], name);
    assert.notEqual(results[0], 'ok');
  }
});
