'use strict';
const guard = require('../file-guard.js');
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

/** Where -o may write: never over a pi session nor the session exported; another file only when the user says so. */
async function outputDecision(output, source, values, ctx) {
  const decision = guard.judgeOutput(output, { protect: [source], sessionDir: ctx.sessionDir });
  if (decision.action === 'refuse') throw out.usageError(`export: ${decision.path} ${decision.reason}; nothing written`);
  if (decision.action !== 'replace' || values.force) return decision;
  if (!process.stdin.isTTY) {
    throw out.usageError(`export: ${decision.path} exists (not a pi session file); add --force to replace it; nothing written`);
  }
  if (!(await out.ask(`Replace ${decision.path}?`))) throw new out.CliError('export: nothing written');
  return decision;
}

module.exports = {
  usage: 'export <session> [--format md|jsonl] [-o FILE]',
  summary: 'the active branch as Markdown, or as a standalone session file',
  details:
    '-o never replaces a pi session file nor the session exported. Another existing file is\n' +
    'replaced only with --force (on a terminal, export asks). A FIFO or a device such as\n' +
    '/dev/stdout is written into, not replaced.',
  help: [
    ['--format md|jsonl', 'md (default): user and assistant text, tools folded; jsonl: a session file'],
    ['-o, --output FILE', 'write to FILE instead of stdout'],
    ['--force', 'replace FILE if it exists and is not a pi session file'],
  ],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: { format: { type: 'string', short: 'f' }, output: { type: 'string', short: 'o' }, force: { type: 'boolean' } },
  async run(values, [arg]) {
    const format = values.format ?? 'md';
    if (format !== 'md' && format !== 'jsonl') throw out.usageError(`export: --format is md or jsonl, not '${format}'`);
    if (values.force && values.output === undefined) throw out.usageError('export: --force is for -o FILE');
    const ctx = sessions.context(values);
    const source = await sessions.resolveSession(arg, ctx);
    const manager = sessions.openSession(source, ctx);
    const text = format === 'md' ? markdown(manager) : branchFile(manager);
    if (values.output !== undefined) {
      const decision = await outputDecision(values.output, source, values, ctx);
      try {
        guard.writeOutput(decision, text);
      } catch (error) {
        if (error.code === 'EEXIST') throw out.usageError(`export: ${decision.path} appeared meanwhile; nothing written`);
        throw error.code === guard.NOT_A_SESSION ? error : new out.CliError(error.message);
      }
    } else {
      process.stdout.write(text);
    }
    return 0;
  },
};
