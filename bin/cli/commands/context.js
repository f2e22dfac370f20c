'use strict';
const out = require('../output.js');
const sessions = require('../sessions.js');
const { describeMessage } = require('../render.js');

module.exports = {
  usage: 'context <session> [--json]',
  summary: 'what the model sees: buildSessionContext() summarized, model and thinking level',
  help: [['--json', 'buildSessionContext()']],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: { json: { type: 'boolean' } },
  async run(values, [arg]) {
    const ctx = sessions.context(values);
    const manager = sessions.openSession(await sessions.resolveSession(arg, ctx), ctx);
    const context = manager.buildSessionContext();
    if (values.json) {
      out.printJson(context);
      return 0;
    }
    const paint = out.painter();
    const width = out.outputWidth();
    const counts = new Map();
    for (const m of context.messages) counts.set(m.role, (counts.get(m.role) ?? 0) + 1);
    const model = context.model ? `${context.model.provider}/${context.model.modelId}` : '(default)';
    const lines = [
      `${paint.bold('model')}     ${model}`,
      `${paint.bold('thinking')}  ${context.thinkingLevel}`,
      `${paint.bold('messages')}  ${context.messages.length}${counts.size ? ` (${[...counts].map(([r, n]) => `${n} ${r}`).join(', ')})` : ''}`,
    ];
    if (context.messages.length) lines.push('');
    const rows = context.messages.map((m, i) => {
      const item = m.role === 'compactionSummary' || m.role === 'branchSummary' ? { text: m.summary ?? '', calls: [] } : describeMessage(m);
      const calls = item.calls.length ? ` → ${item.calls.join(', ')}` : '';
      return [String(i + 1), m.role, out.oneLine(item.text) + calls];
    });
    if (rows.length) lines.push(out.table(rows, [{ title: '#', align: 'right', colour: 'dim' }, { title: 'ROLE' }, { title: 'TEXT', flex: true }], { width, paint }));
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
