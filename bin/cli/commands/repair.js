'use strict';
const { repairSession } = require('../../../index.js');
const out = require('../output.js');
const sessions = require('../sessions.js');
const { findingLines } = require('./doctor.js');

module.exports = {
  usage: 'repair <session> [--dry-run] [--json]',
  summary: 'print the plan, then apply only the safe repairs (the original is kept as .bak-<time>)',
  details:
    'Only a pi session file is repaired (its first entry is a session header, or it is a\n' +
    "<timestamp>_<id>.jsonl file in pi's session folders); anything else is refused with exit 2.",
  help: [
    ['--dry-run', 'print the plan only'],
    ['--json', 'the plan and what was done (repairSession result)'],
  ],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: { 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } },
  async run(values, [arg]) {
    const ctx = sessions.context(values);
    const file = await sessions.resolveSession(arg, ctx);
    const dryRun = Boolean(values['dry-run']);
    // Refuses what is not a pi session (exit 2), dry run or not.
    const result = repairSession(file, { dryRun, sessionDir: ctx.sessionDir });
    if (values.json) {
      out.printJson(result);
      return 0;
    }
    const paint = out.painter();
    const width = out.outputWidth();
    const lines = [paint.bold(file)];
    if (result.findings.length === 0) {
      lines.push('  nothing to repair');
    } else {
      lines.push(...findingLines(result.findings, paint, width));
      const kept = result.findings.filter((f) => !f.repair).length;
      lines.push('');
      if (result.actions.length === 0) lines.push('no safe repair for these: the file is left as it is');
      else if (dryRun) lines.push(`would apply ${result.actions.length} repair${result.actions.length > 1 ? 's' : ''} (dry run: nothing written)`);
      else lines.push(`${paint.green(`applied ${result.actions.length} repair${result.actions.length > 1 ? 's' : ''}`)}; the original is kept as ${result.backup}`);
      if (kept && result.actions.length) lines.push(`${kept} finding${kept > 1 ? 's' : ''} left as ${kept > 1 ? 'they are' : 'it is'} (no safe repair)`);
      if (result.after && !result.after.opensInReference) lines.push(paint.red('pi still cannot open the file'));
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  },
};
