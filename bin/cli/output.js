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

/**
 * Charts (bars beside a table) go to a terminal only: a pipe or a file gets the
 * table alone, whatever the colour settings.
 */
function chartsEnabled(stream = process.stdout) {
  return Boolean(stream.isTTY);
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];

/**
 * A horizontal bar of `fraction` (0 to 1) of `width` columns, to an eighth of a
 * column: '' for nothing, a negative or a non-finite fraction; at least an
 * eighth for any positive one.
 */
function hbar(fraction, width) {
  if (!Number.isFinite(fraction) || fraction <= 0 || !(width > 0)) return '';
  const eighths = Math.max(1, Math.round(Math.min(fraction, 1) * width * 8));
  return '█'.repeat(Math.floor(eighths / 8)) + EIGHTHS[eighths % 8];
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
  // By code point, as displayWidth counts: where the first one that does
  // not fit in `width - 1` columns starts.
  let used = 0;
  let end = 0;
  while (end < text.length) {
    const cp = text.codePointAt(end);
    const w = charWidth(cp);
    if (used + w > width - 1) break;
    used += w;
    end += cp > 0xffff ? 2 : 1;
  }
  return `${text.slice(0, end)}…`;
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

/** The most columns a table's flex column gets at `width` (see table). */
function widestFlex(width = outputWidth()) {
  return Math.max(width, 10);
}

/**
 * Rows as aligned columns. `columns`: `{ title, align: 'left'|'right', flex,
 * colour }`; the one `flex` column takes what the width leaves and is cut.
 */
function table(rows, columns, { width = outputWidth(), paint = painter(), header = true } = {}) {
  const count = columns.length;
  const flex = columns.findIndex((c) => c.flex);
  // Each cell measured once, in one flat array; the flex column only up to
  // what it can show.
  const flexCap = widestFlex(width);
  const cells = new Array(rows.length * count);
  const cellWidths = new Float64Array(rows.length * count);
  const widths = columns.map((col) => (header ? displayWidth(col.title) : 0));
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    for (let i = 0; i < count; i++) {
      const text = String(row[i] ?? '');
      const w = displayWidth(text, i === flex ? flexCap : Infinity);
      cells[r * count + i] = text;
      cellWidths[r * count + i] = w;
      if (w > widths[i]) widths[i] = w;
    }
  }
  if (flex !== -1 && width !== Infinity) {
    const others = widths.reduce((sum, w, i) => (i === flex ? sum : sum + w), 0) + 2 * (count - 1);
    widths[flex] = Math.max(10, Math.min(widths[flex], width - others));
  }
  const line = (values, offset, colour, measured) => {
    let text = '';
    for (let i = 0; i < count; i++) {
      const col = columns[i];
      let cut = values[offset + i];
      let w = measured ? measured[offset + i] : displayWidth(cut);
      if (i === flex && w > widths[i]) {
        cut = truncate(cut, widths[i]);
        w = displayWidth(cut);
      }
      const spaces = i === count - 1 && col.align !== 'right' ? '' : ' '.repeat(Math.max(0, widths[i] - w));
      const padded = col.align === 'right' ? spaces + cut : cut + spaces;
      if (i > 0) text += '  ';
      const paintWith = colour ?? col.colour;
      text += paintWith ? paint[paintWith](padded) : padded;
    }
    return text.trimEnd();
  };
  let out = header ? line(columns.map((c) => c.title), 0, 'bold') : '';
  for (let r = 0; r < rows.length; r++) {
    const row = line(cells, r * count, undefined, cellWidths);
    out = r === 0 && !header ? row : `${out}\n${row}`;
  }
  return out;
}

const RELATIVE_STEPS = [
  [60, 'm', 60],
  [3600, 'h', 24],
  [86400, 'd', 7],
  [604800, 'w', 5],
];

/** `3m ago`, `2h ago`, `5d ago` ... from a Date, relative to `now`. */
function relativeTime(date, now = Date.now()) {
  const t = date instanceof Date ? date.getTime() : new Date(date).getTime();
  if (Number.isNaN(t)) return '?';
  const seconds = Math.round((now - t) / 1000);
  if (seconds < 0) return 'in the future';
  if (seconds < 60) return 'just now';
  for (const [unit, suffix, limit] of RELATIVE_STEPS) {
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

/** A yes/no question on the terminal (stderr), no by default. */
function ask(question) {
  return new Promise((resolve) => {
    const rl = require('readline').createInterface({ input: process.stdin, output: process.stderr });
    rl.question(`${question} [y/N] `, (answer) => {
      rl.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
}

module.exports = {
  ask,
  CliError,
  intOption,
  usageError,
  colourEnabled,
  chartsEnabled,
  hbar,
  painter,
  outputWidth,
  widestFlex,
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
