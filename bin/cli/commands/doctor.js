'use strict';
const { checkSession } = require('../../../index.js');
const out = require('../output.js');
const sessions = require('../sessions.js');

/** One file's findings, as lines: `  line 12  torn-last-line  message  (repair: ...)`. */
function findingLines(findings, paint, width) {
  const rows = findings.map((f) => [f.line ? `line ${f.line}` : 'file', f.problem, f.message + (f.repair ? `  (repair: ${f.repair})` : '')]);
  return out
    .table(rows, [{ title: '', colour: 'dim' }, { title: '', colour: 'yellow' }, { title: '', flex: true }], { paint, width: width - 2, header: false })
    .split('\n')
    .map((l) => `  ${l}`);
}

function checkFile(file) {
  try {
    return checkSession(file);
  } catch (error) {
    return { path: file, error: error.message };
  }
}

module.exports = {
  usage: 'doctor [<session> | --all] [--json]',
  summary: 'check session files (never writes): what is wrong, with line numbers',
  details: 'Without a session, every file of the current project. Exit 1 when anything is found.',
  help: [
    ['--all', "every project's files"],
    ['--json', 'the findings (checkSession results)'],
  ],
  positionals: { min: 0, max: 1, name: '<session>' },
  options: { all: { type: 'boolean' }, json: { type: 'boolean' } },
  findingLines,
  async run(values, [arg]) {
    const ctx = sessions.context(values);
    if (arg !== undefined && values.all) throw out.usageError('doctor: a session or --all, not both');
    const files = arg !== undefined ? [await sessions.resolveSession(arg, ctx)] : sessions.sessionFiles(ctx, values.all);
    const bar = out.progress('Checking sessions');
    const reports = [];
    for (const [i, file] of files.entries()) {
      bar.update(i, files.length);
      reports.push(checkFile(file));
    }
    bar.done();
    const bad = reports.filter((r) => r.error || r.findings.length > 0);
    if (values.json) {
      out.printJson(arg !== undefined ? reports[0] : reports);
    } else {
      const paint = out.painter();
      const width = out.outputWidth();
      const lines = [];
      for (const r of bad) {
        if (r.error) {
          lines.push(`${paint.bold(r.path)}`, `  ${paint.red('cannot read')}: ${r.error}`);
          continue;
        }
        const state = r.opensInReference ? paint.yellow('opens in pi') : paint.red('pi cannot open it');
        lines.push(`${paint.bold(r.path)}  ${state}${r.repairable ? paint.dim('  (pi-sessions repair can fix some of it)') : ''}`);
        lines.push(...findingLines(r.findings, paint, width));
      }
      const summary = `${reports.length} file${reports.length === 1 ? '' : 's'} checked, ${bad.length === 0 ? paint.green('no problems') : paint.red(`${bad.length} with problems`)}`;
      if (lines.length) lines.push('');
      lines.push(summary);
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    if (arg !== undefined && reports[0].error) throw new out.CliError(reports[0].error);
    return bad.length > 0 ? 1 : 0;
  },
};
