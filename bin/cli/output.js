'use strict';
// Presentation: colour, aligned columns fitted to the terminal, relative
// times, one-line texts and a progress line on stderr.

/** A failure to report as one line on stderr; `exitCode` 2 for usage errors. */
class CliError extends Error {
  constructor(message, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}

const usageError = (message) => new CliError(message, 2);

/** Colour on a terminal only; NO_COLOR turns it off, FORCE_COLOR on. */
function colourEnabled(stream = process.stdout) {
  const force = process.env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (process.env.NO_COLOR) return false;
  return Boolean(stream.isTTY);
}

function painter(stream = process.stdout) {
  const on = colourEnabled(stream);
  const wrap = (open, close) => (text) => (on ? `\x1b[${open}m${text}\x1b[${close}m` : String(text));
  return {
    on,
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    blue: wrap(34, 39),
    magenta: wrap(35, 39),
    cyan: wrap(36, 39),
  };
}

/** Columns to fit: COLUMNS, else the terminal's width, else no limit (a pipe). */
function outputWidth(stream = process.stdout) {
  const fromEnv = Number.parseInt(process.env.COLUMNS ?? '', 10);
  if (Number.isFinite(fromEnv) && fromEnv > 0) return fromEnv;
  if (stream.isTTY && stream.columns) return stream.columns;
  return Infinity;
}

/**
 * Characters a string takes on a terminal (wide East Asian characters count
 * twice); counting stops once past `cap`. By UTF-16 unit, printable ASCII
 * first: a listing measures every first message of 10,000 sessions.
 */
function displayWidth(text, cap = Infinity) {
  let width = 0;
  const n = text.length;
  for (let i = 0; i < n && width <= cap; i++) {
    let cp = text.charCodeAt(i);
    if (cp >= 0x20 && cp < 0x7f) {
      width++;
      continue;
    }
    // A surrogate pair is one code point; a lone surrogate counts alone.
    if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = (cp - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        i++;
      }
    }
    width += charWidth(cp);
  }
  return width;
}

function charWidth(cp) {
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp >= 0x300 && cp <= 0x36f) return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** Cuts `text` to `width` display columns, ending with an ellipsis when cut. */
function truncate(text, width) {
  if (width === Infinity || displayWidth(text, width) <= width) return text;
  if (width <= 0) return '';
  let out = '';
  let used = 0;
  for (const ch of text) {
    const w = charWidth(ch.codePointAt(0));
    if (used + w > width - 1) break;
    out += ch;
    used += w;
  }
  return `${out}…`;
}

function padEnd(text, width) {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)));
}

function padStart(text, width) {
  return ' '.repeat(Math.max(0, width - displayWidth(text))) + text;
}

/**
 * Whitespace runs (newlines included) as one space, trimmed: a text on one
 * line. With `columns`, a long text may come back cut where it certainly
 * shows wider than that many columns: what it shows in them, and that it is
 * wider, stay the same (a listing would otherwise collapse the whole first
 * message of every session to show a line of each).
 */
function oneLine(text, columns = Infinity) {
  const whole = String(text ?? '');
  if (columns !== Infinity) {
    let end = 4 * columns + 64;
    // Not between the halves of a surrogate pair: the head is then the whole
    // text's first code points, its last space perhaps trimmed.
    if (end < whole.length && (whole.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    if (end < whole.length) {
      const head = whole.slice(0, end).replace(WHITESPACE_TO_COLLAPSE, ' ').trim();
      if (displayWidth(head, columns) > columns) return head;
    }
  }
  return whole.replace(WHITESPACE_TO_COLLAPSE, ' ').trim();
}
// Each whitespace run other than a single space: the same result as replacing
// every run, with far fewer replacements in prose.
const WHITESPACE_TO_COLLAPSE = /\s{2,}|[^\S ]/g;

/** The first non-empty line of a text. */
function firstLine(text) {
  const line = String(text ?? '')
    .split('\n')
    .find((l) => l.trim() !== '');
  return (line ?? '').trim();
}

/**
 * Rows as aligned columns. `columns`: `{ title, align: 'left'|'right', flex,
 * colour }`; the one `flex` column takes what the width leaves and is cut.
 */
function table(rows, columns, { width = outputWidth(), paint = painter(), header = true } = {}) {
  const cells = rows.map((row) => row.map((c) => String(c ?? '')));
  const flex = columns.findIndex((c) => c.flex);
  // Each cell measured once; the flex column only up to what it can show
  // (the width it gets is at most max(width, 10)).
  const cap = (i) => (i === flex ? Math.max(width, 10) : Infinity);
  const cellWidths = cells.map((row) => row.map((c, i) => displayWidth(c, cap(i))));
  const widths = columns.map((col, i) => {
    let w = header ? displayWidth(col.title) : 0;
    for (const r of cellWidths) if (r[i] > w) w = r[i];
    return w;
  });
  if (flex !== -1 && width !== Infinity) {
    const others = widths.reduce((sum, w, i) => (i === flex ? sum : sum + w), 0) + 2 * (columns.length - 1);
    widths[flex] = Math.max(10, Math.min(widths[flex], width - others));
  }
  const pad = (text, w, target, start) => {
    const spaces = ' '.repeat(Math.max(0, target - w));
    return start ? spaces + text : text + spaces;
  };
  const line = (values, colour, measured) =>
    values
      .map((value, i) => {
        const col = columns[i];
        let cut = value;
        let w = measured ? measured[i] : displayWidth(value);
        if (i === flex && w > widths[i]) {
          cut = truncate(value, widths[i]);
          w = displayWidth(cut);
        }
        const last = i === values.length - 1;
        const padded = col.align === 'right' ? pad(cut, w, widths[i], true) : last ? cut : pad(cut, w, widths[i], false);
        const paintWith = colour ?? col.colour;
        return paintWith ? paint[paintWith](padded) : padded;
      })
      .join('  ')
      .trimEnd();
  const out = [];
  if (header) out.push(line(columns.map((c) => c.title), 'bold'));
  cells.forEach((row, r) => out.push(line(row, undefined, cellWidths[r])));
  return out.join('\n');
}

/** `3m ago`, `2h ago`, `5d ago` ... from a Date, relative to `now`. */
function relativeTime(date, now = Date.now()) {
  const t = date instanceof Date ? date.getTime() : new Date(date).getTime();
  if (Number.isNaN(t)) return '?';
  const seconds = Math.round((now - t) / 1000);
  if (seconds < 0) return 'in the future';
  if (seconds < 60) return 'just now';
  const steps = [
    [60, 'm', 60],
    [3600, 'h', 24],
    [86400, 'd', 7],
    [604800, 'w', 5],
  ];
  for (const [unit, suffix, limit] of steps) {
    const n = Math.floor(seconds / unit);
    if (n < limit) return `${n}${suffix} ago`;
  }
  const days = Math.floor(seconds / 86400);
  if (days < 365) return `${Math.floor(days / 30)}mo ago`;
  return `${Math.floor(days / 365)}y ago`;
}

function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/**
 * A progress line on stderr while a long scan runs: only when stderr is a
 * terminal, and only once the scan has taken longer than a moment.
 */
function progress(label) {
  const stream = process.stderr;
  // `live`: callers pass an onProgress only then (partial lists cost).
  if (!stream.isTTY) return { live: false, update() {}, done() {} };
  const started = Date.now();
  let shown = false;
  let last = 0;
  return {
    live: true,
    update(done, total) {
      const now = Date.now();
      if (now - started < 250 || now - last < 50) return;
      last = now;
      shown = true;
      const count = total ? `${done}/${total}` : `${done}`;
      stream.write(`\r\x1b[2K${label} ${count}`);
    },
    done() {
      if (shown) stream.write('\r\x1b[2K');
    },
  };
}

/** JSON on stdout, as `JSON.stringify` writes it (Dates as ISO strings). */
function printJson(value) {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** A whole-number option (`--limit 5`), or undefined when not given. */
function intOption(values, name) {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw usageError(`--${name} takes a whole number, not '${raw}'`);
  return n;
}

module.exports = {
  CliError,
  intOption,
  usageError,
  colourEnabled,
  painter,
  outputWidth,
  displayWidth,
  truncate,
  padEnd,
  oneLine,
  firstLine,
  table,
  relativeTime,
  formatBytes,
  progress,
  printJson,
};
