'use strict';
// The text lib/recall.js gives a model: hits as one line each, a page of a session as
// its messages, both within pi's tool-output limits with room for the closing notes.

/** pi's tool-output limits: DEFAULT_MAX_BYTES and DEFAULT_MAX_LINES of its truncation helpers. */
const OUTPUT_MAX_BYTES = 50 * 1024;
const OUTPUT_MAX_LINES = 2000;
/** Kept free for the notes that close a text (what was cut, how to go on). */
const NOTES_BYTES = 2048;
const NOTES_LINES = 16;

/** Characters of context each side of a match in a snippet, as `pi-sessions grep` shows. */
const SNIPPET_CONTEXT = 60;
/** The longest match a snippet shows whole. */
const SNIPPET_MATCH = 200;
const MARK_OPEN = '«';
const MARK_CLOSE = '»';

/** A tool result shows this much of its output. */
const TOOL_RESULT_LINES = 8;
const TOOL_RESULT_CHARS = 1200;
/** A tool call's main argument on its one line. */
const TOOL_ARGUMENT_CHARS = 160;
/** The arguments that say what a tool call is about, most telling first. */
const MAIN_ARGUMENTS = ['command', 'path', 'file_path', 'filePath', 'file', 'pattern', 'query', 'url', 'session', 'name'];

const flat = (text) => text.replace(/\s+/g, ' ');

/** `i` moved back off the low half of a surrogate pair, so a cut there keeps the pair whole. */
function unitBoundary(text, i) {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff && i > 0 ? i - 1 : i;
}

/** At most `max` characters of `text` on one line, `…` where cut. */
function oneLine(text, max) {
  const line = flat(String(text ?? '')).trim();
  return line.length <= max ? line : `${line.slice(0, unitBoundary(line, max - 1))}…`;
}

/**
 * The text around the first of `ranges` in `text`, on one line, each match inside it
 * marked «…», `…` where the text goes on.
 */
function snippet(text, ranges, context = SNIPPET_CONTEXT) {
  const [first] = ranges;
  const start = unitBoundary(text, Math.max(0, first[0] - context));
  let end = unitBoundary(text, Math.min(text.length, Math.min(first[1], first[0] + SNIPPET_MATCH) + context));
  let out = start > 0 ? '…' : '';
  let at = start;
  for (const [s, e] of ranges) {
    if (s >= end) break;
    // A match the window reaches into is shown whole (a long first one up to SNIPPET_MATCH).
    const close = Math.min(e, s + SNIPPET_MATCH);
    out += flat(text.slice(at, s)) + MARK_OPEN + flat(text.slice(s, close)) + MARK_CLOSE;
    at = close;
    end = Math.max(end, close);
  }
  out += flat(text.slice(at, end));
  return end < text.length ? `${out}…` : out;
}

/** `2025-01-02 10:11` (UTC) of an ISO timestamp or a time in ms; '-' when there is none. */
function shortTime(value) {
  const time = typeof value === 'string' || typeof value === 'number' ? new Date(value).getTime() : NaN;
  return Number.isNaN(time) ? '-' : new Date(time).toISOString().slice(0, 16).replace('T', ' ');
}

function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

const byteLength = (line) => Buffer.byteLength(line, 'utf8');

/**
 * Lines kept within pi's tool-output limits less the notes' room: `add` takes a group
 * of lines whole or not at all.
 */
class OutputBudget {
  constructor() {
    this.lines = [];
    this.bytes = 0;
    this.maxBytes = OUTPUT_MAX_BYTES - NOTES_BYTES;
    this.maxLines = OUTPUT_MAX_LINES - NOTES_LINES;
  }

  /** Bytes (newlines included) and lines still free. */
  room() {
    return { bytes: this.maxBytes - this.bytes, lines: this.maxLines - this.lines.length };
  }

  add(lines) {
    const bytes = lines.reduce((n, line) => n + byteLength(line) + 1, 0);
    if (this.bytes + bytes > this.maxBytes || this.lines.length + lines.length > this.maxLines) return false;
    this.lines.push(...lines);
    this.bytes += bytes;
    return true;
  }

  /** The text: the lines kept, then `notes` (short lines: their room was kept free). */
  text(notes) {
    const lines = [...this.lines];
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    if (notes.length > 0) lines.push('', ...notes);
    return lines.join('\n');
  }
}

/** The longest start of `line` that takes at most `maxBytes` in UTF-8 (a surrogate pair kept whole). */
function sliceToBytes(line, maxBytes) {
  let units = Math.min(line.length, maxBytes);
  let part = line.slice(0, unitBoundary(line, units));
  for (let over = byteLength(part) - maxBytes; over > 0; over = byteLength(part) - maxBytes) {
    // A UTF-16 unit takes 1 to 3 bytes: a third of the excess at a time keeps what fits.
    units -= Math.max(1, Math.floor(over / 3));
    part = line.slice(0, unitBoundary(line, units));
  }
  return part;
}

/**
 * `lines` cut to fit `room` (bytes and lines): the first lines whole, the last one that
 * fits in part, and a line saying how much is shown. Returns the lines kept.
 */
function cutToRoom(lines, room, what) {
  const total = lines.reduce((n, line) => n + line.length, 0);
  const kept = [];
  let bytes = 0;
  let shown = 0;
  const spare = 200; // the closing line
  for (const line of lines) {
    if (kept.length + 2 > room.lines) break;
    const free = room.bytes - spare - bytes - 1;
    if (free <= 0) break;
    if (byteLength(line) <= free) {
      kept.push(line);
      bytes += byteLength(line) + 1;
      shown += line.length;
      continue;
    }
    const part = sliceToBytes(line, free);
    kept.push(part);
    shown += part.length;
    break;
  }
  kept.push(`[${what} cut to the output limit: ${shown} of ${total} characters shown]`);
  return kept;
}

/** The texts of a message's content: a string, or its text blocks; images and thinking counted. */
function contentParts(content, { thinking, counts }) {
  if (typeof content === 'string') return { text: [content], calls: [] };
  const text = [];
  const calls = [];
  if (!Array.isArray(content)) return { text, calls };
  for (const block of content) {
    if (block === null || typeof block !== 'object') continue;
    if (block.type === 'text' && typeof block.text === 'string') text.push(block.text);
    else if (block.type === 'image') {
      counts.images++;
      text.push('[image]');
    } else if (block.type === 'thinking') {
      if (thinking && typeof block.thinking === 'string') text.push(`(thinking) ${block.thinking}`);
      else counts.thinking++;
    } else if (block.type === 'toolCall') calls.push(toolCallLine(block.name, block.arguments));
  }
  return { text, calls };
}

/** A tool call on one line: its name and its main argument (else its arguments as JSON). */
function toolCallLine(name, args) {
  const value = args !== null && typeof args === 'object' ? args : {};
  const key = MAIN_ARGUMENTS.find((k) => typeof value[k] === 'string' && value[k] !== '');
  const shown = key !== undefined ? value[key] : JSON.stringify(value);
  return `→ ${String(name)}: ${oneLine(shown ?? '', TOOL_ARGUMENT_CHARS)}`;
}

/** A tool's output cut to its first lines, the cut stated. */
function toolOutputLines(text, counts) {
  const lines = text.split('\n');
  let kept = lines.slice(0, TOOL_RESULT_LINES);
  let chars = kept.reduce((n, l) => n + l.length + 1, 0);
  const cutChars = chars > TOOL_RESULT_CHARS;
  if (cutChars) {
    const joined = kept.join('\n');
    kept = joined.slice(0, unitBoundary(joined, TOOL_RESULT_CHARS)).split('\n');
    chars = TOOL_RESULT_CHARS;
  }
  if (kept.length < lines.length || cutChars) {
    counts.cutResults++;
    kept.push(`[output cut: ${kept.length} of ${lines.length} lines, ${Math.min(chars, text.length)} of ${text.length} characters shown]`);
  }
  return kept;
}

/**
 * The lines of one entry: a heading (id, what it is, when) and what it says. `counts`
 * gathers what was left out (thinking, images, cut tool outputs).
 */
function entryLines(entry, options) {
  return entryParts(entry, options).flatMap((part) => part.split('\n'));
}

function entryParts(entry, { thinking, counts }) {
  const when = shortTime(entry.timestamp);
  const heading = (what) => `[${entry.id ?? '-'}] ${what} · ${when}`;
  if (entry.type === 'compaction') {
    const before = typeof entry.tokensBefore === 'number' ? `, ${entry.tokensBefore} tokens before` : '';
    return [heading(`compaction summary (of what came before entry ${entry.firstKeptEntryId ?? '-'}${before})`), String(entry.summary ?? '')];
  }
  if (entry.type === 'branch_summary') {
    return [heading(`branch summary (of the branch left at entry ${entry.fromId ?? '-'})`), String(entry.summary ?? '')];
  }
  if (entry.type === 'custom_message') {
    return [heading(`custom message ${entry.customType ?? ''}`.trim()), ...contentParts(entry.content, { thinking, counts }).text];
  }
  const message = entry.message ?? {};
  const role = message.role;
  if (role === 'toolResult') {
    const parts = contentParts(message.content, { thinking, counts }).text;
    const what = `toolResult ${message.toolName ?? ''}${message.isError ? ' (error)' : ''}`.replace(/ +/g, ' ').trim();
    return [heading(what), ...toolOutputLines(parts.join('\n'), counts)];
  }
  if (role === 'bashExecution') {
    const exit = message.cancelled ? 'cancelled' : message.exitCode === undefined || message.exitCode === null ? '' : `exit code ${message.exitCode}`;
    return [heading(`user's shell command${exit ? ` (${exit})` : ''}`), `$ ${message.command ?? ''}`, ...toolOutputLines(String(message.output ?? ''), counts)];
  }
  if (role === 'custom' || role === 'hookMessage') {
    return [heading(`custom message ${message.customType ?? ''}`.trim()), ...contentParts(message.content, { thinking, counts }).text];
  }
  if (role === 'compactionSummary' || role === 'branchSummary') {
    return [heading(role === 'compactionSummary' ? 'compaction summary' : 'branch summary'), String(message.summary ?? '')];
  }
  const { text, calls } = contentParts(message.content, { thinking, counts });
  const what = role === 'assistant' && message.stopReason === 'error' ? 'assistant (error)' : String(role);
  const lines = [heading(what), ...text, ...calls];
  if (role === 'assistant' && message.stopReason === 'error' && typeof message.errorMessage === 'string') lines.push(`(error: ${oneLine(message.errorMessage, 300)})`);
  return lines;
}

module.exports = {
  OUTPUT_MAX_BYTES,
  OUTPUT_MAX_LINES,
  MARK_OPEN,
  MARK_CLOSE,
  OutputBudget,
  cutToRoom,
  entryLines,
  formatSize,
  oneLine,
  shortTime,
  snippet,
};
