'use strict';
const { grepSessions, recallHitOf, GREP_FIELDS, DEFAULT_GREP_FIELDS } = require('../../../index.js');
const out = require('../output.js');
const sessions = require('../sessions.js');

const DEFAULT_CONTEXT = 60;
const TITLE_WIDTH = 72;
/** Pieces of context a line shows; the rest are counted. */
const MAX_PIECES = 3;
/** Fields a role does not already say. */
const SHOWN_FIELDS = ['thinking', 'toolCall'];
const DAY_MS = 24 * 60 * 60 * 1000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A grep failure: exit status 2, as grep's. */
const failure = (message) => new out.CliError(message, 2);

function fieldsOption(value) {
  if (value === undefined) return DEFAULT_GREP_FIELDS;
  const fields = value.split(',').map((f) => f.trim()).filter(Boolean);
  const unknown = fields.find((f) => !GREP_FIELDS.includes(f));
  if (unknown !== undefined || fields.length === 0) {
    throw out.usageError(`grep: --in takes fields among ${GREP_FIELDS.join(', ')}${unknown ? `, not '${unknown}'` : ''}`);
  }
  return fields;
}

/** A date option as a time; a bare date for --until takes in its whole day (UTC). */
function dateOption(values, name) {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const time = new Date(raw).getTime();
  if (Number.isNaN(time)) throw out.usageError(`grep: --${name} takes a date (2024-05-01, 2024-05-01T12:00Z ...), not '${raw}'`);
  return name === 'until' && DATE_ONLY.test(raw) ? time + DAY_MS - 1 : time;
}

/** Whitespace (newlines too) as single spaces. */
const flat = (text) => text.replace(/\s+/g, ' ');

/** Does not end between the two halves of a surrogate pair. */
function unitBoundary(text, i) {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff && i > 0 ? i - 1 : i;
}

/**
 * `context` characters around each range, ranges close together in one
 * piece, each match painted; at most MAX_PIECES pieces, the rest counted.
 */
function snippet(text, ranges, context, paint) {
  const pieces = [];
  let k = 0;
  while (k < ranges.length) {
    const start = unitBoundary(text, Math.max(0, ranges[k][0] - context));
    let parts = '';
    let at = start;
    let last = k;
    while (last < ranges.length && (last === k || ranges[last][0] - ranges[last - 1][1] <= 2 * context)) {
      const [s, e] = ranges[last];
      parts += flat(text.slice(at, s)) + paint.red(paint.bold(flat(text.slice(s, e))));
      at = e;
      last++;
    }
    const end = unitBoundary(text, Math.min(text.length, at + context));
    parts += flat(text.slice(at, end));
    pieces.push(`${start > 0 ? '…' : ''}${parts}${end < text.length ? '…' : ''}`);
    k = last;
  }
  const more = pieces.length > MAX_PIECES ? ` (+${pieces.length - MAX_PIECES} more)` : '';
  return pieces.slice(0, MAX_PIECES).join(' ') + more;
}

function entryTime(timestamp) {
  const date = new Date(typeof timestamp === 'string' || typeof timestamp === 'number' ? timestamp : NaN);
  if (Number.isNaN(date.getTime())) return '-';
  const p = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}`;
}

module.exports = {
  usage: 'grep <pattern> [--all] [-s] [-C N] [--json]',
  summary: 'find the messages that match, with their context',
  details:
    'The pattern matches as written, ignoring case (-s: case-sensitive); re:<pattern> is a\n' +
    'JavaScript regular expression. Fields: text (user and assistant text, the default with\n' +
    'toolResult and summary), toolResult, summary, thinking, toolCall, custom.\n' +
    'Exit status: 0 found, 1 nothing found, 2 bad usage or failure.',
  help: [
    ['--all', 'every project, not only the current one'],
    ['-s, --case-sensitive', 'match case'],
    ['--in FIELDS', `comma-separated among ${GREP_FIELDS.join(',')}`],
    ['--since D', 'entries at or after D (a date or date-time)'],
    ['--until D', 'entries at or before D (a bare date: to its end)'],
    ['-C N', `characters of context around a match (default ${DEFAULT_CONTEXT})`],
    ['--limit N', 'stop after N matching blocks'],
    ['--json', 'a line per match, as found: the session_search hit and field, blockIndex, text, ranges'],
  ],
  positionals: { min: 1, max: 1, name: '<pattern>' },
  options: {
    all: { type: 'boolean' },
    'case-sensitive': { type: 'boolean', short: 's' },
    in: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    context: { type: 'string', short: 'C' },
    limit: { type: 'string', short: 'n' },
    json: { type: 'boolean' },
  },
  async run(values, [pattern]) {
    const fields = fieldsOption(values.in);
    const since = dateOption(values, 'since');
    const until = dateOption(values, 'until');
    const context = out.intOption(values, 'context') ?? DEFAULT_CONTEXT;
    const limit = out.intOption(values, 'limit');
    if (limit === 0) return 1;
    const ctx = sessions.context(values);
    const cwd = values.all ? undefined : ctx.cwd;
    const paint = out.painter();
    // Headers show what `ls` shows of a session, and --json its name: its listing,
    // without texts (grepSessions lists the same folder again, from the listing's memo).
    const infos = new Map();
    const listing = await (values.all ? sessions.listEvery : sessions.listCurrent)(ctx, { texts: false, label: 'Listing sessions' });
    for (const s of listing) infos.set(s.path, s);
    const now = Date.now();
    let lastPath;
    let found = 0;
    // When the reader is slower than the scan (a pipe), the scan waits for
    // it: its output is not queued here.
    const write = (text) => (process.stdout.write(text) ? undefined : new Promise((resolve) => process.stdout.once('drain', resolve)));
    const print = (match) => {
      found++;
      if (values.json) {
        const { field, blockIndex, text, ranges } = match;
        return write(`${JSON.stringify({ ...recallHitOf(match, infos.get(match.path)), field, blockIndex, text, ranges })}\n`);
      }
      const lines = [];
      if (match.path !== lastPath) {
        const info = infos.get(match.path);
        const title = info ? out.truncate(out.oneLine(info.name || info.firstMessage, TITLE_WIDTH), TITLE_WIDTH) : match.path;
        const when = info ? out.relativeTime(info.modified, now) : '';
        if (lastPath !== undefined) lines.push('');
        lines.push(
          [paint.cyan(String(match.sessionId).slice(0, 8)), paint.dim(when), paint.bold(title), values.all ? paint.blue(match.cwd) : '']
            .filter(Boolean)
            .join('  '),
        );
        lastPath = match.path;
      }
      const where = `${paint.yellow(String(match.entryId ?? '-'))}  ${paint.dim(entryTime(match.timestamp))}  ${paint.magenta(String(match.role))}${SHOWN_FIELDS.includes(match.field) ? paint.dim(`/${match.field}`) : ''}`;
      lines.push(`  ${where}  ${snippet(match.text, match.ranges, context, paint)}`);
      return write(`${lines.join('\n')}\n`);
    };
    try {
      await grepSessions(pattern, {
        cwd,
        sessionDir: ctx.sessionDir,
        fields,
        caseSensitive: Boolean(values['case-sensitive']),
        since,
        until,
        limit,
        onMatch: print,
        collect: false,
      });
    } catch (error) {
      throw failure(`grep: ${error.message}`);
    }
    return found > 0 ? 0 : 1;
  },
};
