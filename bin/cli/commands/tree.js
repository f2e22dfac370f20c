'use strict';
const out = require('../output.js');
const sessions = require('../sessions.js');
const { entrySummary, entryTypeName } = require('../render.js');

module.exports = {
  usage: 'tree <session> [--json]',
  summary: 'the entry tree: id, type and first line, branches indented, labels, the leaf marked',
  help: [['--json', 'getTree()']],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: { json: { type: 'boolean' } },
  async run(values, [arg]) {
    const ctx = sessions.context(values);
    const manager = sessions.openSession(await sessions.resolveSession(arg, ctx), ctx);
    const roots = manager.getTree();
    if (values.json) {
      out.printJson(roots);
      return 0;
    }
    const paint = out.painter();
    const width = out.outputWidth();
    const leaf = manager.getLeafId();
    const lines = [];
    // A chain goes on at the same depth; where it forks, each child is a
    // branch drawn one step in. Iterative: sessions hold chains of 100,000.
    const stack = [...roots].reverse().map((node, i) => ({ node, prefix: '', branch: roots.length > 1 ? (i === 0 ? '└─ ' : '├─ ') : '', rest: roots.length > 1 ? (i === 0 ? '   ' : '│  ') : '' }));
    while (stack.length) {
      const { node, prefix, branch, rest } = stack.pop();
      let current = node;
      let first = true;
      for (;;) {
        const entry = current.entry;
        const lead = prefix + (first ? branch : rest);
        const id = String(entry.id ?? '?');
        const mark = id === leaf ? paint.green('* ') : '  ';
        const label = current.label ? ` ${paint.yellow(`[${current.label}]`)}` : '';
        const type = entryTypeName(entry);
        const fixed = `${lead}${mark}${id} ${type}`;
        const room = width - out.displayWidth(fixed) - (current.label ? current.label.length + 3 : 0) - 1;
        const summary = out.truncate(out.oneLine(entrySummary(entry)), Math.max(0, room));
        lines.push(`${mark}${lead}${paint.cyan(id)} ${paint.dim(type)}${label} ${summary}`.trimEnd());
        first = false;
        const children = current.children ?? [];
        if (children.length === 1) {
          current = children[0];
          continue;
        }
        const inner = prefix + rest;
        for (let i = children.length - 1; i >= 0; i--) {
          const last = i === children.length - 1;
          stack.push({ node: children[i], prefix: inner, branch: last ? '└─ ' : '├─ ', rest: last ? '   ' : '│  ' });
        }
        break;
      }
    }
    if (lines.length) process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
