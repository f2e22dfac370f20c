'use strict';
const { recallSearch } = require('../../../index.js');
const out = require('../output.js');
const sessions = require('../sessions.js');

const ROLES = ['user', 'assistant', 'toolCall', 'toolResult'];

/**
 * A recall error as the command line reports it: a bad option is a usage error (2), a
 * path that is not a pi session too (main.js), anything else (no such session or
 * entry, an ambiguous id prefix) a failure (1).
 */
function recallFailure(command, error) {
  if (error instanceof TypeError) return out.usageError(`${command}: ${error.message}`);
  return error;
}

module.exports = {
  recallFailure,
  usage: 'recall [<query>] [--all] [--role R] [--file PATH] [--json]',
  summary: 'find messages across sessions as the session_search tool does (no query: list sessions)',
  details:
    'The query matches as written, ignoring case, in user and assistant text, tool calls, tool\n' +
    'results, summaries and custom messages; newest first, a conversation copied into forks\n' +
    'once (where first written). D is a date (2025-05-01) or a number of days ago.\n' +
    'Exit status: 0 found, 1 nothing found (or no such session), 2 bad usage.',
  help: [
    ['--all', 'every project, not only the current one'],
    ['--role R', `only messages of ${ROLES.join(', ')}`],
    ['--after D', 'messages at or after D (sessions active since, without a query)'],
    ['--before D', 'messages at or before D (a bare date: to its end)'],
    ['--file PATH', 'only sessions whose tools read or wrote PATH'],
    ['--session S', 'only this session (an id, an id prefix or a path)'],
    ['--limit N', 'hits (or sessions) at most (default 20, at most 500)'],
    ['--json', '{ hits, sessions?, truncated }, as the tool\'s details'],
  ],
  positionals: { min: 0, max: Infinity, name: '<query>' },
  options: {
    all: { type: 'boolean' },
    role: { type: 'string' },
    after: { type: 'string' },
    before: { type: 'string' },
    file: { type: 'string' },
    session: { type: 'string' },
    limit: { type: 'string', short: 'n' },
    json: { type: 'boolean' },
  },
  async run(values, positionals) {
    const ctx = sessions.context(values);
    const query = positionals.join(' ');
    let result;
    try {
      result = await recallSearch({
        query,
        scope: values.all ? 'all' : 'project',
        cwd: ctx.cwd,
        sessionDir: ctx.sessionDir,
        role: values.role,
        after: values.after,
        before: values.before,
        file: values.file,
        session: values.session,
        limit: out.intOption(values, 'limit'),
      });
    } catch (error) {
      throw recallFailure('recall', error);
    }
    const found = result.sessions !== undefined ? result.sessions.length : result.hits.length;
    if (values.json) {
      const { hits, sessions: listed, truncated } = result;
      out.printJson(listed !== undefined ? { hits, sessions: listed, truncated } : { hits, truncated });
    } else {
      process.stdout.write(`${result.text}\n`);
    }
    return found > 0 ? 0 : 1;
  },
};
