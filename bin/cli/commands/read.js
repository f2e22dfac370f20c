'use strict';
const { recallRead } = require('../../../index.js');
const out = require('../output.js');
const sessions = require('../sessions.js');
const { recallFailure } = require('./recall.js');

module.exports = {
  usage: 'read <session> [--around ID | --from ID | --last N] [--json]',
  summary: 'a page of the branch as text for a model, as the session_read tool shows it',
  details:
    'User and assistant text, a line per tool call, tool results cut to their first lines,\n' +
    'compaction and branch summaries, everything before a compaction too; the page says what it\n' +
    'left out and where the next one starts (--from). <session> may also be a path.\n' +
    'Exit status: 0 shown, 1 no such session or entry (or an id prefix of several sessions),\n' +
    '2 bad usage or not a pi session file.',
  help: [
    ['--around ID', 'a page around this entry'],
    ['--from ID|start', 'a page from this entry, or from the first (the default)'],
    ['--last N', 'the last N messages of the branch'],
    ['--limit N', 'messages a page shows (default 50, at most 500)'],
    ['--leaf ID', "the branch to this entry (default the session's leaf)"],
    ['--thinking', 'show thinking blocks'],
    ['--json', '{ sessionId, sessionFile, entries, truncated, next }, as the tool\'s details'],
  ],
  positionals: { min: 1, max: 1, name: '<session>' },
  options: {
    around: { type: 'string' },
    from: { type: 'string' },
    last: { type: 'string' },
    limit: { type: 'string', short: 'n' },
    leaf: { type: 'string' },
    thinking: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(values, [session]) {
    const ctx = sessions.context(values);
    let result;
    try {
      result = await recallRead({
        session,
        cwd: ctx.cwd,
        sessionDir: ctx.sessionDir,
        around: values.around,
        from: values.from,
        last: out.intOption(values, 'last'),
        limit: out.intOption(values, 'limit'),
        leaf: values.leaf,
        thinking: Boolean(values.thinking),
      });
    } catch (error) {
      throw recallFailure('read', error);
    }
    if (values.json) {
      const { sessionId, sessionFile, entries, truncated, next } = result;
      out.printJson({ sessionId, sessionFile, entries, truncated, next });
      return 0;
    }
    process.stdout.write(`${result.text}\n`);
    return 0;
  },
};
