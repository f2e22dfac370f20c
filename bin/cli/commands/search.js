'use strict';
const { searchSessions, recallSessionOf } = require('../../../index.js');
const out = require('../output.js');
const sessions = require('../sessions.js');
const { printSessions } = require('./ls.js');

const SORTS = ['relevance', 'recent', 'threaded'];

module.exports = {
  usage: 'search <query> [--all] [--sort S] [--named] [--json]',
  summary: "search sessions as pi's /resume does",
  details:
    'Words match names, ids, message text and the cwd; "quoted phrases" match as written;\n' +
    're:<pattern> is a JavaScript regular expression (case-insensitive).\n' +
    'Exit status: 0 found, 1 nothing found, 2 bad usage.',
  help: [
    ['--all', 'every project, not only the current one'],
    ['--sort S', 'relevance (default), recent or threaded, as in /resume'],
    ['--named', 'named sessions only'],
    ['--limit N', 'the first N results only'],
    ['--json', '{ sessions, truncated }, sessions as the session_search tool lists them'],
  ],
  positionals: { min: 1, max: Infinity, name: '<query>' },
  options: {
    all: { type: 'boolean' },
    sort: { type: 'string' },
    named: { type: 'boolean' },
    limit: { type: 'string', short: 'n' },
    json: { type: 'boolean' },
  },
  async run(values, positionals) {
    const query = positionals.join(' ');
    const sort = values.sort ?? 'relevance';
    if (!SORTS.includes(sort)) throw out.usageError(`search: --sort must be one of ${SORTS.join(', ')}`);
    const limit = out.intOption(values, 'limit');
    const ctx = sessions.context(values);
    const bar = out.progress('Searching sessions');
    let found;
    try {
      const options = {
        cwd: values.all ? undefined : ctx.cwd,
        sessionDir: ctx.sessionDir,
        sort,
        nameFilter: values.named ? 'named' : 'all',
        onProgress: bar.live ? (done, total) => bar.update(done, total) : undefined,
        // Nothing printed shows the message text.
        allMessagesText: false,
      };
      found = await searchSessions(query, options);
    } finally {
      bar.done();
    }
    const truncated = limit !== undefined && found.length > limit;
    if (truncated) found = found.slice(0, limit);
    if (values.json) {
      out.printJson({ sessions: found.map(recallSessionOf), truncated });
      return found.length > 0 ? 0 : 1;
    }
    if (found.length === 0) {
      process.stderr.write(`no sessions match${values.all ? '' : ' in this project (--all for every project)'}\n`);
      return 1;
    }
    printSessions(found, values.all);
    return 0;
  },
};
