#!/usr/bin/env node
// One benchmark sample in a fresh process:
//
//   node benchmark/worker.mjs <impl> <workload> <params-json>
//
// <impl> is a module path: a directory is require()d (the package root, CommonJS), a file
// is import()ed (the reference's dist/core/session-manager.js). Only the operation under
// test is timed (performance.now()); loading the module, preparing inputs and checking the
// result are not. The peak RSS is read right after the timed part, before the check
// touches anything else. The check is a small summary of the result (counts, ids, hashes
// of the serialized result) that must be identical for the reference and ours.
//
// Prints one line: @@RESULT {"ms":..., "rssKb":..., "check":{...}, "extra":{...}}

import { createHash } from "node:crypto";
import { closeSync, copyFileSync, mkdirSync, openSync, readdirSync, readSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { appendMessages } from "./lib/append-messages.mjs";

const [implPath, workload, paramsJson] = process.argv.slice(2);
const params = JSON.parse(paramsJson ?? "{}");

async function loadImpl(p) {
  if (statSync(p).isDirectory()) return createRequire(import.meta.url)(p);
  return import(pathToFileURL(p).href);
}

const sha = () => createHash("sha256");
const hashOf = (s) => sha().update(s).digest("hex").slice(0, 16);
const maxRssKb = () => process.resourceUsage().maxRSS;

/** hash a file's lines (split on \n), optionally skipping the first `skip` lines */
function hashFileLines(file, { skip = 0, map } = {}) {
  const h = sha();
  let lines = 0;
  forEachLine(file, (line, i) => {
    if (i < skip) return;
    lines++;
    h.update(map ? map(line) : line);
    h.update("\n");
  });
  return { lines, hash: h.digest("hex").slice(0, 16) };
}

function forEachLine(file, fn) {
  const fd = openSync(file, "r");
  const buf = Buffer.allocUnsafe(4 * 1024 * 1024);
  let rest = Buffer.alloc(0);
  let i = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      let chunk = Buffer.concat([rest, buf.subarray(0, n)]);
      let start = 0;
      let nl;
      while ((nl = chunk.indexOf(10, start)) !== -1) {
        fn(chunk.toString("utf8", start, nl), i++);
        start = nl + 1;
      }
      rest = Buffer.from(chunk.subarray(start));
      chunk = null;
    }
    if (rest.length) fn(rest.toString("utf8"), i++);
  } finally {
    closeSync(fd);
  }
}

const openDescriptors = () => readdirSync("/proc/self/fd").length;

/** a v3 session file that open() reads without writing to it */
function opensUntouched(file) {
  const { size } = statSync(file);
  if (size === 0) return false;
  const fd = openSync(file, "r");
  try {
    const head = Buffer.alloc(64);
    readSync(fd, head, 0, 64, 0);
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] === 10 && head.toString("utf8").startsWith('{"type":"session","version":3,');
  } finally {
    closeSync(fd);
  }
}

/** the entry without the fields the reference fills in at random (id) or from the clock */
function stripVolatile(entry, keys = ["id", "parentId", "timestamp"]) {
  const copy = { ...entry };
  for (const k of keys) delete copy[k];
  return copy;
}

function contextCheck(ctx) {
  return {
    messages: ctx.messages.length,
    roles: hashOf(ctx.messages.map((m) => m.role).join(",")),
    thinkingLevel: ctx.thinkingLevel,
    model: ctx.model,
    hash: hashOf(JSON.stringify(ctx.messages)),
  };
}

// parentSession by file name: the results are committed and must not hold this machine's paths
function headerCheck(h) {
  return h ? { type: h.type, version: h.version, cwd: h.cwd, parentSession: h.parentSession && basename(h.parentSession) } : null;
}

function treeCheck(roots) {
  const h = sha();
  let nodes = 0;
  let maxDepth = 0;
  let branchPoints = 0;
  const stack = roots.map((r) => [r, 0]).reverse();
  while (stack.length) {
    const [n, d] = stack.pop();
    nodes++;
    if (d > maxDepth) maxDepth = d;
    if (n.children.length > 1) branchPoints++;
    h.update(`${n.entry.id}:${n.label ?? ""}:${n.labelTimestamp ?? ""}:${n.children.length};`);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i], d + 1]);
  }
  return { roots: roots.length, nodes, maxDepth, branchPoints, hash: h.digest("hex").slice(0, 16) };
}


/** What pi's footer sums over getEntries() after every reply (its tokens, as one number). */
function footerWalk(sm) {
  let tokens = 0;
  for (const entry of sm.getEntries()) {
    const usage = entry.type === "usage" ? entry.usage : entry.type === "message" && (entry.message.role === "assistant" || entry.message.role === "toolResult") ? entry.message.usage : undefined;
    if (usage) tokens += (usage.input ?? 0) + (usage.output ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
  }
  return tokens;
}

const WORKLOADS = {
  // SessionManager.open(file)
  open: {
    run: ({ SessionManager }, p) => SessionManager.open(p.file),
    check: (sm) => ({
      entries: sm.getEntryCount(),
      leafId: sm.getLeafId(),
      sessionId: sm.getSessionId(),
      header: headerCheck(sm.getHeader()),
      name: sm.getSessionName() ?? null,
    }),
  },
  // SessionManager.open(file).buildSessionContext()
  "open-context": {
    run: ({ SessionManager }, p) => SessionManager.open(p.file).buildSessionContext(),
    check: (ctx) => contextCheck(ctx),
  },
  // SessionManager.open(file).getEntries()
  "open-entries": {
    run: ({ SessionManager }, p) => SessionManager.open(p.file).getEntries(),
    check: (entries, p) => {
      const h = sha();
      for (const e of entries) {
        h.update(JSON.stringify(e));
        h.update("\n");
      }
      const hash = h.digest("hex").slice(0, 16);
      // independent of either implementation: the entries must serialize back to the file's lines
      const file = hashFileLines(p.file, { skip: 1 });
      return { count: entries.length, hash, matchesFile: hash === file.hash && entries.length === file.lines };
    },
  },
  // many buildSessionContext() calls on an open session (after one untimed warm-up call)
  "context-calls": {
    setup: ({ SessionManager }, p) => {
      const sm = SessionManager.open(p.file);
      const first = sm.buildSessionContext();
      return { sm, firstLen: first.messages.length };
    },
    run: (_, p, { sm }) => {
      let last;
      let total = 0;
      for (let i = 0; i < p.calls; i++) {
        last = sm.buildSessionContext();
        total += last.messages.length;
      }
      return { last, total };
    },
    perCall: true,
    check: ({ last, total }, p, { firstLen }) => ({ ...contextCheck(last), total, stable: total === firstLen * p.calls }),
  },
  // pi's footer after every reply: getEntries(), every entry's type, every message's role,
  // the usage of every assistant message (and of usage entries), on an open session after
  // one untimed walk; `release` switches ours to letting go of what nothing holds
  "footer-walks": {
    setup: (mod, p) => {
      mod.configureEntries?.({ release: Boolean(p.release) });
      const sm = mod.SessionManager.open(p.file);
      const first = footerWalk(sm);
      return { sm, first };
    },
    run: (_, p, { sm }) => {
      let total = 0;
      for (let i = 0; i < p.calls; i++) total += footerWalk(sm);
      return total;
    },
    perCall: true,
    check: (total, p, { first }) => ({ tokens: first, stable: total === first * p.calls }),
  },
  // getBranch() from the leaf and from entries spread along the leaf's path
  "branch-calls": {
    setup: ({ SessionManager }, p) => {
      const sm = SessionManager.open(p.file);
      const path = sm.getBranch();
      const ids = [undefined];
      for (let k = 1; k < 20; k++) ids.push(path[Math.floor((path.length * k) / 20)].id);
      return { sm, ids };
    },
    run: (_, p, { sm, ids }) => {
      const lens = [];
      const ends = [];
      for (let i = 0; i < p.calls; i++) {
        const b = sm.getBranch(ids[i % ids.length]);
        lens.push(b.length);
        ends.push(b[0]?.id, b[b.length - 1]?.id);
      }
      return { lens, ends };
    },
    perCall: true,
    check: ({ lens, ends }) => ({ calls: lens.length, total: lens.reduce((a, b) => a + b, 0), hash: hashOf(`${lens.join(",")}|${ends.join(",")}`) }),
  },
  // open() + the first getBranch() + each entry's type and role: what pi reads of the
  // branch at start
  "open-branch-types": {
    run: ({ SessionManager }, p) => {
      const branch = SessionManager.open(p.file).getBranch();
      const kinds = new Array(branch.length);
      for (let i = 0; i < branch.length; i++) {
        const e = branch[i];
        kinds[i] = e.type === "message" ? e.message.role : e.type;
      }
      return kinds;
    },
    check: (kinds) => ({ count: kinds.length, hash: hashOf(kinds.join(",")) }),
  },
  // open() + the first getTree() + each node's entry type
  "open-tree-types": {
    run: ({ SessionManager }, p) => {
      const roots = SessionManager.open(p.file).getTree();
      const kinds = [];
      const stack = [...roots];
      while (stack.length) {
        const n = stack.pop();
        kinds.push(n.entry.type);
        for (const c of n.children) stack.push(c);
      }
      return { roots, kinds };
    },
    check: ({ roots, kinds }) => ({ ...treeCheck(roots), types: hashOf(kinds.join(",")) }),
  },
  // open() + getEntries() + every field of every entry read (a walk of every value)
  "open-touch-all": {
    run: ({ SessionManager }, p) => {
      const entries = SessionManager.open(p.file).getEntries();
      let leaves = 0;
      let chars = 0;
      const stack = [entries];
      while (stack.length) {
        const v = stack.pop();
        if (v !== null && typeof v === "object") {
          if (Array.isArray(v)) for (let i = 0; i < v.length; i++) stack.push(v[i]);
          else for (const k in v) stack.push(v[k]);
        } else {
          leaves++;
          if (typeof v === "string") chars += v.length;
        }
      }
      return { entries, leaves, chars };
    },
    check: ({ entries, leaves, chars }) => ({ count: entries.length, leaves, chars }),
  },
  // getTree() on an open session, first call (ours builds the entry objects here,
  // which the reference built during open())
  tree: {
    setup: ({ SessionManager }, p) => ({ sm: SessionManager.open(p.file) }),
    run: (_, p, { sm }) => sm.getTree(),
    check: (roots) => treeCheck(roots),
  },
  // open() + getTree(): what showing the tree of a session costs from scratch
  "open-tree": {
    run: ({ SessionManager }, p) => SessionManager.open(p.file).getTree(),
    check: (roots) => treeCheck(roots),
  },
  // getTree() per call, after one untimed call
  "tree-calls": {
    setup: ({ SessionManager }, p) => {
      const sm = SessionManager.open(p.file);
      sm.getTree();
      return { sm };
    },
    run: (_, p, { sm }) => {
      let roots;
      for (let i = 0; i < p.calls; i++) roots = sm.getTree();
      return roots;
    },
    perCall: true,
    check: (roots) => treeCheck(roots),
  },
  // N appendMessage() calls on a persisted session (a copy of the data file)
  append: {
    setup: ({ SessionManager }, p) => {
      mkdirSync(p.tmp, { recursive: true });
      const copy = join(p.tmp, basename(p.file));
      copyFileSync(p.file, copy);
      const sm = SessionManager.open(copy, p.tmp);
      return { sm, copy, sizeBefore: statSync(copy).size, entriesBefore: sm.getEntryCount(), leafBefore: sm.getLeafId(), msgs: appendMessages(p.count) };
    },
    run: (_, p, { sm, msgs }) => {
      let id;
      for (const m of msgs) id = sm.appendMessage(m);
      return id;
    },
    check: (lastId, p, { sm, copy, sizeBefore, entriesBefore, leafBefore }) => {
      const h = sha();
      let prev = leafBefore;
      let chainOk = true;
      let added = 0;
      forEachLine(copy, (line, i) => {
        if (i <= entriesBefore || !line) return;
        const e = JSON.parse(line);
        if (e.parentId !== prev) chainOk = false;
        prev = e.id;
        added++;
        h.update(JSON.stringify(stripVolatile(e)));
      });
      return {
        added,
        bytesAdded: statSync(copy).size - sizeBefore,
        chainOk: chainOk && prev === lastId && sm.getLeafId() === lastId,
        entries: sm.getEntryCount(),
        hash: h.digest("hex").slice(0, 16),
      };
    },
  },
  // open() + buildSessionContext() of many distinct sessions, one after another in one
  // process (managers dropped, never closed), as a script that walks every session does.
  // Only files that open() leaves untouched (v3, not empty, last line ended) are used.
  "open-context-many": {
    setup: (_, p) => {
      const sessions = join(p.dir, "sessions");
      const dir = join(sessions, readdirSync(sessions).sort()[0]);
      const files = readdirSync(dir)
        .filter((n) => n.endsWith(".jsonl"))
        .sort()
        .map((n) => join(dir, n))
        .filter(opensUntouched)
        .slice(0, p.count);
      if (files.length < p.count) throw new Error(`only ${files.length} usable sessions in ${dir}`);
      return { files };
    },
    run: ({ SessionManager }, p, { files }) => {
      const counts = [];
      for (const file of files) counts.push(SessionManager.open(file).buildSessionContext().messages.length);
      return counts;
    },
    check: (counts) => ({ sessions: counts.length, messages: counts.reduce((a, b) => a + b, 0), hash: hashOf(counts.join(",")) }),
    extra: () => ({ fds: openDescriptors() }),
  },
  // N open() of the same file, each manager dropped at once; RSS growth at the end of
  // the loop (no gc() calls, no turn of the event loop)
  "open-repeat": {
    setup: ({ SessionManager }, p) => {
      SessionManager.open(p.file).getEntryCount();
      return { rssBefore: process.memoryUsage().rss };
    },
    run: ({ SessionManager }, p) => {
      let entries = 0;
      for (let i = 0; i < p.count; i++) entries += SessionManager.open(p.file).getEntryCount();
      return entries;
    },
    check: (entries, p) => ({ opens: p.count, entriesPerOpen: entries / p.count }),
    extra: (_, p, { rssBefore }) => ({ rssGrowthMb: (process.memoryUsage().rss - rssBefore) / 2 ** 20, fds: openDescriptors() }),
  },
  // SessionManager.forkFrom(file, cwd, tmpDir)
  fork: {
    setup: (_, p) => mkdirSync(p.tmp, { recursive: true }),
    run: ({ SessionManager }, p) => SessionManager.forkFrom(p.file, "/home/dev/forked-project", p.tmp),
    check: (sm, p) => {
      const out = sm.getSessionFile();
      const header = JSON.parse(readFileSync(out, "utf8").slice(0, 64 * 1024).split("\n")[0]);
      const body = hashFileLines(out, { skip: 1 });
      const source = hashFileLines(p.file, { skip: 1 });
      return {
        header: headerCheck(header),
        lines: body.lines,
        hash: body.hash,
        sameBodyAsSource: body.hash === source.hash,
        entries: sm.getEntryCount(),
        leafId: sm.getLeafId(),
        inDir: out.startsWith(p.tmp),
      };
    },
  },
  // open (untimed), then createBranchedSession(leaf) into tmpDir
  branched: {
    setup: ({ SessionManager }, p) => {
      mkdirSync(p.tmp, { recursive: true });
      const sm = SessionManager.open(p.file, p.tmp);
      return { sm, leaf: sm.getLeafId() };
    },
    run: (_, p, { sm, leaf }) => sm.createBranchedSession(leaf),
    check: (out, p, { sm }) => {
      // header id/timestamp are new and label entries get new random ids: leave those out
      const body = hashFileLines(out, {
        map: (line) => {
          const e = JSON.parse(line);
          if (e.type === "session") return JSON.stringify(headerCheck(e));
          if (e.type === "label") return JSON.stringify(stripVolatile(e, ["id", "parentId"]));
          return line;
        },
      });
      return {
        lines: body.lines,
        hash: body.hash,
        entries: sm.getEntryCount(),
        currentFile: sm.getSessionFile() === out,
        inDir: typeof out === "string" && out.startsWith(p.tmp),
      };
    },
  },
};

// ---- listing: PI_CODING_AGENT_DIR points at a corpus folder (see lib/datasets.mjs)

function listCheck(infos) {
  const h = sha();
  for (const i of infos) h.update(`${i.id}|${i.messageCount}|${i.modified.getTime()}|${i.firstMessage.length}|${i.allMessagesText.length};`);
  return { count: infos.length, hash: h.digest("hex").slice(0, 16) };
}

/** A listing called with an onProgress that counts its calls and partial lists. */
async function countingProgress(listWith) {
  let calls = 0;
  let partials = 0;
  let lastPartial = -1;
  const infos = await listWith((_loaded, _total, partial) => {
    calls++;
    if (partial) {
      partials++;
      lastPartial = partial.length;
    }
  });
  return { infos, calls, partials, lastPartial };
}

const progressCheck = (r) => ({ ...listCheck(r.infos), calls: r.calls, partials: r.partials, lastPartial: r.lastPartial });

const listing = (op) => ({
  async: true,
  ...op,
  setup: async (impl, p) => {
    process.env.PI_CODING_AGENT_DIR = p.dir;
    return op.setup ? op.setup(impl, p) : undefined;
  },
});

Object.assign(WORKLOADS, {
  "list-cold": listing({
    run: ({ SessionManager }, p) => SessionManager.list(p.cwd),
    check: listCheck,
  }),
  // the second list() in the same process
  "list-warm": listing({
    setup: async ({ SessionManager }, p) => {
      await SessionManager.list(p.cwd);
    },
    run: ({ SessionManager }, p) => SessionManager.list(p.cwd),
    check: listCheck,
  }),
  // the second list() in the same process, with onProgress as pi's /resume picker passes it
  "list-warm-progress": listing({
    setup: async ({ SessionManager }, p) => {
      await SessionManager.list(p.cwd, undefined, () => {});
    },
    run: ({ SessionManager }, p) => countingProgress((onProgress) => SessionManager.list(p.cwd, undefined, onProgress)),
    check: progressCheck,
  }),
  // the second listAll() in the same process, with onProgress
  "listall-warm-progress": listing({
    setup: async ({ SessionManager }) => {
      await SessionManager.listAll(() => {});
    },
    run: ({ SessionManager }) => countingProgress((onProgress) => SessionManager.listAll(onProgress)),
    check: progressCheck,
  }),
  "listall-cold": listing({
    run: ({ SessionManager }) => SessionManager.listAll(),
    check: listCheck,
  }),
  // until the first onProgress call that carries a partial list
  "list-first-progress": listing({
    run: ({ SessionManager }, p) =>
      new Promise((resolve) => {
        SessionManager.list(p.cwd, undefined, (loaded, total, partial) => {
          if (partial) resolve({ loaded, total, partial: partial.length });
        });
      }),
    check: (r) => ({ total: r.total, hasPartial: r.partial >= 1 }),
  }),
  "find-by-id": listing({
    setup: (_, p) => {
      const dir = join(p.dir, "sessions", `--${p.cwd.replace(/^\//, "").replace(/\//g, "-")}--`);
      const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();
      const file = files[Math.floor(files.length / 2)];
      const id = JSON.parse(readFileSync(join(dir, file), "utf8").split("\n", 1)[0]).id;
      return { id };
    },
    run: ({ SessionManager }, p, { id }) => SessionManager.findById(p.cwd, id),
    check: (found) => ({ file: found ? basename(found) : null }),
  }),
  "continue-recent": listing({
    async: false,
    run: ({ SessionManager }, p) => SessionManager.continueRecent(p.cwd),
    check: (sm) => ({ id: sm.getSessionId(), file: basename(sm.getSessionFile() ?? "") }),
  }),
});

// ---- accounting: ours has getSessionStats/usageReport; the reference side runs pi's loops

import { dirname } from "node:path";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { referenceReport, referenceSessionStats } from "./lib/usage-reference.mjs";

const usageTotalsOf = (p) => import(pathToFileURL(join(dirname(p), "usage-totals.js")).href);

function reportCheck(report) {
  return {
    rows: report.rows.length,
    keys: hashOf(report.rows.map((r) => r.key).join(",")),
    sessions: report.totals.sessions,
    tokens: report.totals.totalTokens,
    // Both sides add the same doubles in different orders: the last bits differ, so the
    // check keeps 8 significant digits (10 fell on a rounding boundary of 10,000 files).
    cost: report.totals.cost.toPrecision(8),
  };
}

const usageReportRun = async (impl, p, ctx) =>
  impl.usageReport ? impl.usageReport({ groupBy: p.groupBy, timezone: "UTC" }) : referenceReport(impl, ctx.totals, { groupBy: p.groupBy });

Object.assign(WORKLOADS, {
  "session-stats": {
    setup: async (impl) => ({ totals: impl.getSessionStats ? null : await usageTotalsOf(implPath) }),
    run: (impl, p, ctx) => (impl.getSessionStats ? impl.getSessionStats(p.file) : referenceSessionStats(impl.SessionManager.open(p.file), ctx.totals)),
    check: (s) => ({ ...s, sessionFile: basename(s.sessionFile ?? "") }),
  },
  "usage-report-cold": listing({
    setup: async (impl) => ({ totals: impl.usageReport ? null : await usageTotalsOf(implPath) }),
    run: usageReportRun,
    check: reportCheck,
  }),
  "usage-report-warm": listing({
    setup: async (impl, p) => {
      const ctx = { totals: impl.usageReport ? null : await usageTotalsOf(implPath) };
      await usageReportRun(impl, p, ctx);
      return ctx;
    },
    run: usageReportRun,
    check: reportCheck,
  }),
  // ours: the persistent cache is brought up to date by another process first (untimed)
  "usage-report-persisted": listing({
    setup: async (impl, p) => {
      if (!impl.usageReport) return { totals: await usageTotalsOf(implPath) };
      const cacheDir = join(tmpdir(), "pi-session-native-bench-usage-cache");
      const script = `const m = require(${JSON.stringify(implPath)}); m.configureListing({ cacheDir: ${JSON.stringify(cacheDir)} }); m.usageReport({ groupBy: "day", timezone: "UTC" });`;
      const r = spawnSync(process.execPath, ["-e", script], { env: process.env, stdio: "inherit" });
      if (r.status !== 0) throw new Error("priming the persistent cache failed");
      impl.configureListing({ cacheDir });
      return {};
    },
    run: usageReportRun,
    check: reportCheck,
  }),
});

// ---- search: pi's /resume search, ours (searchSessions, SessionSearch) against
// the reference's listing plus its filterAndSortSessions (session-selector-search.js)

/** The reference's search function when the impl is its session-manager.js; null for ours. */
async function referenceSearch() {
  if (statSync(implPath).isDirectory()) return null;
  const file = join(implPath, "..", "..", "modes", "interactive", "components", "session-selector-search.js");
  return (await import(pathToFileURL(file).href)).filterAndSortSessions;
}

/** The queries typed a key at a time: every prefix of each query. */
function keystrokes(queries, sessions) {
  // an id prefix from the listing's middle, as a user pastes or types one
  const id = sessions.length ? String(sessions[Math.floor(sessions.length / 2)].id).slice(0, 8) : "0";
  const out = [];
  for (const q of queries) {
    const full = q.replace("{id}", id);
    for (let i = 1; i <= full.length; i++) out.push(full.slice(0, i));
  }
  return out;
}

const searchCheck = (results) => {
  const h = sha();
  let total = 0;
  for (const r of results) {
    total += r.length;
    for (const s of r) h.update(`${s.path};`);
    h.update("|");
  }
  return { queries: results.length, matches: total, hash: h.digest("hex").slice(0, 16) };
};

Object.assign(WORKLOADS, {
  // per keystroke in steady state: every query typed once untimed (lowercased texts cached
  // on both sides), then the whole sequence timed; ms per keystroke
  "search-keystrokes": listing({
    setup: async (impl, p) => {
      const filter = await referenceSearch();
      if (filter) {
        const sessions = await impl.SessionManager.list(p.cwd);
        const keys = keystrokes(p.queries, sessions);
        for (const k of keys) filter(sessions, k, p.sort);
        return { run: (k) => filter(sessions, k, p.sort), keys };
      }
      const search = await impl.SessionSearch.open({ cwd: p.cwd });
      const keys = keystrokes(p.queries, search.sessions);
      for (const k of keys) search.search(k, p.sort);
      return { run: (k) => search.search(k, p.sort), keys };
    },
    async: false,
    run: (_, p, ctx) => {
      const results = [];
      for (let r = 0; r < p.rounds; r++) for (const k of ctx.keys) results.push(ctx.run(k));
      ctx.calls = p.rounds * ctx.keys.length;
      return results;
    },
    perKeystroke: true,
    check: (results, p) => searchCheck(results.slice(0, results.length / p.rounds)),
  }),
  // one search in a process that has listed and searched before
  "search-warm": listing({
    setup: async (impl, p) => {
      const filter = await referenceSearch();
      if (filter) await impl.SessionManager.list(p.cwd);
      else await impl.searchSessions(p.warmup, { cwd: p.cwd });
      return { filter };
    },
    run: async (impl, p, { filter }) =>
      filter ? [filter(await impl.SessionManager.list(p.cwd), p.query, p.sort)] : [await impl.searchSessions(p.query, { cwd: p.cwd, sort: p.sort })],
    check: searchCheck,
  }),
  // the first search in the process
  "search-cold": listing({
    setup: async () => ({ filter: await referenceSearch() }),
    run: async (impl, p, { filter }) =>
      filter ? [filter(await impl.SessionManager.list(p.cwd), p.query, p.sort)] : [await impl.searchSessions(p.query, { cwd: p.cwd, sort: p.sort })],
    check: searchCheck,
  }),
});

async function main() {
  const w = WORKLOADS[workload];
  if (!w) throw new Error(`unknown workload ${workload}`);
  const impl = await loadImpl(implPath);
  const ctx = w.setup ? await w.setup(impl, params) : undefined;
  const t0 = performance.now();
  let result = w.run(impl, params, ctx);
  if (w.async) result = await result;
  const t1 = performance.now();
  const rssKb = maxRssKb();
  const check = w.check(result, params, ctx);
  const ms = t1 - t0;
  const out = {
    ms: w.perCall ? ms / params.calls : w.perKeystroke ? ms / ctx.calls : ms,
    totalMs: ms,
    rssKb,
    rssEndKb: maxRssKb(),
    check,
    ...(w.extra ? { extra: w.extra(result, params, ctx) } : {}),
  };
  process.stdout.write(`@@RESULT ${JSON.stringify(out)}\n`);
}

main().catch((e) => {
  process.stdout.write(`@@ERROR ${JSON.stringify({ message: String(e?.stack ?? e) })}\n`);
  process.exit(2);
});
