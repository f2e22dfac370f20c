'use strict';
const fs = require('fs');
const out = require('../output.js');
const sessions = require('../sessions.js');

const MAX_CHAIN = 100;

/** The parentSession chain: each parent's file and header, until one is missing. */
function parentChain(header, ctx) {
  const chain = [];
  const seen = new Set();
  let next = header?.parentSession;
  while (typeof next === 'string' && next && chain.length < MAX_CHAIN && !seen.has(next)) {
    seen.add(next);
    let parent;
    try {
      parent = fs.existsSync(next) && fs.statSync(next).size > 0 ? sessions.openSession(next, ctx).getHeader() : null;
    } catch {
      parent = null;
    }
    chain.push({ path: next, exists: parent !== null, id: parent?.id, timestamp: parent?.timestamp, cwd: parent?.cwd });
    next = parent?.parentSession;
  }
  return chain;
}

module.exports = {
  usage: 'info <session> [--json]',
  summary: 'header, file, size, entries, name and the parentSession chain',
  help: [['--json', 'the header plus file, size, entries, name, parentChain']],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: { json: { type: 'boolean' } },
  async run(values, [arg]) {
    const ctx = sessions.context(values);
    const file = await sessions.resolveSession(arg, ctx);
    const manager = sessions.openSession(file, ctx);
    const header = manager.getHeader();
    const size = fs.statSync(file).size;
    const entries = manager.getEntries();
    const name = manager.getSessionName();
    const chain = parentChain(header, ctx);
    if (values.json) {
      out.printJson({
        ...header,
        file,
        size,
        entries: entries.length,
        messages: entries.filter((e) => e.type === 'message').length,
        name,
        leafId: manager.getLeafId(),
        parentChain: chain,
      });
      return 0;
    }
    const paint = out.painter();
    const rows = [
      ['id', paint.cyan(header.id)],
      ['name', name ?? paint.dim('(none)')],
      ['file', file],
      ['size', `${out.formatBytes(size)} (${size} bytes)`],
      ['created', header.timestamp],
      ['cwd', header.cwd],
      ['version', String(header.version ?? 1)],
      ['entries', `${entries.length} (${entries.filter((e) => e.type === 'message').length} messages)`],
      ['leaf', manager.getLeafId() ?? paint.dim('(none)')],
    ];
    if (chain.length === 0) rows.push(['parent', paint.dim('(none)')]);
    chain.forEach((p, i) => {
      const what = p.exists ? `${p.id}  ${p.path}` : `${p.path} ${paint.red('(missing)')}`;
      rows.push([i === 0 ? 'parent' : '', `${'  '.repeat(i)}${i ? '└ ' : ''}${what}`]);
    });
    const width = Math.max(...rows.map((r) => r[0].length));
    process.stdout.write(`${rows.map(([k, v]) => `${paint.bold(k.padEnd(width))}  ${v}`.trimEnd()).join('\n')}\n`);
    return 0;
  },
};
