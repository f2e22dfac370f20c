'use strict';
const fs = require('fs');
const out = require('../output.js');
const sessions = require('../sessions.js');
const { describe, contentText, toolCallLine } = require('../render.js');

/** A fence that the text itself does not close. */
function fence(text) {
  let f = '```';
  while (text.includes(f)) f += '`';
  return f;
}

function markdown(manager) {
  const header = manager.getHeader();
  const name = manager.getSessionName();
  const lines = [`# ${name ?? `Session ${header.id}`}`, '', `- id: \`${header.id}\``, `- created: ${header.timestamp}`, `- cwd: \`${header.cwd}\``, ''];
  // Tool results are folded under the call that asked for them.
  for (const entry of manager.getBranch()) {
    const message = entry.type === 'message' ? entry.message : undefined;
    if (message?.role === 'toolResult') {
      const text = contentText(message.content);
      const f = fence(text);
      lines.push('<details>', `<summary>${message.isError ? 'error from' : 'result of'} ${message.toolName ?? 'tool'}</summary>`, '', f, text, f, '', '</details>', '');
      continue;
    }
    const item = describe(entry);
    if (!item) continue;
    switch (item.who) {
      case 'user':
      case 'assistant':
        lines.push(`## ${item.who === 'user' ? 'User' : 'Assistant'}`, '');
        if (item.text.trim()) lines.push(item.text.trim(), '');
        for (const call of Array.isArray(message.content) ? message.content.filter((p) => p && p.type === 'toolCall') : []) {
          lines.push(`> **tool call** \`${toolCallLine(call).replace(/`/g, "'")}\``, '');
        }
        break;
      case 'compaction':
      case 'branch summary':
        lines.push(`> **${item.who === 'compaction' ? 'Compaction summary' : 'Branch summary'}**`, '>');
        for (const l of item.text.trim().split('\n')) lines.push(`> ${l}`.trimEnd());
        lines.push('');
        break;
      case 'model':
      case 'thinking':
        lines.push(`*${item.who}: ${item.text}*`, '');
        break;
      default: {
        const f = fence(item.text);
        lines.push(`### ${item.who}`, '', f, item.text, f, '');
      }
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

/** The active branch as a session file of its own: the header, then the branch's entries. */
function branchFile(manager) {
  const lines = [manager.getHeader(), ...manager.getBranch()].map((e) => JSON.stringify(e));
  return `${lines.join('\n')}\n`;
}

module.exports = {
  usage: 'export <session> [--format md|jsonl] [-o FILE]',
  summary: 'the active branch as Markdown, or as a standalone session file',
  help: [
    ['--format md|jsonl', 'md (default): user and assistant text, tools folded; jsonl: a session file'],
    ['-o, --output FILE', 'write to FILE instead of stdout'],
  ],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: { format: { type: 'string', short: 'f' }, output: { type: 'string', short: 'o' } },
  async run(values, [arg]) {
    const format = values.format ?? 'md';
    if (format !== 'md' && format !== 'jsonl') throw out.usageError(`export: --format is md or jsonl, not '${format}'`);
    const ctx = sessions.context(values);
    const manager = sessions.openSession(await sessions.resolveSession(arg, ctx), ctx);
    const text = format === 'md' ? markdown(manager) : branchFile(manager);
    if (values.output) {
      try {
        fs.writeFileSync(values.output, text);
      } catch (error) {
        throw new out.CliError(error.message);
      }
    } else {
      process.stdout.write(text);
    }
    return 0;
  },
};
