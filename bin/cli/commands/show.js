'use strict';
const out = require('../output.js');
const sessions = require('../sessions.js');
const { describe } = require('../render.js');

const MAX_WHO_WIDTH = 16;
const COLOURS = { user: 'green', assistant: 'magenta', compaction: 'yellow', 'branch summary': 'yellow' };

module.exports = {
  usage: 'show <session> [--tail N] [--all-branches] [--json]',
  summary: 'who said what on the active branch, newest last',
  help: [
    ['--tail N', 'the last N items only'],
    ['--all-branches', 'every entry of the file, not only the active branch'],
    ['--json', 'getBranch() (with --all-branches: getEntries())'],
  ],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: { tail: { type: 'string' }, 'all-branches': { type: 'boolean' }, json: { type: 'boolean' } },
  async run(values, [arg]) {
    const ctx = sessions.context(values);
    const tail = out.intOption(values, 'tail');
    const manager = sessions.openSession(await sessions.resolveSession(arg, ctx), ctx);
    const entries = values['all-branches'] ? manager.getEntries() : manager.getBranch();
    if (values.json) {
      out.printJson(tail === undefined ? entries : entries.slice(Math.max(0, entries.length - tail)));
      return 0;
    }
    let items = entries.map(describe).filter(Boolean);
    if (tail !== undefined) items = items.slice(Math.max(0, items.length - tail));
    const paint = out.painter();
    const width = out.outputWidth();
    const whoWidth = Math.min(MAX_WHO_WIDTH, Math.max(0, ...items.map((i) => out.displayWidth(i.who))));
    const indent = ' '.repeat(whoWidth + 2);
    const lines = [];
    for (const item of items) {
      const colour = COLOURS[item.who] ?? (item.who.startsWith('tool') ? 'cyan' : 'dim');
      const who = paint[colour](out.padEnd(item.who, whoWidth));
      const folded = item.who.startsWith('tool') || item.who === 'bash';
      const text = folded ? [out.truncate(out.oneLine(item.text), width - indent.length)] : item.text.trim().split('\n');
      const body = [...(text.length && text.join('') !== '' ? text : []), ...item.calls.map((c) => paint.dim(out.truncate(`→ ${c}`, width - indent.length)))];
      if (body.length === 0) body.push(paint.dim('(empty)'));
      const marker = item.isError ? paint.red(' error') : '';
      lines.push(`${who}  ${body[0]}${marker}`.trimEnd());
      for (const line of body.slice(1)) lines.push(`${indent}${line}`.trimEnd());
    }
    if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
