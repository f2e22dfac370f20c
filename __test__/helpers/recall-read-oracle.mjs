// The page recallRead showed before it read branches by position (lib/recall.js at
// de957b7), kept as an oracle: the whole branch built as entry objects by any manager
// with pi's API (pi's own SessionManager class, in the tests), isReadable over each of
// them, and the doctor run over the file for every page. Its text and details are the
// ones the new page must give byte for byte.
import { createRequire } from "node:module";
import path from "node:path";
import { REPO_ROOT } from "./reference.mjs";

const require = createRequire(import.meta.url);
const text = require(path.join(REPO_ROOT, "lib", "recall-text.js"));
const { checkSession } = require(path.join(REPO_ROOT, "lib", "doctor.js"));

const ERR_NO_ENTRY = "ERR_PI_ENTRY_NOT_FOUND";

/** Kinds of entries a page shows: messages (but pi's system prompt), summaries, custom messages. */
function isReadable(entry) {
  if (entry.type === 'message') {
    const role = entry.message?.role;
    return typeof role === 'string' && role !== 'system';
  }
  return entry.type === 'compaction' || entry.type === 'branch_summary' || entry.type === 'custom_message';
}

function recallError(message, code) {
	const error = new Error(message);
	error.code = code;
	return error;
}

const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** A sentence saying that `file` is damaged (what pi-sessions doctor finds), or null. */
function damageNote(file) {
  let note = null;
  try {
    // CRLF line ends are read as pi writes lines: no damage.
    const problems = checkSession(file).findings.filter((f) => f.problem !== 'crlf');
    if (problems.length > 0) {
      const first = problems
        .slice(0, 3)
        .map((f) => `${f.line > 0 ? `line ${f.line}: ` : ''}${text.oneLine(f.message, 120)}`)
        .join('; ');
      const more = problems.length > 3 ? '; …' : '';
      note = `This file is damaged (${problems.length} problem${problems.length === 1 ? '' : 's'}: ${first}${more}); shown is what pi reads of it.`;
    }
  } catch {
    note = null;
  }
  return note;
}

function newestLeafUnder(manager, id) {
  const seen = new Set([id]);
  for (let here = id; ; ) {
    const children = manager.getChildren(here);
    const next = children.length > 0 ? children[children.length - 1].id : undefined;
    if (next === undefined || seen.has(next)) return here;
    seen.add(next);
    here = next;
  }
}

const roleOf = (entry) => (entry.type === 'message' ? (entry.message?.role ?? null) : null);

/** What a page leaves out, in words; '' for nothing. */
function leftOutNote(counts, skipped) {
  const parts = [];
  if (counts.thinking > 0) parts.push(`${plural(counts.thinking, 'thinking block')} (thinking: true shows them)`);
  if (counts.images > 0) parts.push(plural(counts.images, 'image'));
  if (counts.cutResults > 0) parts.push(`the rest of ${plural(counts.cutResults, 'tool output')} (cut to their first lines)`);
  const kinds = [...skipped.entries()].map(([kind, n]) => `${n} ${kind}`);
  if (kinds.length > 0) parts.push(`entries that are not messages (${kinds.join(', ')})`);
  if (parts.length === 0) return '';
  return `Left out: ${parts.join('; ')}.`;
}

export function oracleReadPage(manager, file, o) {
  const sessionId = manager.getSessionId();
  const has = (id) => manager.getEntry(id) !== undefined;
  const noEntry = (id) => recallError(`No entry '${id}' in session ${sessionId}`, ERR_NO_ENTRY);
  let leafId;
  if (o.leaf !== undefined) {
    if (!has(o.leaf)) throw noEntry(o.leaf);
    leafId = o.leaf;
  } else if (o.session === 'current' && o.currentLeafId !== undefined && has(o.currentLeafId)) {
    // pi's leaf, which /tree may have moved off the file's last entry.
    leafId = o.currentLeafId;
  } else {
    leafId = manager.getLeafId();
  }
  const target = o.around ?? (o.from !== undefined && o.from !== 'start' ? o.from : undefined);
  if (target !== undefined && !has(target)) throw noEntry(target);
  let branch = leafId === null || leafId === undefined ? [] : manager.getBranch(leafId);
  const headNotes = [];
  if (target !== undefined && !branch.some((e) => e.id === target)) {
    if (o.leaf !== undefined) throw recallError(`Entry '${target}' is not on the branch to leaf '${o.leaf}'`, ERR_NO_ENTRY);
    const newLeaf = newestLeafUnder(manager, target);
    headNotes.push(`Entry ${target} is not on the branch to the session's leaf ${leafId}: shown is the branch through it, to its newest leaf ${newLeaf}.`);
    leafId = newLeaf;
    branch = manager.getBranch(newLeaf);
  }
  const readable = [];
  const onBranch = [];
  branch.forEach((entry, i) => {
    if (isReadable(entry)) {
      readable.push(entry);
      onBranch.push(i);
    }
  });

  const size = o.last ?? o.limit;
  let start = 0;
  if (o.last !== undefined) start = Math.max(0, readable.length - o.last);
  else if (target !== undefined) {
    const at = branch.findIndex((e) => e.id === target);
    let k = onBranch.findIndex((i) => i >= at);
    if (k === -1) k = readable.length;
    start = o.around !== undefined ? Math.max(0, Math.min(k - Math.floor((size - 1) / 2), readable.length - size)) : k;
  }

  // The heading first, within the budget: a page is cut after it, never it.
  const name = manager.getSessionName();
  const budget = new text.OutputBudget();
  budget.add([text.oneLine(`Session ${sessionId}${name ? ` "${text.oneLine(name, 80)}"` : ''} · cwd ${manager.getCwd() || '-'} · ${file}`, 2000)]);
  const damaged = damageNote(file);
  if (damaged) budget.add([damaged]);
  budget.add(headNotes);
  if (readable.length === 0) budget.add([leafId ? `The branch to leaf ${leafId} has no messages.` : 'The session has no entries.']);
  else if (start >= readable.length) budget.add([`Branch to leaf ${leafId}: ${plural(readable.length, 'message')} and summaries; none after that point.`]);
  else budget.add([`Branch to leaf ${leafId}: ${plural(readable.length, 'message')} and summaries; this page starts at ${start + 1}.`]);
  budget.add(['']);

  const counts = { thinking: 0, images: 0, cutResults: 0 };
  let shown = 0;
  let cut = false;
  for (let k = start; k < readable.length && shown < size; k++) {
    const entryCounts = { thinking: 0, images: 0, cutResults: 0 };
    const lines = [...text.entryLines(readable[k], { thinking: o.thinking, counts: entryCounts }), ''];
    if (!budget.add(lines)) {
      cut = true;
      // An entry larger than a whole page is shown in part rather than never.
      if (shown > 0) break;
      budget.add(text.cutToRoom(lines, budget.room(), 'entry'));
    }
    for (const key of Object.keys(counts)) counts[key] += entryCounts[key];
    shown++;
    if (cut) break;
  }
  const page = readable.slice(start, start + shown);
  const skipped = new Map();
  if (shown > 0) {
    for (let i = onBranch[start]; i <= onBranch[start + shown - 1]; i++) {
      const entry = branch[i];
      if (isReadable(entry)) continue;
      const kind = entry.type === 'message' ? `${entry.message?.role} message` : entry.type;
      skipped.set(kind, (skipped.get(kind) ?? 0) + 1);
    }
  }
  const next = start + shown < readable.length ? (readable[start + shown].id ?? null) : null;

  const notes = [];
  if (cut) notes.push('This page stops early at the output limit (50 KB or 2,000 lines); the next page goes on from there.');
  const leftOut = leftOutNote(counts, skipped);
  if (leftOut) notes.push(leftOut);
  if (shown > 0) notes.push(`This page: ${start + 1}-${start + shown} of ${readable.length}.`);
  if (start > 0) notes.push(`Before this page: ${plural(Math.min(start, readable.length), 'earlier message')} on this branch (from "start" reads from the first).`);
  if (next !== null) notes.push(`Next page: from "${next}" (${readable.length - start - shown} more).`);
  else if (readable.length > 0) notes.push('End of the branch.');

  return {
    text: budget.text(notes),
    sessionId,
    sessionFile: file,
    entries: page.map((e) => ({ id: e.id ?? null, type: e.type, role: roleOf(e) })),
    truncated: cut,
    next,
  };
}
