'use strict';
const out = require('../output.js');
const sessions = require('../sessions.js');
const { getSessionStats, getUsageCostBreakdown, getInheritedUsage, usageReport } = require('../../../index.js');

const GROUPS = ['day', 'week', 'month', 'model', 'project', 'session'];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const tokens = (n) => (typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US') : String(n));
const dollars = (n) => (typeof n === 'number' && Number.isFinite(n) ? `$${n.toFixed(4)}` : String(n));

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

function checkOptions(values) {
  if (values.by !== undefined && !GROUPS.includes(values.by)) {
    throw out.usageError(`--by takes ${GROUPS.join(', ')}, not '${values.by}'`);
  }
  for (const name of ['since', 'until']) {
    const v = values[name];
    if (v !== undefined && !DATE.test(v)) throw out.usageError(`--${name} takes a date as YYYY-MM-DD, not '${v}'`);
  }
}

function sessionStats(file) {
  const stats = getSessionStats(file);
  const rows = [
    ['session', stats.sessionId],
    ['file', stats.sessionFile ?? ''],
    ['messages', `${stats.totalMessages} (${stats.userMessages} user, ${stats.assistantMessages} assistant, ${plural(stats.toolResults, 'tool result')})`],
    ['tool calls', String(stats.toolCalls)],
    ['input', tokens(stats.tokens.input)],
    ['output', tokens(stats.tokens.output)],
    ['cache read', tokens(stats.tokens.cacheRead)],
    ['cache write', tokens(stats.tokens.cacheWrite)],
    ['total tokens', tokens(stats.tokens.total)],
    ['cost', dollars(stats.cost)],
  ];
  // A fork's figures hold its parent's calls too (as pi's /session shows them); reports
  // across sessions count those in the parent, so say how much that is.
  const inherited = getInheritedUsage(file);
  if (inherited?.parentFound) {
    rows.push([
      'inherited',
      `${dollars(inherited.cost)}, ${tokens(inherited.totalTokens)} tokens in ${plural(inherited.entries, 'call')} copied from its parent (counted there across sessions)`,
    ]);
  } else if (inherited) {
    rows.push(['inherited', 'unknown: its parent session is gone, so reports across sessions count all of it here']);
  }
  // The file is never cut: it is what one copies from here.
  let text = out.table(rows, [{ title: '', colour: 'dim' }, { title: '' }], { header: false });
  const breakdown = getUsageCostBreakdown(file);
  if (breakdown.length > 0) {
    const columns = [
      { title: 'MODEL', flex: true },
      { title: 'TOKENS', align: 'right' },
      { title: 'COST', align: 'right' },
    ];
    text += `\n\n${out.table(breakdown.map((b) => [b.key, tokens(b.tokens), dollars(b.cost)]), columns)}`;
  }
  return { stats, text };
}

// A bar of cost beside each row of a report by day, week or month, on a terminal:
// this many columns at most, and none when fewer fit beside the table.
const TIME_GROUPS = ['day', 'week', 'month'];
const BAR_MIN = 10;
const BAR_MAX = 40;

function reportTable(report, groupBy, { bars = false, width = out.outputWidth(), paint = out.painter() } = {}) {
  const columns = [
    { title: groupBy.toUpperCase(), flex: true, colour: groupBy === 'model' || groupBy === 'project' ? 'blue' : undefined },
    { title: 'INPUT', align: 'right' },
    { title: 'OUTPUT', align: 'right' },
    { title: 'CACHE READ', align: 'right' },
    { title: 'CACHE WRITE', align: 'right' },
    { title: 'TOTAL', align: 'right' },
    { title: 'COST', align: 'right' },
    { title: 'SESSIONS', align: 'right' },
  ];
  const cells = (label, r) => [
    label,
    tokens(r.input),
    tokens(r.output),
    tokens(r.cacheRead),
    tokens(r.cacheWrite),
    tokens(r.totalTokens),
    dollars(r.cost),
    String(r.sessions),
  ];
  const rows = [...report.rows.map((r) => cells(r.key, r)), cells('total', report.totals)];
  const text = out.table(rows, columns, { width, paint });
  if (!bars || !TIME_GROUPS.includes(groupBy)) return text;
  // The bars take what the whole table leaves: they go before any of it is cut.
  let tableWidth = 2 * (columns.length - 1);
  columns.forEach((c, i) => {
    tableWidth += rows.reduce((w, row) => Math.max(w, out.displayWidth(row[i])), out.displayWidth(c.title));
  });
  const barWidth = Math.min(BAR_MAX, width - tableWidth - 2);
  if (!(barWidth >= BAR_MIN)) return text;
  // Scaled to the row that cost most; a cost that is not a number has no bar.
  const most = report.rows.reduce((m, r) => (Number.isFinite(r.cost) && r.cost > m ? r.cost : m), 0);
  if (most <= 0) return text;
  const lines = text.split('\n');
  // Every line of the table is as wide as the next: its last column is aligned right.
  report.rows.forEach((r, i) => {
    const bar = out.hbar(r.cost / most, barWidth);
    if (bar) lines[i + 1] += `  ${paint.green(bar)}`;
  });
  return lines.join('\n');
}

module.exports = {
  usage: 'stats [<session>] [--all] [--by GROUP] [--json]',
  summary: "one session's tokens and cost, or usage across sessions",
  details:
    'With a <session>: its totals as pi\'s /session counts them, and its cost by model\n' +
    '(a fork: how much of it was copied from its parent).\n' +
    'Without one: usage of this project\'s sessions (--all: every project), one row per\n' +
    '--by group (default model), entries counted at their own time in --tz, a fork\'s\n' +
    'copies of its parent\'s calls counted once, in the parent. On a terminal,\n' +
    'a report by day, week or month draws each row\'s cost as a bar beside it.',
  help: [
    ['--all', 'every project, not only the current one'],
    ['--by GROUP', 'day, week, month, model (default), project or session'],
    ['--since DATE', 'entries on or after this local date (YYYY-MM-DD)'],
    ['--until DATE', 'entries on or before this local date (YYYY-MM-DD)'],
    ['--tz ZONE', 'the IANA time zone of days, weeks and dates (default the local one)'],
    ['--json', 'getSessionStats() of the session, or the usageReport() result'],
  ],
  options: {
    all: { type: 'boolean' },
    by: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    tz: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: { name: '<session>', min: 0, max: 1 },
  async run(values, positionals) {
    checkOptions(values);
    const ctx = sessions.context(values);
    if (positionals.length === 1) {
      const reportOnly = ['all', 'by', 'since', 'until', 'tz'].filter((k) => values[k] !== undefined);
      if (reportOnly.length > 0) {
        throw out.usageError(`stats: --${reportOnly[0]} is for a report across sessions, not with a <session>`);
      }
      const file = await sessions.resolveSession(positionals[0], ctx);
      sessions.regularFile(file);
      const { stats, text } = sessionStats(file);
      if (values.json) out.printJson(stats);
      else process.stdout.write(`${text}\n`);
      return 0;
    }
    const groupBy = values.by ?? 'model';
    const bar = out.progress('Reading sessions');
    let report;
    try {
      report = await usageReport({
        cwd: values.all ? undefined : ctx.cwd,
        sessionDir: ctx.sessionDir,
        groupBy,
        since: values.since,
        until: values.until,
        timezone: values.tz,
        onProgress: bar.live ? (done, total) => bar.update(done, total) : undefined,
      });
    } catch (error) {
      // Impossible dates and unknown zones are the user's input, not a failure.
      if (error instanceof TypeError || error instanceof RangeError) throw out.usageError(`stats: ${error.message}`);
      throw error;
    } finally {
      bar.done();
    }
    if (values.json) {
      out.printJson(report);
      return 0;
    }
    if (report.rows.length === 0) {
      process.stderr.write(`no usage${values.all ? '' : ' in this project (--all for every project)'}\n`);
      return 0;
    }
    process.stdout.write(`${reportTable(report, groupBy, { bars: out.chartsEnabled() })}\n`);
    return 0;
  },
};
