'use strict';
const out = require('../output.js');
const sessions = require('../sessions.js');

/** The sessions as a table: modified, messages, (project), name or first message, short id. */
function printSessions(list, all) {
  const now = Date.now();
  const shown = out.widestFlex();
  const columns = [
    { title: 'MODIFIED', colour: 'dim' },
    { title: 'MSGS', align: 'right' },
    ...(all ? [{ title: 'PROJECT', colour: 'blue' }] : []),
    { title: 'NAME / FIRST MESSAGE', flex: true },
    { title: 'ID', colour: 'cyan' },
  ];
  const rows = list.map((s) => [
    out.relativeTime(s.modified, now),
    String(s.messageCount),
    ...(all ? [s.cwd] : []),
    s.name ? s.name : out.oneLine(s.firstMessage, shown),
    s.id.slice(0, 8),
  ]);
  process.stdout.write(`${out.table(rows, columns)}\n`);
}

module.exports = {
  printSessions,
  usage: 'ls [--all] [--limit N] [--json]',
  summary: 'list sessions, newest first',
  help: [
    ['--all', 'every project, not only the current one'],
    ['--limit N', 'the newest N only'],
    ['--json', 'the SessionInfo[] of SessionManager.list / listAll'],
  ],
  options: { all: { type: 'boolean' }, limit: { type: 'string', short: 'n' }, json: { type: 'boolean' } },
  async run(values) {
    const ctx = sessions.context(values);
    const limit = out.intOption(values, 'limit');
    // The table shows no message text: only --json needs allMessagesText.
    const options = { texts: Boolean(values.json) };
    let list = values.all ? await sessions.listEvery(ctx, options) : await sessions.listCurrent(ctx, options);
    if (limit !== undefined) list = list.slice(0, limit);
    if (values.json) {
      out.printJson(list);
      return 0;
    }
    if (list.length === 0) {
      process.stderr.write(`no sessions${values.all ? '' : ' in this project (--all for every project)'}\n`);
      return 0;
    }
    printSessions(list, values.all);
    return 0;
  },
};
