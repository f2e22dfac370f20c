// Listing and discovery compared with the reference: SessionManager.list, listAll, findById
// and continueRecent over odd folders, the per-process incremental cache (appends, cut
// lines, rewrites, deletes, renames), files appended to during a listing, AbortSignal,
// onProgress callbacks that throw, cases that must not bring the process down (run in
// child processes) and the event loop staying responsive during a big listing.
//
// Every comparison runs the same folder contents on both sides, each in its own temp dir
// (helpers/harness.mjs), and compares the rendered results modulo temp dirs, ids and "now"
// instants (helpers/normalize.mjs). onProgress calls are compared through
// progressSummary (helpers/listing-data.mjs): loads are concurrent on both sides, so the
// order in which files finish may differ; what must agree is the multiset of `loaded`
// values, the constant `total`, and which calls carry a partial list (the reference's rule).
//
//   node --test __test__/listing.test.mjs
//   node __test__/run.mjs __test__/listing.test.mjs      (Node 20 and Node 22)
//
// A non-UTC time zone with an odd offset, so that any date string read as UTC where
// JavaScript reads local time (or the other way round) shows.
process.env.TZ = "Pacific/Chatham";

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { differential, tempDir } from "./helpers/harness.mjs";
import {
	assistantLine,
	defaultSessionDir,
	headerLine,
	infoLine,
	ISO,
	lines,
	MiB,
	MS,
	MTIME,
	oddCases,
	progressRecorder,
	progressSummary,
	rawMessageLine,
	simpleSession,
	userLine,
	writeCases,
	writeManySessions,
} from "./helpers/listing-data.mjs";
import { ours, oursLoadedFrom } from "./helpers/ours.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REFERENCE_FILE } from "./helpers/reference.mjs";

/** The project dir in every header; it need not exist (list filters by its resolved path). */
const CWD = "/fixed/listing-project";
const OTHER_CWD = "/somewhere/else";
/** Steps here compare results only: no session manager state, no file tree (dangling symlinks). */
const R = { state: "none", files: false };
/** The same, and every file under the side's root too (listing must not write). */
const RF = { state: "none", files: true };

const CASES = oddCases(CWD);
const caseByName = new Map(CASES.map((c) => [c.name, c]));
/** A plain session next to each odd file, older (by mtime) than all of them: continueRecent falls back to it. */
const ANCHOR = { name: "anchor.jsonl", data: simpleSession("anchor", CWD, { i: 200, name: "anchor" }), mtime: MTIME(-1) };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** What continueRecent gave: the manager's file and a few facts (a new session has a fresh id). */
function managerFacts(sm) {
	return {
		sessionFile: sm.getSessionFile(),
		sessionId: sm.getSessionId(),
		cwd: sm.getCwd(),
		sessionDir: sm.getSessionDir(),
		entryCount: sm.getEntryCount(),
	};
}

/** A listing with onProgress: the result and the summary of the progress calls. */
async function withProgress(rule, run) {
	const rec = progressRecorder();
	const result = await run(rec.fn);
	return { result, progress: progressSummary(rec.calls, result, rule) };
}

// --- odd files, one at a time ---------------------------------------------------------------

for (const c of CASES) {
	test(`odd file ${JSON.stringify(c.name)}: list, listAll, findById, continueRecent`, async (t) => {
		await differential(`odd file ${c.name}`, async (d) => {
			const dir = (s) => s.p("case");
			let readable;
			await d.setup((s) => {
				readable = writeCases(dir(s), [c, ANCHOR], s.p("external")).unreadableIsReadable;
				writeCases(defaultSessionDir(s.agentDir, CWD), [c, ANCHOR], s.p("external-default"));
			});
			if (c.kind === "unreadable") {
				t.diagnostic(
					readable
						? "chmod 000 does not stop reads here (running as root): the 'unreadable' file is compared as a readable one"
						: "chmod 000 stops reads here: the 'unreadable' file is compared as an unreadable one",
				);
			}
			await d.step("listAll(dir)", (s) => s.SM.listAll(dir(s)), R);
			await d.step("list(cwd, dir)", (s) => s.SM.list(CWD, dir(s)), R);
			await d.step("list(cwd, dir) again (ours: from its cache)", (s) => s.SM.list(CWD, dir(s)), R);
			await d.step("list(other cwd, dir)", (s) => s.SM.list(OTHER_CWD, dir(s)), R);
			for (const id of [...(c.ids ?? []), "anchor"]) {
				await d.step(`findById(cwd, ${JSON.stringify(id)}, dir)`, (s) => s.SM.findById(CWD, id, dir(s)) ?? "<undefined>", R);
			}
			await d.step("findById(cwd, undefined, dir): the first file without a header, if any", (s) => s.SM.findById(CWD, undefined, dir(s)) ?? "<undefined>", R);
			await d.step("list(cwd) (default dir)", (s) => s.SM.list(CWD), R);
			await d.step("listAll()", (s) => s.SM.listAll(), R);
			await d.step("findById(cwd, id) (default dir)", (s) => (c.ids ?? []).map((id) => s.SM.findById(CWD, id) ?? "<undefined>"), R);
			// The odd file is the newest: continueRecent takes it if its header is discovered.
			await d.step("continueRecent(cwd, dir)", (s) => managerFacts(s.SM.continueRecent(CWD, dir(s))), R);
			await d.step("continueRecent(cwd) (default dir)", (s) => managerFacts(s.SM.continueRecent(CWD)), R);
			await d.step("getSessionName() of the session continueRecent(cwd, dir) opened", (s) => s.SM.continueRecent(CWD, dir(s)).getSessionName() ?? "<undefined>", R);
		});
	});
}

// --- the odd folder as a whole: sort order, ties, progress, default dirs --------------------

/** Other folders under <agent>/sessions for listAll(): a project, a linked folder, links, a file. */
function writeOtherProjects(s) {
	const sessions = path.join(s.agentDir, "sessions");
	const other = path.join(sessions, "--other-project--");
	fs.mkdirSync(other, { recursive: true });
	const put = (dir, name, data, mtime) => {
		fs.writeFileSync(path.join(dir, name), data);
		fs.utimesSync(path.join(dir, name), mtime, mtime);
	};
	put(other, "o1.jsonl", simpleSession("other-1", OTHER_CWD, { i: 300 }), MTIME(1000));
	put(other, "o2.jsonl", simpleSession("other-2", OTHER_CWD, { i: 301 }), MTIME(1001));
	// Same mtime as a case file in the default dir: the basename decides (localeCompare, descending).
	put(other, "tie-mtime.jsonl", simpleSession("other-tie", OTHER_CWD, { i: 302 }), caseByName.get("good-two.jsonl").mtime);
	put(other, "same-modified.jsonl", lines(headerLine("other-same-modified", { cwd: OTHER_CWD, timestamp: ISO(100) })), MTIME(1002));
	// A second file without a stat (the default dir has y.jsonl): listAll() puts both last, by name.
	fs.symlinkSync(s.p("nowhere-else"), path.join(other, "a-dangling.jsonl"));
	const linked = s.p("linked-folder");
	fs.mkdirSync(linked, { recursive: true });
	put(linked, "l1.jsonl", simpleSession("linked-1", OTHER_CWD, { i: 310 }), MTIME(1010));
	put(linked, "l2.jsonl", simpleSession("linked-2", CWD, { i: 311 }), MTIME(1011));
	fs.symlinkSync(linked, path.join(sessions, "linked-folder"));
	put(s.root, "external-file.jsonl", simpleSession("external-file", CWD, { i: 320 }), MTIME(1020));
	fs.symlinkSync(s.p("external-file.jsonl"), path.join(sessions, "link-to-file"));
	fs.symlinkSync(s.p("nowhere"), path.join(sessions, "dangling-folder"));
	put(sessions, "top-level.jsonl", simpleSession("top-level", CWD, { i: 330 }), MTIME(1030));
	fs.mkdirSync(path.join(sessions, "empty-folder"));
}

test("odd folder: every listing variant, findById and continueRecent over all cases at once", async () => {
	await differential("odd folder", async (d) => {
		const dir = (s) => s.sessionDir;
		await d.setup((s) => {
			writeCases(dir(s), CASES, s.p("external"));
			writeCases(defaultSessionDir(s.agentDir, CWD), CASES, s.p("external-default"));
			writeOtherProjects(s);
		});
		await d.step("list(cwd, dir, onProgress)", (s) => withProgress("dir", (p) => s.SM.list(CWD, dir(s), p)), R);
		await d.step("list(other cwd, dir, onProgress)", (s) => withProgress("dir", (p) => s.SM.list(OTHER_CWD, dir(s), p)), R);
		await d.step("list(cwd) (default dir, not filtered)", (s) => s.SM.list(CWD), R);
		await d.step("list(cwd, undefined, onProgress) (default dir)", (s) => withProgress("dir", (p) => s.SM.list(CWD, undefined, p)), R);
		await d.step("list(cwd, default dir spelled out, onProgress) (not filtered)", (s) =>
			withProgress("dir", (p) => s.SM.list(CWD, `${defaultSessionDir(s.agentDir, CWD)}/`, p)), R);
		await d.step("listAll(dir)", (s) => s.SM.listAll(dir(s)), R);
		await d.step("listAll(dir, onProgress, signal)", (s) => withProgress("dir", (p) => s.SM.listAll(dir(s), p, new AbortController().signal)), R);
		await d.step("listAll()", (s) => s.SM.listAll(), R);
		await d.step("listAll(onProgress)", (s) => withProgress("all", (p) => s.SM.listAll(p)), R);
		await d.step("listAll(onProgress, signal)", (s) => withProgress("all", (p) => s.SM.listAll(p, new AbortController().signal)), R);
		await d.step("listAll(undefined, signal)", (s) => s.SM.listAll(undefined, new AbortController().signal), R);
		const ids = [...new Set([...CASES.flatMap((c) => c.ids ?? []), "other-1", "linked-1", "top-level", "missing-id", ""])];
		await d.step("findById(cwd, id, dir) for every id", (s) => Object.fromEntries(ids.map((id) => [id, s.SM.findById(CWD, id, dir(s)) ?? "<undefined>"])), R);
		await d.step("findById(other cwd, id, dir) for every id", (s) => Object.fromEntries(ids.map((id) => [id, s.SM.findById(OTHER_CWD, id, dir(s)) ?? "<undefined>"])), R);
		await d.step("findById(cwd, id) (default dir) for every id", (s) => Object.fromEntries(ids.map((id) => [id, s.SM.findById(CWD, id) ?? "<undefined>"])), R);
		// y.jsonl is a dangling symlink: the reference's statSync throws and no recent session is found.
		await d.step("continueRecent(cwd, dir) (dangling symlink in the folder)", (s) => managerFacts(s.SM.continueRecent(CWD, dir(s))), R);
		await d.step("continueRecent(cwd) (default dir, dangling symlink)", (s) => managerFacts(s.SM.continueRecent(CWD)), R);
		await d.setup((s) => {
			fs.unlinkSync(path.join(dir(s), "y.jsonl"));
			fs.unlinkSync(path.join(defaultSessionDir(s.agentDir, CWD), "y.jsonl"));
		});
		await d.step("continueRecent(cwd, dir) (without the dangling symlink)", (s) => managerFacts(s.SM.continueRecent(CWD, dir(s))), R);
		await d.step("continueRecent(other cwd, dir)", (s) => managerFacts(s.SM.continueRecent(OTHER_CWD, dir(s))), R);
		await d.step("continueRecent(cwd) (default dir)", (s) => managerFacts(s.SM.continueRecent(CWD)), R);
		await d.step("list(cwd, dir) after continueRecent", (s) => s.SM.list(CWD, dir(s)), R);
	});
});

test("list: ties of modified keep the reference's name order (non-ASCII, case, punctuation, equal under the collator)", async () => {
	// Every file has the same activity time, so the order of the result is the order
	// of the names by localeCompare (descending), which is not their byte order. The
	// first list() of a folder reads it in another order and sorts afterwards; the
	// second tells the scanner what it holds: both must give the reference's order.
	const names = ["\u00e9", "e\u0301", "E", "e", "_a", "-a", "a", "B", "\u00e4", "z", "\u65e5\u672c", "10", "9", "a b", "A", "\u00c9", "ss", "\u00df", "x\u0000y"];
	await differential("list ties", async (d) => {
		const dir = (s) => s.sessionDir;
		await d.setup((s) => {
			for (const folder of [dir(s), defaultSessionDir(s.agentDir, CWD)]) {
				fs.mkdirSync(folder, { recursive: true });
				names.forEach((name, k) => {
					if (name.includes("\u0000")) return; // not a valid file name
					const file = path.join(folder, `${name}.jsonl`);
					fs.writeFileSync(file, simpleSession(`tie-${k}`, CWD, { i: 7 }));
					// listAll() reads files newest mtime first: equal mtimes leave the names to decide.
					fs.utimesSync(file, MTIME(3), MTIME(3));
				});
			}
		});
		await d.step("list(cwd, dir), first call", (s) => s.SM.list(CWD, dir(s)), R);
		await d.step("list(cwd, dir), second call", (s) => s.SM.list(CWD, dir(s)), R);
		await d.step("listAll(dir)", (s) => s.SM.listAll(dir(s)), R);
		// The default folder is read by listAll() first: list() then answers
		// unchanged files from what listAll() built, and the other way round.
		await d.step("listAll(), first call", (s) => s.SM.listAll(), R);
		await d.step("list(cwd) after listAll()", (s) => s.SM.list(CWD), R);
		await d.step("listAll() after list(cwd)", (s) => s.SM.listAll(), R);
	});
});

test("list and listAll with invalid modified dates (seeded folders): the reference's sorts, filtered and not", async () => {
	// A message timestamp past the last valid date gives an Invalid Date `modified`,
	// whose NaN makes the reference's comparator inconsistent: what its sort returns
	// then depends on the exact array it sorts (after list()'s cwd filter).
	const seed = baseSeed();
	const rng = new Rng(seed);
	for (let round = 0; round < 4; round++) {
		const count = 25 + rng.int(60);
		const files = [];
		for (let k = 0; k < count; k++) {
			const cwd = rng.bool(0.6) ? CWD : OTHER_CWD;
			const time = rng.weighted([
				[5, () => MS(rng.int(6))], // ties
				[2, () => 1e16], // past the last valid date
				[1, () => 8.64e15],
				[3, () => MS(100 + rng.int(1000))],
			])();
			const name = `${rng.pick(["a", "B", "é", "z", "_", "10", "9"])}${rng.int(1000)}-${k}.jsonl`;
			// Set on both sides (the clock's ticks would tie other files on each), some equal.
			const mtime = MTIME(rng.int(count));
			files.push({ name, mtime, data: lines(headerLine(`nan-${k}`, { cwd }), rawMessageLine(`{"role":"user","content":"m${k}","timestamp":${time}}`)) });
		}
		await differential(`invalid dates, SEED=${seed} round ${round} (${count} files)`, async (d) => {
			const dir = (s) => s.sessionDir;
			await d.setup((s) => {
				for (const folder of [dir(s), defaultSessionDir(s.agentDir, CWD)]) {
					fs.mkdirSync(folder, { recursive: true });
					for (const f of files) {
						fs.writeFileSync(path.join(folder, f.name), f.data);
						fs.utimesSync(path.join(folder, f.name), f.mtime, f.mtime);
					}
				}
			});
			await d.step("list(cwd, dir)", (s) => s.SM.list(CWD, dir(s)), R);
			await d.step("list(other cwd, dir)", (s) => s.SM.list(OTHER_CWD, dir(s)), R);
			await d.step("list(other cwd, dir) again", (s) => s.SM.list(OTHER_CWD, dir(s)), R);
			await d.step("listAll(dir)", (s) => s.SM.listAll(dir(s)), R);
			await d.step("list(cwd) (default dir)", (s) => s.SM.list(CWD), R);
			await d.step("listAll()", (s) => s.SM.listAll(), R);
		});
	}
});

test("findById: files named for an id, renamed and copied files, in directory order", async () => {
	// pi names files <time>_<id>.jsonl, and ours looks at the file named for the id first:
	// what it returns must still be the first file in directory order whose header has the
	// id (and passes the cwd filter), whatever the names say.
	const named = (k, id) => `2026-01-0${1 + (k % 9)}T00-00-00-${String(k).padStart(3, "0")}Z_${id}.jsonl`;
	const files = {};
	for (let k = 0; k < 40; k++) files[named(k, `id-${k}`)] = simpleSession(`id-${k}`, CWD, { i: k });
	// A copy under another name, before or after the named file in directory order.
	files["copy-of-5.jsonl"] = simpleSession("id-5", CWD, { i: 50 });
	files["zz-copy-of-6.jsonl"] = simpleSession("id-6", OTHER_CWD, { i: 51 });
	files[named(60, "id-6-again")] = simpleSession("id-6", CWD, { i: 60 });
	// Named for one id, holding another (renamed), or holding none.
	files[named(61, "id-7")] = simpleSession("id-renamed", CWD, { i: 61 });
	files[named(62, "id-8")] = "not json\n";
	files[named(63, "no-header")] = lines(userLine("no header", 1));
	// Named for an id, but the header comes after a line that does not parse.
	files[named(64, "late")] = `garbage\n${simpleSession("late", CWD, { i: 64 })}`;
	files["late-copy.jsonl"] = simpleSession("late", OTHER_CWD, { i: 65 });
	// Only a file of another cwd is named for the id; the one for cwd has another name.
	files[named(66, "split")] = simpleSession("split", OTHER_CWD, { i: 66 });
	files["split-cwd.jsonl"] = simpleSession("split", CWD, { i: 67 });
	const ids = ["id-0", "id-5", "id-6", "id-7", "id-8", "id-39", "id-renamed", "no-header", "late", "split", "id-6-again", "missing"];
	await differential("findById by name", async (d) => {
		const dir = (s) => s.sessionDir;
		await d.setup((s) => {
			for (const target of [dir(s), defaultSessionDir(s.agentDir, CWD)]) {
				fs.mkdirSync(target, { recursive: true });
				for (const [name, data] of Object.entries(files)) fs.writeFileSync(path.join(target, name), data);
				fs.mkdirSync(path.join(target, named(70, "a-folder")));
			}
		});
		await d.step("the directory order of the folder", (s) => fs.readdirSync(dir(s)), R);
		await d.step("findById(cwd, id, dir)", (s) => Object.fromEntries(ids.map((id) => [id, s.SM.findById(CWD, id, dir(s)) ?? "<undefined>"])), R);
		await d.step("findById(other cwd, id, dir)", (s) => Object.fromEntries(ids.map((id) => [id, s.SM.findById(OTHER_CWD, id, dir(s)) ?? "<undefined>"])), R);
		await d.step("findById(cwd, id) (default dir)", (s) => Object.fromEntries(ids.map((id) => [id, s.SM.findById(CWD, id) ?? "<undefined>"])), R);
	});
});

test("continueRecent: skips files whose header discovery fails, newest first by mtime", async () => {
	// Newest first: each file in turn is the most recent candidate.
	const order = [
		"big-header.jsonl", // header beyond the 1 MiB scan: skipped
		"hdr-1mib-nl.jsonl", // header of exactly 1 MiB plus its newline: skipped
		"big-prefix.jsonl", // header after 1.2 MiB of blank lines: skipped
		"garbage.jsonl",
		"header-after-one.jsonl", // first entry is the number 1: not a session
		"lone-cr-header.jsonl", // one physical line: header, CR, messages: not JSON
		"header-id-number.jsonl",
		"x.jsonl", // a directory
		"other-cwd.jsonl", // a session of another cwd
		"hdr-1mib-no-nl.jsonl", // exactly 1 MiB without newline: found
		"header-second-line.jsonl",
		"good-two.jsonl",
	];
	await differential("continueRecent order", async (d) => {
		const dir = (s) => s.sessionDir;
		await d.setup((s) => {
			const cases = order.map((name, i) => ({ ...caseByName.get(name), mtime: MTIME(2000 - i) }));
			writeCases(dir(s), cases, s.p("external"));
			writeCases(defaultSessionDir(s.agentDir, CWD), cases, s.p("external-default"));
		});
		for (let round = 0; round < 4; round++) {
			await d.step(`round ${round}: continueRecent(cwd, dir)`, (s) => managerFacts(s.SM.continueRecent(CWD, dir(s))), RF);
			await d.step(`round ${round}: continueRecent(other cwd, dir)`, (s) => managerFacts(s.SM.continueRecent(OTHER_CWD, dir(s))), RF);
			await d.step(`round ${round}: continueRecent(cwd) (default dir, not filtered)`, (s) => managerFacts(s.SM.continueRecent(CWD)), RF);
			// Drop the newest file that is a session for cwd, so that the next round finds the next one.
			const drop = ["hdr-1mib-no-nl.jsonl", "header-second-line.jsonl", "other-cwd.jsonl", "good-two.jsonl"][round];
			await d.setup((s) => {
				fs.rmSync(path.join(dir(s), drop), { recursive: true });
				fs.rmSync(path.join(defaultSessionDir(s.agentDir, CWD), drop), { recursive: true });
			});
		}
	});
});

// --- the incremental cache ------------------------------------------------------------------

/** Files of the cache test, by name; each side writes them into its session dir. */
function cacheRound0() {
	const H = (id, extra = {}) => headerLine(id, { cwd: CWD, ...extra });
	const filler = userLine(`filler ${"f".repeat(100)}`, 3);
	return {
		"a.jsonl": lines(H("a"), userLine("a one", 1), assistantLine("a two", 2)),
		"b.jsonl": lines(H("b"), userLine("b one", 1)),
		"c.jsonl": [H("c"), userLine("c one", 1)].map((l) => `${l}\r\n`).join(""),
		"d.jsonl": lines(H("d"), userLine("alpha", 2), filler),
		"e.jsonl": simpleSession("e", CWD, { i: 10 }),
		"f.jsonl": simpleSession("f", CWD, { i: 11 }),
		"g.jsonl": "",
		"h.jsonl": H("h").slice(0, 25),
		"i.jsonl": `${H("i")}\n${userLine("i one", 1)}\r`,
		"j.jsonl": `${H("j")}\n${userLine("j one", 1)}`,
		"k.jsonl": lines(H("k"), rawMessageLine("null", 1)),
		"l.jsonl": "not json at all\n",
		"m.jsonl": lines(H("m"), userLine("m one", 1), infoLine("m first name", 2)),
		"n.jsonl": lines(H("n"), userLine("n one", 1), userLine("n two", 2), userLine("n three", 3)),
		"q.jsonl": lines(H("q"), userLine("q one", 1)),
		"r.jsonl": lines(`{"type":"session","id":"r","cwd":${JSON.stringify(CWD)}}`),
		"s.jsonl": lines(H("s"), userLine("s one", 1)),
		"u.jsonl": simpleSession("u", CWD, { i: 12 }),
		"v.jsonl": simpleSession("v", CWD, { i: 13 }),
		"w.jsonl": simpleSession("w", CWD, { i: 14 }),
		"x.jsonl": lines(H("x"), userLine("x one", 1)),
	};
}

test("cache: appends, cut lines, same-size rewrites, deletes, renames, shrinking, between listings", async () => {
	await differential("incremental cache", async (d) => {
		const dir = (s) => s.sessionDir;
		const f = (s, name) => path.join(dir(s), name);
		const append = (s, name, data) => fs.appendFileSync(f(s, name), data);
		const cut = userLine("b two é😀 cut in the middle", 2);
		const cutAt = Buffer.byteLength(cut.slice(0, cut.indexOf("😀"))) + 2; // inside the 4-byte character
		const qLine = Buffer.from(`${userLine("q two 😀 split", 2)}\n`);
		const qCut = qLine.indexOf(Buffer.from("😀")) + 1;
		await d.setup((s) => {
			fs.mkdirSync(dir(s), { recursive: true });
			for (const [name, data] of Object.entries(cacheRound0())) fs.writeFileSync(f(s, name), data);
			fs.utimesSync(f(s, "r.jsonl"), MTIME(1), MTIME(1));
		});
		await d.step("list(cwd, dir): cold", (s) => s.SM.list(CWD, dir(s)), RF);
		await d.step("listAll(dir): nothing changed", (s) => s.SM.listAll(dir(s)), RF);

		await d.setup((s) => {
			append(s, "a.jsonl", lines(userLine("a three", 3), assistantLine("a four", 4)));
			append(s, "b.jsonl", Buffer.from(cut).subarray(0, cutAt));
			append(s, "c.jsonl", `${userLine("c two", 2)}\r\n`);
			// Same size, different content, later mtime.
			const d0 = fs.readFileSync(f(s, "d.jsonl"), "utf8");
			const st = fs.statSync(f(s, "d.jsonl"));
			fs.writeFileSync(f(s, "d.jsonl"), d0.replace("alpha", "omega"));
			fs.utimesSync(f(s, "d.jsonl"), st.atime, new Date(st.mtimeMs + 10_000));
			fs.unlinkSync(f(s, "e.jsonl"));
			fs.writeFileSync(f(s, "f.tmp"), simpleSession("f-replaced", CWD, { i: 20, name: "replaced by rename" }));
			fs.renameSync(f(s, "f.tmp"), f(s, "f.jsonl"));
			append(s, "g.jsonl", lines(headerLine("g", { cwd: CWD }), userLine("g one", 1)));
			append(s, "h.jsonl", `${headerLine("h", { cwd: CWD }).slice(25)}\n${userLine("h one", 1)}\n`);
			append(s, "i.jsonl", `\n${userLine("i two", 2)}\n`);
			append(s, "j.jsonl", `${userLine("j two (glued to the line before)", 2)}\n${userLine("j three", 3)}\n`);
			append(s, "k.jsonl", lines(userLine("k one", 2)));
			append(s, "l.jsonl", lines(headerLine("l", { cwd: CWD }), userLine("l one", 1)));
			append(s, "m.jsonl", lines(infoLine("", 3)));
			fs.writeFileSync(f(s, "n.jsonl"), lines(headerLine("n", { cwd: CWD }), userLine("n uno", 1)));
			append(s, "q.jsonl", qLine.subarray(0, qCut));
			append(s, "r.jsonl", lines(infoLine("r name", 1)));
			// Whole seconds: sub-millisecond mtimes are compared by the ts-header-* odd files.
			fs.utimesSync(f(s, "r.jsonl"), MTIME(2), MTIME(2));
			append(s, "s.jsonl", lines(userLine(`s long ${"L".repeat(70 * 1024)} end`, 2)));
			fs.unlinkSync(f(s, "u.jsonl"));
			fs.mkdirSync(f(s, "u.jsonl"));
			fs.unlinkSync(f(s, "v.jsonl"));
			fs.symlinkSync(f(s, "w.jsonl"), f(s, "v.jsonl"));
			append(s, "x.jsonl", `${userLine("x two", 2)}\r${userLine("x three", 3)}\r`);
		});
		await d.step("list(cwd, dir): after round 1", (s) => s.SM.list(CWD, dir(s)), RF);
		await d.step("listAll(dir): after round 1, again", (s) => s.SM.listAll(dir(s)), RF);

		await d.setup((s) => {
			append(s, "b.jsonl", Buffer.concat([Buffer.from(cut).subarray(cutAt), Buffer.from(`\n${userLine("b three", 3)}\n`)]));
			append(s, "q.jsonl", qLine.subarray(qCut));
			append(s, "m.jsonl", lines(infoLine("m second name", 4)));
			append(s, "n.jsonl", lines(userLine("n dos", 2), userLine("n tres", 3), userLine("n cuatro", 4)));
			append(s, "x.jsonl", "\n");
			const st = fs.statSync(f(s, "a.jsonl"));
			fs.utimesSync(f(s, "a.jsonl"), st.atime, new Date(st.mtimeMs + 5_000)); // only the mtime moved
			append(s, "d.jsonl", lines(userLine("d after the rewrite", 4)));
			append(s, "k.jsonl", lines(userLine("k two", 3)));
			append(s, "j.jsonl", lines(userLine("j four", 4)));
		});
		await d.step("list(cwd, dir): after round 2", (s) => s.SM.list(CWD, dir(s)), RF);
		await d.step("list(cwd, dir): nothing changed", (s) => s.SM.list(CWD, dir(s)), RF);

		await d.setup((s) => {
			for (const name of fs.readdirSync(dir(s))) {
				if (!["a.jsonl", "b.jsonl", "v.jsonl", "w.jsonl"].includes(name)) fs.rmSync(f(s, name), { recursive: true });
			}
			fs.writeFileSync(f(s, "z.jsonl"), simpleSession("z", CWD, { i: 30 }));
			fs.writeFileSync(f(s, "w.jsonl"), simpleSession("w-rewritten-through-link", CWD, { i: 31 }));
		});
		await d.step("list(cwd, dir): most files gone, a new one, a link target rewritten", (s) => s.SM.list(CWD, dir(s)), RF);
		await d.step("listAll(dir, onProgress)", (s) => withProgress("dir", (p) => s.SM.listAll(dir(s), p)), RF);
	});
});

test("cache: a rewrite in place that grows and keeps the bytes just before the old end", async () => {
	// The first message changes, the last line (more than 64 bytes) stays, and a line is added.
	await differential("cache: grown rewrite", async (d) => {
		const file = (s) => path.join(s.sessionDir, "p.jsonl");
		const last = userLine(`the same long last line ${"t".repeat(120)}`, 3);
		await d.setup((s) => {
			fs.mkdirSync(s.sessionDir, { recursive: true });
			fs.writeFileSync(file(s), lines(headerLine("p", { cwd: CWD }), userLine("alpha", 1), last));
		});
		await d.step("list(cwd, dir)", (s) => s.SM.list(CWD, s.sessionDir), RF);
		// "alpha" -> "omega": the same length, so the bytes before the old end are the same.
		await d.setup((s) => fs.writeFileSync(file(s), lines(headerLine("p", { cwd: CWD }), userLine("omega", 1), last, userLine("added", 4))));
		await d.step("list(cwd, dir) after the rewrite", (s) => s.SM.list(CWD, s.sessionDir), RF);
	});
});

test("cache: listings of one folder that overlap, then changes, then warm listings", async () => {
	// Each listing keeps for the next the records it answered from; overlapping
	// listings of the same folder share them, and the last to finish decides.
	await differential("cache: overlapping listings", async (d) => {
		const name = (i) => `s${String(i).padStart(2, "0")}.jsonl`;
		await d.setup((s) => {
			fs.mkdirSync(s.sessionDir, { recursive: true });
			for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(s.sessionDir, name(i)), simpleSession(`s${i}`, i % 4 ? CWD : OTHER_CWD, { i, name: `n${i}` }));
		});
		await d.step("list(cwd, dir) once", (s) => s.SM.list(CWD, s.sessionDir), RF);
		await d.step("three listings at once", (s) => Promise.all([s.SM.list(CWD, s.sessionDir), s.SM.listAll(s.sessionDir, () => {}), s.SM.list(CWD, s.sessionDir, () => {})]), RF);
		await d.setup((s) => {
			fs.appendFileSync(path.join(s.sessionDir, name(3)), userLine("appended", 90));
			fs.rmSync(path.join(s.sessionDir, name(5)));
			fs.writeFileSync(path.join(s.sessionDir, name(50)), simpleSession("s50", CWD, { i: 50, name: "new" }));
		});
		await d.step("two listings at once after an append, a delete and a new file", (s) => Promise.all([s.SM.list(CWD, s.sessionDir), s.SM.listAll(s.sessionDir)]), RF);
		for (const round of [1, 2]) await d.step(`list(cwd, dir) warm, ${round}`, (s) => s.SM.list(CWD, s.sessionDir, () => {}), RF);
	});
});

test("cache: a folder of plain files answered whole from its last listing, then each kind of change", async () => {
	// Where every file is a regular file with one link in a watched folder, a listing with
	// nothing changed since the last one is answered without a look at any file (a memo kept
	// by the watch, src/catalog/watch.rs, by list() and by listAll()): each change below must end
	// that, whoever makes it. Each change comes twice, once after list() kept the memo and
	// once after listAll() did, on other files.
	await differential("cache: folder memo", async (d) => {
		// In the agent dir, next to a folder nothing changes in: listAll() reads both.
		const dir = (s) => s.p("agent", "sessions", "--memo--");
		const f = (s, name) => path.join(dir(s), name);
		const name = (i) => `m${String(i).padStart(2, "0")}.jsonl`;
		const held = new Map();
		await d.setup((s) => {
			fs.mkdirSync(dir(s), { recursive: true });
			const still = s.p("agent", "sessions", "--still--");
			fs.mkdirSync(still, { recursive: true });
			for (let i = 0; i < 8; i++) fs.writeFileSync(path.join(still, `s${i}.jsonl`), simpleSession(`s${i}`, OTHER_CWD, { i: 60 + i, name: `still ${i}` }));
			for (let i = 0; i < 30; i++) fs.writeFileSync(f(s, name(i)), simpleSession(`m${i}`, i % 5 ? CWD : OTHER_CWD, { i, name: `n${i}` }));
			held.set(s, [fs.openSync(f(s, name(29)), "a"), fs.openSync(f(s, name(28)), "a")]);
		});
		await d.step("list(cwd, dir): cold", (s) => s.SM.list(CWD, dir(s)), RF);
		for (const round of [1, 2]) await d.step(`list(cwd, dir, onProgress): warm, ${round}`, (s) => withProgress("dir", (p) => s.SM.list(CWD, dir(s), p)), RF);
		/** The changes, on files k + 3 to k + 14 (and the descriptor held on file 29 - k / 12). */
		const changes = (k) => [
			["an append", (s) => fs.appendFileSync(f(s, name(k + 3)), lines(userLine("appended", 40)))],
			["a write through a descriptor opened before", (s) => fs.writeSync(held.get(s)[k / 12], lines(userLine("through the held descriptor", 41)))],
			[
				"a same-size rewrite in place, the modification time set back",
				(s) => {
					const st = fs.statSync(f(s, name(k + 7)));
					fs.writeFileSync(f(s, name(k + 7)), fs.readFileSync(f(s, name(k + 7)), "utf8").replace(`m${k + 7}`, `q${k + 7}`));
					fs.utimesSync(f(s, name(k + 7)), st.atime, st.mtime);
				},
			],
			["a truncation to the header", (s) => fs.writeFileSync(f(s, name(k + 8)), lines(headerLine(`m${k + 8}`, { cwd: CWD })))],
			["a delete", (s) => fs.rmSync(f(s, name(k + 9)))],
			["a new file", (s) => fs.writeFileSync(f(s, name(k + 40)), simpleSession(`m${k + 40}`, CWD, { i: k + 40, name: "new" }))],
			[
				"a rename over a listed file",
				(s) => {
					fs.writeFileSync(f(s, "next.tmp"), simpleSession(`m${k + 11}-replaced`, CWD, { i: k + 11, name: "replaced" }));
					fs.renameSync(f(s, "next.tmp"), f(s, name(k + 11)));
				},
			],
			["a modification time moved alone", (s) => fs.utimesSync(f(s, name(k + 12)), MTIME(50 + k), MTIME(50 + k))],
			["a file no longer readable by its mode", (s) => fs.chmodSync(f(s, name(k + 13)), 0o000)],
			["another process appending", (s) => spawnSync(process.execPath, ["-e", `require("fs").appendFileSync(${JSON.stringify(f(s, name(k + 14)))}, ${JSON.stringify(lines(userLine("from a child", 42)))})`])],
		];
		for (const [what, change] of changes(0)) {
			await d.setup(change);
			await d.step(`list(cwd, dir): after ${what}`, (s) => s.SM.list(CWD, dir(s)), RF);
			await d.step(`list(cwd, dir, onProgress): after ${what}, again`, (s) => withProgress("dir", (p) => s.SM.list(CWD, dir(s), p)), RF);
			await d.step(`listAll(dir): after ${what}`, (s) => s.SM.listAll(dir(s)), RF);
		}
		await d.step("listAll(): first", (s) => s.SM.listAll(), RF);
		for (const [what, change] of changes(12)) {
			await d.setup(change);
			await d.step(`listAll(): after ${what}`, (s) => s.SM.listAll(), RF);
			await d.step(`listAll(onProgress): after ${what}, again`, (s) => withProgress("all", (p) => s.SM.listAll(p)), RF);
			await d.step(`list(cwd, dir): after ${what} (listAll()'s memo)`, (s) => s.SM.list(CWD, dir(s)), RF);
			await d.step(`listAll(): after ${what}, a third time`, (s) => s.SM.listAll(), RF);
		}
		await d.setup((s) => held.get(s).forEach((fd) => fs.closeSync(fd)));
	});
});

test("cache: a same-size rewrite in place with the modification time set back (beyond the brief)", async () => {
	await differential("cache: same size, same mtime", async (d) => {
		const file = (s) => path.join(s.sessionDir, "o.jsonl");
		await d.setup((s) => {
			fs.mkdirSync(s.sessionDir, { recursive: true });
			fs.writeFileSync(file(s), lines(headerLine("o", { cwd: CWD }), userLine("alpha", 1)));
			fs.utimesSync(file(s), MTIME(5), MTIME(5));
		});
		await d.step("list(cwd, dir)", (s) => s.SM.list(CWD, s.sessionDir), RF);
		await d.setup((s) => {
			fs.writeFileSync(file(s), lines(headerLine("o", { cwd: CWD }), userLine("omega", 1)));
			fs.utimesSync(file(s), MTIME(5), MTIME(5)); // like cp -p / rsync restoring the time
		});
		await d.step("list(cwd, dir) after the rewrite", (s) => s.SM.list(CWD, s.sessionDir), RF);
	});
});

test("cache: changes made outside the folder's own names (a symlink's target, another hard link, a descriptor opened earlier, the folder replaced)", async () => {
	// A warm listing trusts what the folder's inotify watch saw (src/catalog/watch.rs): each change
	// here reaches a listed file without an event on the listed folder's names, or replaces
	// the folder the watch is on.
	await differential("cache: unseen changes", async (d) => {
		const other = (s) => path.join(s.root, "elsewhere");
		const f = (s, name) => path.join(s.sessionDir, name);
		const held = new Map();
		await d.setup((s) => {
			fs.mkdirSync(s.sessionDir, { recursive: true });
			fs.mkdirSync(other(s), { recursive: true });
			fs.writeFileSync(path.join(other(s), "target.jsonl"), simpleSession("target", CWD, { i: 1 }));
			fs.symlinkSync(path.join(other(s), "target.jsonl"), f(s, "link.jsonl"));
			fs.writeFileSync(path.join(other(s), "hard.jsonl"), simpleSession("hard", CWD, { i: 2 }));
			fs.linkSync(path.join(other(s), "hard.jsonl"), f(s, "hard.jsonl"));
			fs.writeFileSync(f(s, "held.jsonl"), simpleSession("held", CWD, { i: 3 }));
			held.set(s, fs.openSync(f(s, "held.jsonl"), "a"));
			fs.writeFileSync(f(s, "plain.jsonl"), simpleSession("plain", CWD, { i: 4 }));
		});
		await d.step("list(cwd, dir): cold", (s) => s.SM.list(CWD, s.sessionDir), RF);
		await d.step("list(cwd, dir): warm", (s) => s.SM.list(CWD, s.sessionDir), RF);
		await d.setup((s) => {
			fs.appendFileSync(path.join(other(s), "target.jsonl"), lines(userLine("through the link's target", 5)));
			fs.appendFileSync(path.join(other(s), "hard.jsonl"), lines(userLine("through the other link", 6)));
			fs.writeSync(held.get(s), lines(userLine("through a descriptor opened before", 7)));
		});
		await d.step("list(cwd, dir): after writes elsewhere", (s) => s.SM.list(CWD, s.sessionDir), RF);
		await d.step("listAll(dir): the same", (s) => s.SM.listAll(s.sessionDir), RF);
		await d.setup((s) => {
			fs.closeSync(held.get(s));
			fs.renameSync(s.sessionDir, `${s.sessionDir}.old`);
			fs.mkdirSync(s.sessionDir);
			fs.writeFileSync(f(s, "plain.jsonl"), simpleSession("plain-in-the-new-folder", CWD, { i: 8, name: "new folder" }));
		});
		await d.step("list(cwd, dir): the folder replaced", (s) => s.SM.list(CWD, s.sessionDir), RF);
		await d.setup((s) => {
			fs.rmSync(s.sessionDir, { recursive: true });
			fs.renameSync(`${s.sessionDir}.old`, s.sessionDir);
		});
		await d.step("list(cwd, dir): the old folder back", (s) => s.SM.list(CWD, s.sessionDir), RF);
		await d.step("listAll(dir, onProgress): the same", (s) => withProgress("dir", (p) => s.SM.listAll(s.sessionDir, p)), RF);
	});
});

test("cache: the same listings with the folder watch turned off (PI_SESSION_NATIVE_WATCH=0), in child processes", () => {
	// Where a folder cannot be watched (a network filesystem), every file is stat'ed as before;
	// a sequence of changes and listings gives the same results either way.
	const root = tempDir("watch-off");
	const script = `
		const fs = require("fs"), path = require("path");
		const { SessionManager } = require(process.argv[2]);
		const dir = process.argv[1];
		const header = (id) => JSON.stringify({ type: "session", version: 3, id, timestamp: "2025-01-0" + (id.length % 9 + 1) + "T00:00:00.000Z", cwd: "/p" });
		const user = (t, i) => JSON.stringify({ type: "message", id: "m" + i, parentId: null, timestamp: "2025-02-01T00:00:0" + (i % 10) + ".000Z", message: { role: "user", content: t, timestamp: 1 } });
		const out = [];
		const snap = async () => out.push((await SessionManager.list("/p", dir)).map((s) => [path.basename(s.path), s.messageCount, s.firstMessage, s.modified.toISOString()]));
		(async () => {
			fs.mkdirSync(dir, { recursive: true });
			for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(dir, "s" + i + ".jsonl"), header("id" + "x".repeat(i)) + "\\n" + user("first " + i, i) + "\\n");
			await snap(); await snap();
			for (let i = 0; i < 40; i += 3) fs.appendFileSync(path.join(dir, "s" + i + ".jsonl"), user("more " + i, i + 1) + "\\n");
			fs.unlinkSync(path.join(dir, "s1.jsonl"));
			fs.renameSync(path.join(dir, "s2.jsonl"), path.join(dir, "t2.jsonl"));
			fs.utimesSync(path.join(dir, "s4.jsonl"), new Date(5e11), new Date(5e11));
			await snap(); await snap();
			process.stdout.write(JSON.stringify(out));
		})();
	`;
	try {
		const sides = [["reference", REFERENCE_FILE, "1"], ["watched", oursLoadedFrom, "1"], ["unwatched", oursLoadedFrom, "0"]];
		const [reference, watched, unwatched] = sides.map(([side, impl, watch]) => {
			const dir = path.join(root, side);
			const r = spawnSync(process.execPath, ["-e", script, dir, impl], { encoding: "utf8", timeout: 60_000, env: { ...process.env, PI_SESSION_NATIVE_WATCH: watch } });
			assert.equal(r.status, 0, `${side}: ${r.stderr}`);
			return JSON.parse(r.stdout);
		});
		assert.equal(reference.length, 4);
		assert.equal(reference[2].length, 39, "a file deleted, one renamed");
		assert.ok(reference[2].some(([name, count]) => name === "s0.jsonl" && count === 2), "an append seen");
		assert.deepEqual(watched, reference);
		assert.deepEqual(unwatched, reference);
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});

test("odd folder answered from the persistent listing cache in new processes (results in batches and one at a time)", () => {
	// Plain results cross to JavaScript in batches, a column per field; files that are not
	// sessions, fail, or hold texts that are not UTF-8 or times only JavaScript parses come
	// one at a time. Each process lists cold (ours writes its cache file), then again from
	// the cache file in a new process, and must give the reference's results.
	const root = tempDir("odd-persisted");
	const script = `
		const path = require("path");
		const m = require(process.argv[2]);
		if (process.argv[3]) m.configureListing({ cacheDir: process.argv[3] });
		const dir = process.argv[1];
		const show = (infos) => infos.map((s) => ({ ...s, path: path.relative(dir, s.path), created: String(s.created), modified: String(s.modified) }));
		(async () => {
			let calls = 0, lists = 0;
			const listed = await m.SessionManager.list(${JSON.stringify(CWD)}, dir, (loaded, total, partial) => { calls++; if (partial) lists++; });
			const all = await m.SessionManager.listAll(dir);
			process.stdout.write(JSON.stringify({ listed: show(listed), all: show(all), calls, lists }));
		})();
	`;
	try {
		const run = (side, impl, cacheDir) => {
			const dir = path.join(root, side, "sessions");
			const r = spawnSync(process.execPath, ["-e", script, dir, impl, cacheDir ?? ""], { encoding: "utf8", timeout: 60_000, maxBuffer: 1 << 28 });
			assert.equal(r.status, 0, `${side}: ${r.stderr}`);
			return JSON.parse(r.stdout);
		};
		for (const side of ["reference", "ours"]) writeCases(path.join(root, side, "sessions"), CASES, path.join(root, side, "external"));
		const reference = run("reference", REFERENCE_FILE);
		assert.ok(reference.listed.length > 10 && reference.calls > 10);
		const cacheDir = path.join(root, "cache");
		const cold = run("ours", oursLoadedFrom, cacheDir);
		assert.ok(fs.readdirSync(cacheDir).some((f) => f.startsWith("pi-session-native-listing")), "the cache file was written");
		const cached = run("ours", oursLoadedFrom, cacheDir);
		assert.deepEqual(cold, reference);
		assert.deepEqual(cached, reference);
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});

test("cache: SessionInfo objects are fresh on every call (caller mutations do not leak into the next listing)", async () => {
	await differential("cache: fresh objects", async (d) => {
		await d.setup((s) => {
			fs.mkdirSync(s.sessionDir, { recursive: true });
			fs.writeFileSync(path.join(s.sessionDir, "obj.jsonl"), lines(`{"type":"session","version":3,"id":{"k":"v"},"cwd":${JSON.stringify(CWD)},"timestamp":"${ISO(0)}","parentSession":{"path":"/p","list":[1,2]}}`, userLine("obj", 1), infoLine("obj name", 2)));
			fs.writeFileSync(path.join(s.sessionDir, "plain.jsonl"), simpleSession("plain", CWD, { i: 5, name: "plain" }));
		});
		const mutate = (list) => {
			for (const info of list) {
				if (info.parentSessionPath && typeof info.parentSessionPath === "object") {
					info.parentSessionPath.path = "mutated";
					// Idempotent: how many partial lists hold an info depends on which
					// file finishes first, which is a race on both sides.
					if (!info.parentSessionPath.list.includes(3)) info.parentSessionPath.list.push(3);
				}
				if (info.id && typeof info.id === "object") info.id.k = "mutated";
				info.name = "mutated";
				info.created.setTime(0);
				info.modified.setTime(0);
				info.messageCount = -1;
			}
			return list;
		};
		await d.step("list(cwd, dir), then the caller mutates every info", async (s) => mutate(await s.SM.list(CWD, s.sessionDir)), R);
		await d.step("list(cwd, dir) again", (s) => s.SM.list(CWD, s.sessionDir), R);
		await d.step("listAll(dir) (partial lists mutated by the caller too)", (s) =>
			s.SM.listAll(s.sessionDir, (_loaded, _total, partial) => partial && mutate(partial)), R);
		await d.step("list(cwd, dir) once more", (s) => s.SM.list(CWD, s.sessionDir), R);
	});
});

// --- files appended to during a listing -----------------------------------------------------

const APPENDER = `
const fs = require("fs");
const [filesJson, countText, baseText] = process.argv.slice(1);
const files = JSON.parse(filesJson);
const count = Number(countText);
const base = Number(baseText);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
(async () => {
	for (let k = 0; k < count; k++) {
		const line = Buffer.from(JSON.stringify({ type: "message", id: "x" + k, parentId: null, timestamp: new Date(base + k * 1000).toISOString(), message: { role: "user", content: "append " + k + " é😀", timestamp: base + k * 1000 } }) + "\\n");
		const cut = line.indexOf(Buffer.from("😀")) + 2;
		for (const f of files) fs.appendFileSync(f, line.subarray(0, cut));
		await sleep(1);
		for (const f of files) fs.appendFileSync(f, line.subarray(cut));
		if (k % 3 === 0) await sleep(1);
	}
})();
`;

test("a file appended to by another process during listings: each result is a prefix, the final one equals the reference", async () => {
	const APPENDS = 150;
	const BASE = MS(1000);
	await differential("concurrent appends", async (d) => {
		const live = (s) => path.join(s.sessionDir, "live.jsonl");
		await d.setup((s) => {
			writeManySessions(s.sessionDir, 30, CWD, { prefix: "still" });
			fs.writeFileSync(live(s), lines(headerLine("live", { cwd: CWD }), userLine("live one", 1), assistantLine("live two", 2), userLine("live three", 3)));
		});
		await d.step("list(cwd, dir) before the appends", (s) => s.SM.list(CWD, s.sessionDir), R);
		const before = "live one live two live three";
		const appended = (k) => `append ${k} é😀`;
		const violations = [];
		let listings = 0;
		let intermediate = 0;
		const check = (side, result) => {
			listings++;
			if (result.length !== 31) violations.push(`${side}: ${result.length} sessions instead of 31`);
			const info = result.find((s) => path.basename(s.path) === "live.jsonl");
			if (!info) {
				violations.push(`${side}: live.jsonl missing from the result`);
				return;
			}
			const k = info.messageCount - 3;
			if (!(k >= 0 && k <= APPENDS)) {
				violations.push(`${side}: live.jsonl messageCount ${info.messageCount}, expected 3..${3 + APPENDS}`);
				return;
			}
			if (k > 0 && k < APPENDS) intermediate++;
			const expected = [before, ...Array.from({ length: k }, (_, i) => appended(i))].join(" ");
			if (info.allMessagesText !== expected) {
				violations.push(`${side}: live.jsonl with messageCount ${info.messageCount}: allMessagesText ${JSON.stringify(info.allMessagesText.slice(-80))} is not the prefix ${JSON.stringify(expected.slice(-80))}`);
			}
			if (info.firstMessage !== "live one") violations.push(`${side}: firstMessage ${JSON.stringify(info.firstMessage)}`);
			const expectedModified = k === 0 ? MS(3) : BASE + (k - 1) * 1000;
			if (info.modified.getTime() !== expectedModified) violations.push(`${side}: modified ${info.modified.toISOString()} for messageCount ${info.messageCount}, expected ${new Date(expectedModified).toISOString()}`);
		};
		const child = spawn(process.execPath, ["-e", APPENDER, JSON.stringify(d.sides.map(live)), String(APPENDS), String(BASE)], { stdio: ["ignore", "inherit", "inherit"] });
		const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
		let done = false;
		exited.then(() => {
			done = true;
		});
		while (!done) {
			const [refResult, oursResult] = await Promise.all([d.ref.SM.list(CWD, d.ref.sessionDir), d.ours.SM.list(CWD, d.ours.sessionDir)]);
			check("reference", refResult);
			check("ours", oursResult);
		}
		const { code, signal } = await exited;
		assert.equal(code, 0, `appender exited with ${code} ${signal}`);
		console.log(`# concurrent appends: ${listings} listings checked, ${intermediate} saw live.jsonl part-way`);
		assert.deepEqual(violations.slice(0, 5), [], `${violations.length} listings were not consistent with a prefix of the appends`);
		await d.step("list(cwd, dir) after the appends", (s) => s.SM.list(CWD, s.sessionDir), R);
		await d.step("listAll(dir) after the appends", (s) => s.SM.listAll(s.sessionDir), R);
	});
});

// --- AbortSignal ----------------------------------------------------------------------------

class CustomReason extends Error {}

const REASONS = [
	["default reason (DOMException AbortError)", () => undefined],
	["custom Error", () => new CustomReason("custom reason")],
	["string reason", () => "a string reason"],
	["object reason", () => ({ custom: true })],
	["null reason", () => null],
];

const ABORTED_CALLS = [
	["list(cwd, dir, onProgress, signal)", (s, sig, p) => s.SM.list(CWD, s.sessionDir, p, sig)],
	["list(cwd, undefined, onProgress, signal) (default dir)", (s, sig, p) => s.SM.list(CWD, undefined, p, sig)],
	["list(cwd, missing dir, undefined, signal)", (s, sig) => s.SM.list(CWD, s.p("missing"), undefined, sig)],
	["listAll(signal)", (s, sig) => s.SM.listAll(sig)],
	["listAll(undefined, signal)", (s, sig) => s.SM.listAll(undefined, sig)],
	["listAll(onProgress, signal)", (s, sig, p) => s.SM.listAll(p, sig)],
	["listAll(dir, undefined, signal)", (s, sig) => s.SM.listAll(s.sessionDir, undefined, sig)],
	["listAll(dir, onProgress, signal)", (s, sig, p) => s.SM.listAll(s.sessionDir, p, sig)],
	["listAll(missing dir, onProgress, signal)", (s, sig, p) => s.SM.listAll(s.p("missing"), p, sig)],
];

test("AbortSignal already aborted: every call form rejects with the signal's reason, calls no onProgress", async () => {
	await differential("already aborted", async (d) => {
		await d.setup((s) => {
			writeManySessions(s.sessionDir, 12, CWD);
			writeManySessions(path.join(s.agentDir, "sessions", "--proj--"), 5, CWD);
		});
		for (const [callName, call] of ABORTED_CALLS) {
			for (const [reasonName, reason] of REASONS) {
				await d.step(`${callName}, ${reasonName}`, async (s) => {
					const ac = new AbortController();
					const r = reason();
					if (r === undefined) ac.abort();
					else ac.abort(r);
					const rec = progressRecorder();
					let promise;
					try {
						promise = call(s, ac.signal, rec.fn);
					} catch (error) {
						return { threwSynchronously: true, error };
					}
					try {
						const value = await promise;
						return { resolved: value, progressCalls: rec.calls.length };
					} catch (error) {
						return { rejected: error, isTheSignalsReason: error === ac.signal.reason, progressCalls: rec.calls.length };
					}
				}, RF);
			}
		}
	});
});

/** Listing 2,000 files, aborted part-way; what was observed around the abort. */
async function abortDuringListing(start, { abortAtLoaded, fromTimer }) {
	const ac = new AbortController();
	const reason = new CustomReason("stop listing");
	let aborted = false;
	let callsAfterAbort = 0;
	let callsAfterRejection = 0;
	let settled = false;
	let loadedAtAbort;
	const onProgress = (loaded) => {
		if (settled) callsAfterRejection++;
		if (aborted) callsAfterAbort++;
		if (!aborted && loaded >= abortAtLoaded && loadedAtAbort === undefined) {
			loadedAtAbort = loaded;
			const abort = () => {
				aborted = true;
				ac.abort(reason);
			};
			if (fromTimer) setImmediate(abort);
			else abort();
		}
	};
	let outcome;
	try {
		const value = await start(onProgress, ac.signal);
		outcome = { resolved: true, sessions: value.length };
	} catch (error) {
		outcome = { rejectedWithTheReason: error === reason, rejected: error };
	}
	settled = true;
	await sleep(300); // let any straggling callbacks arrive (not a time bound: nothing is asserted about it)
	return {
		...outcome,
		abortedBeforeTheEnd: aborted,
		loadedAtAbortIsAtLeast: loadedAtAbort >= abortAtLoaded,
		callsAfterAbort,
		callsAfterRejection,
	};
}

test("AbortSignal aborted during a 2,000-file listing: rejects with the reason, no onProgress after the abort", async () => {
	await differential("abort during listing", async (d) => {
		await d.setup((s) => {
			writeManySessions(s.sessionDir, 2000, CWD);
			writeManySessions(path.join(s.agentDir, "sessions", "--proj--"), 2000, CWD, { prefix: "proj" });
		});
		const results = [];
		const run = async (name, start, options) => {
			const r = await d.step(name, (s) => abortDuringListing((p, sig) => start(s, p, sig), options), R);
			results.push([name, r]);
		};
		await run("list(cwd, dir, onProgress, signal), abort inside onProgress at loaded 100", (s, p, sig) => s.SM.list(CWD, s.sessionDir, p, sig), { abortAtLoaded: 100 });
		await run("listAll(dir, onProgress, signal), abort from a later macrotask after loaded 50", (s, p, sig) => s.SM.listAll(s.sessionDir, p, sig), { abortAtLoaded: 50, fromTimer: true });
		await run("listAll(onProgress, signal), abort inside onProgress at loaded 100", (s, p, sig) => s.SM.listAll(p, sig), { abortAtLoaded: 100 });
		await run("listAll(onProgress, signal), abort from a later macrotask after loaded 10", (s, p, sig) => s.SM.listAll(p, sig), { abortAtLoaded: 10, fromTimer: true });
		await d.step("list(cwd, dir) after the aborted listings", (s) => withProgress("dir", (p) => s.SM.list(CWD, s.sessionDir, p)), R);
		await d.step("listAll(onProgress) after the aborted listings", (s) => withProgress("all", (p) => s.SM.listAll(p)), R);
		// Now ours answers every file from what it holds, in batches: an abort
		// must still land while files are coming.
		await run("list(cwd, dir, onProgress, signal), folder listed before, abort from a later macrotask after loaded 50", (s, p, sig) => s.SM.list(CWD, s.sessionDir, p, sig), { abortAtLoaded: 50, fromTimer: true });
		await run("listAll(onProgress, signal), folders listed before, abort inside onProgress at loaded 100", (s, p, sig) => s.SM.listAll(p, sig), { abortAtLoaded: 100 });
		for (const [name, r] of results) {
			for (const [side, v] of Object.entries(r)) {
				assert.equal(v.rejectedWithTheReason, true, `${name}: ${side} did not reject with the signal's reason: ${JSON.stringify(v)}`);
				assert.equal(v.callsAfterAbort, 0, `${name}: ${side} called onProgress ${v.callsAfterAbort} times after the abort`);
				assert.equal(v.callsAfterRejection, 0, `${name}: ${side} called onProgress ${v.callsAfterRejection} times after rejecting`);
			}
		}
		await d.step("list(cwd, dir) at the end", (s) => s.SM.list(CWD, s.sessionDir), R);
	});
});

// --- onProgress that throws -----------------------------------------------------------------

const THROWERS = [
	["throws on every call", () => () => {
		throw new Error("progress boom");
	}],
	["throws on the third call only", () => (loaded) => {
		if (loaded === 3) throw new Error("third call boom");
	}],
	["throws a non-Error on the first call", () => (loaded) => {
		if (loaded === 1) throw "a thrown string";
	}],
];

const THROWING_CALLS = [
	["list(cwd, dir, onProgress)", (s, p) => s.SM.list(CWD, s.sessionDir, p)],
	["listAll(dir, onProgress)", (s, p) => s.SM.listAll(s.sessionDir, p)],
	["listAll(onProgress)", (s, p) => s.SM.listAll(p)],
];

/** Calls listing with a throwing onProgress; what came back and which calls were made when. */
async function withThrowingProgress(call, makeThrower) {
	const thrower = makeThrower();
	const loadedBefore = [];
	const loadedAfter = [];
	let settled = false;
	const onProgress = (loaded, total, partial) => {
		(settled ? loadedAfter : loadedBefore).push(loaded);
		return thrower(loaded, total, partial);
	};
	let outcome;
	try {
		outcome = { resolved: await call(onProgress) };
	} catch (error) {
		outcome = { rejected: error };
	}
	settled = true;
	await sleep(300); // for calls that still arrive after the promise settled
	return { outcome, callsBeforeSettling: loadedBefore.length, loadedBeforeSettling: loadedBefore.join(","), loadedAfterSettling: loadedAfter.sort((a, b) => a - b) };
}

for (const warm of [false, true]) test(`onProgress that throws: the listing resolves like the reference's (to [])${warm ? ", folders listed before" : ""}`, async () => {
	await differential("throwing onProgress", async (d) => {
		await d.setup((s) => {
			writeManySessions(s.sessionDir, 25, CWD);
			writeManySessions(path.join(s.agentDir, "sessions", "--proj--"), 25, CWD, { prefix: "proj" });
		});
		if (warm) {
			// Ours then answers every file from what it holds, in batches; the
			// callbacks must still see each throw settle the listing first.
			await d.step("list(cwd, dir) first", (s) => s.SM.list(CWD, s.sessionDir), R);
			await d.step("listAll() first", (s) => s.SM.listAll(), R);
		}
		for (const [callName, call] of THROWING_CALLS) {
			for (const [throwName, makeThrower] of THROWERS) {
				const r = await d.step(`${callName}, onProgress ${throwName}: result and calls until it settled`, async (s) => {
					const { outcome, callsBeforeSettling, loadedBeforeSettling } = await withThrowingProgress((p) => call(s, p), makeThrower);
					return { outcome, callsBeforeSettling, loadedBeforeSettling };
				}, R);
				assert.deepEqual(r.ref.outcome, { resolved: [] }, `the reference no longer resolves to [] for ${callName}, onProgress ${throwName}: fix the test`);
			}
		}
		await d.step("list(cwd, dir) afterwards", (s) => s.SM.list(CWD, s.sessionDir), R);
	});
});

test("onProgress that throws: calls that still arrive after the listing settled (the reference's other loads go on)", async () => {
	await differential("throwing onProgress, late calls", async (d) => {
		await d.setup((s) => {
			writeManySessions(s.sessionDir, 25, CWD);
			writeManySessions(path.join(s.agentDir, "sessions", "--proj--"), 25, CWD, { prefix: "proj" });
		});
		for (const [callName, call] of THROWING_CALLS) {
			for (const [throwName, makeThrower] of THROWERS) {
				await d.step(`${callName}, onProgress ${throwName}: loaded values of the calls after it settled`, async (s) => {
					const { loadedAfterSettling } = await withThrowingProgress((p) => call(s, p), makeThrower);
					return { callsAfterSettling: loadedAfterSettling.length, loadedAfterSettling: loadedAfterSettling.join(",") };
				}, R);
			}
		}
	});
});

// --- cases that must not bring the process down: run in child processes ----------------------

const CHILD_LISTER = `
const path = require("path");
const { pathToFileURL } = require("url");
const [implPath, dir] = process.argv.slice(1);
const out = (v) => { process.stdout.write(JSON.stringify(v) + "\\n"); };
process.on("uncaughtException", (e) => { out({ uncaughtException: String(e && e.message || e) }); process.exit(3); });
process.on("unhandledRejection", (e) => { out({ unhandledRejection: String(e && e.message || e) }); process.exit(4); });
(async () => {
	const ns = await import(pathToFileURL(implPath).href);
	const SM = ns.SessionManager || ns.default.SessionManager;
	const date = (x) => x instanceof Date ? (Number.isNaN(x.getTime()) ? "Invalid Date" : x.toISOString()) : "not a Date: " + typeof x;
	const text = (x) => typeof x === "string" ? (x.length > 200 ? x.slice(0, 100) + "..." + x.slice(-100) + " (" + x.length + " chars)" : x) : typeof x;
	const show = (list) => list.map((s) => ({ file: path.basename(s.path), id: text(s.id), cwd: s.cwd, name: s.name, parentSessionPath: typeof s.parentSessionPath, created: date(s.created), modified: date(s.modified), messageCount: s.messageCount, firstMessage: text(s.firstMessage), allMessagesText: text(s.allMessagesText) }));
	out({ listAll: show(await SM.listAll(dir)) });
	out({ list: show(await SM.list(${JSON.stringify(CWD)}, dir)) });
	out({ findById: (SM.findById(${JSON.stringify(CWD)}, "crash-case", dir) || "<undefined>").replace(dir, "<DIR>") });
})().catch((e) => { out({ rejected: String(e && e.message || e) }); process.exit(5); });
`;

const nested = (depth, inner = "1") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`;
const CRASH_CASES = [
	["text nested 1,000 deep in a content block", lines(headerLine("crash-case", { cwd: CWD }), rawMessageLine(`{"role":"user","content":[{"type":"text","text":${nested(1000)}}]}`))],
	["text nested 5,000 deep (the reference's Array.prototype.join throws RangeError: file left out)", lines(headerLine("crash-case", { cwd: CWD }), rawMessageLine(`{"role":"user","content":[{"type":"text","text":${nested(5000)}}]}`))],
	["text nested 100,000 deep", lines(headerLine("crash-case", { cwd: CWD }), rawMessageLine(`{"role":"user","content":[{"type":"text","text":${nested(100000)}}]}`))],
	["an ignored field nested 100,000 deep", lines(headerLine("crash-case", { cwd: CWD }), `{"type":"message","deep":${nested(100000)},"message":{"role":"user","content":"deep elsewhere"}}`)],
	["parentSession nested 100,000 deep", lines(`{"type":"session","id":"crash-case","cwd":${JSON.stringify(CWD)},"parentSession":${nested(100000)}}`, userLine("x", 1))],
	["header timestamp that cannot convert to a primitive ({toString:0,valueOf:0})", lines(`{"type":"session","id":"crash-case","cwd":${JSON.stringify(CWD)},"timestamp":{"toString":0,"valueOf":0}}`, userLine("x", 1))],
	["entry timestamp that cannot convert to a primitive", lines(headerLine("crash-case", { cwd: CWD }), `{"type":"message","timestamp":{"toString":0,"valueOf":0},"message":{"role":"user","content":"x"}}`)],
	["header timestamp nested 100,000 deep (String() throws RangeError)", lines(`{"type":"session","id":"crash-case","cwd":${JSON.stringify(CWD)},"timestamp":${nested(100000)}}`, userLine("x", 1))],
	["entry timestamp nested 100,000 deep", lines(headerLine("crash-case", { cwd: CWD }), `{"type":"message","timestamp":${nested(100000)},"message":{"role":"user","content":"x"}}`)],
];

for (const [name, data] of CRASH_CASES) {
	test(`in a child process: ${name}`, () => {
		const runs = {};
		for (const [side, impl] of [["reference", REFERENCE_FILE], ["ours", oursLoadedFrom]]) {
			const dir = tempDir(`listing-child-${side}`);
			try {
				fs.writeFileSync(path.join(dir, "case.jsonl"), data);
				fs.writeFileSync(path.join(dir, "anchor.jsonl"), ANCHOR.data);
				fs.utimesSync(path.join(dir, "anchor.jsonl"), ANCHOR.mtime, ANCHOR.mtime);
				fs.utimesSync(path.join(dir, "case.jsonl"), MTIME(1), MTIME(1));
				const r = spawnSync(process.execPath, ["-e", CHILD_LISTER, impl, dir], { encoding: "utf8", timeout: 120_000, env: { ...process.env } });
				runs[side] = { status: r.status, signal: r.signal, error: r.error?.message, stdout: r.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)), stderr: r.stderr.trim().slice(0, 500) };
			} finally {
				fs.rmSync(dir, { recursive: true, force: true });
			}
		}
		assert.equal(runs.reference.status, 0, `the reference's child failed: ${JSON.stringify(runs.reference)}`);
		assert.deepEqual(
			{ status: runs.ours.status, signal: runs.ours.signal, stdout: runs.ours.stdout },
			{ status: runs.reference.status, signal: runs.reference.signal, stdout: runs.reference.stdout },
			`ours differs from the reference (ours' stderr: ${runs.ours.stderr})`,
		);
	});
}

// --- worker threads: listings in workers that end, mid-scan too ----------------------------

const WORKER_LISTER = `
const { Worker } = require("worker_threads");
const path = require("path");
const crypto = require("crypto");
const [implPath, dir, bigDir] = process.argv.slice(1);
const worker = (mode) => new Worker(\`
	const { parentPort, workerData } = require("worker_threads");
	const { pathToFileURL } = require("url");
	(async () => {
		const ns = await import(pathToFileURL(workerData.implPath).href);
		const SM = ns.SessionManager || ns.default.SessionManager;
		if (workerData.mode === "terminated mid-scan") {
			// Told after the first file of many: the main thread ends this worker
			// while the rest are read.
			let told = false;
			await SM.list("/fixed/listing-project", workerData.bigDir, () => {
				if (!told) parentPort.postMessage({ started: (told = true) });
			});
			return;
		}
		globalThis.kept = await SM.list("/fixed/listing-project", workerData.dir);
		parentPort.postMessage({ list: globalThis.kept.map((s) => [s.path, s.firstMessage, s.allMessagesText]) });
	})();
\`, { eval: true, workerData: { implPath, dir, bigDir, mode } });
const digest = (list) => list.map(([p, first, all]) => [path.basename(p), first.length, all.length, crypto.createHash("sha256").update(first + "\\\\0" + all).digest("hex").slice(0, 12)]);
const once = (w) => new Promise((resolve, reject) => { w.once("message", resolve); w.once("error", reject); });
(async () => {
	const { pathToFileURL } = require("url");
	const ns = await import(pathToFileURL(implPath).href);
	const SM = ns.SessionManager || ns.default.SessionManager;
	// A worker lists and ends while its texts are alive; another ends mid-scan.
	const a = worker("lists");
	const fromWorker = (await once(a)).list;
	await a.terminate();
	const b = worker("terminated mid-scan");
	await once(b);
	await b.terminate();
	await new Promise((r) => setTimeout(r, 300));
	globalThis.gc?.();
	const mine = (await SM.list("/fixed/listing-project", dir)).map((s) => [s.path, s.firstMessage, s.allMessagesText]);
	globalThis.gc?.();
	const again = (await SM.list("/fixed/listing-project", dir)).map((s) => [s.path, s.firstMessage, s.allMessagesText]);
	process.stdout.write(JSON.stringify({ worker: digest(fromWorker), main: digest(mine), again: digest(again) }) + "\\n");
})().catch((e) => { process.stdout.write(JSON.stringify({ failed: String(e && e.stack || e) }) + "\\n"); process.exit(5); });
`;

test("worker threads: a listing in a worker that then ends, another ended mid-scan, then the main thread lists (texts of every form)", () => {
	const runs = {};
	for (const [side, impl] of [["reference", REFERENCE_FILE], ["ours", oursLoadedFrom]]) {
		const dir = tempDir(`listing-worker-${side}`);
		try {
			const units = ["plain text ", "café ÿ ", "→ arrow — ", "🙂 smile ", "x"];
			for (let i = 0; i < 60; i++) {
				const unit = units[i % units.length];
				const text = `${i} ${unit.repeat(50 + (i % 7) * 40)}`;
				fs.writeFileSync(path.join(dir, `w-${String(i).padStart(3, "0")}.jsonl`), lines(headerLine(`w-${i}`, { cwd: CWD }), userLine(text, 1), assistantLine(`${text} reply`, 2)));
				fs.utimesSync(path.join(dir, `w-${String(i).padStart(3, "0")}.jsonl`), MTIME(i), MTIME(i));
			}
			const bigDir = path.join(dir, "big");
			writeManySessions(bigDir, 800, CWD, { textBytes: 20_000 });
			const r = spawnSync(process.execPath, ["--expose-gc", "-e", WORKER_LISTER, impl, dir, bigDir], { encoding: "utf8", timeout: 120_000 });
			runs[side] = { status: r.status, signal: r.signal, stdout: r.stdout.trim().replaceAll(dir, "<DIR>"), stderr: r.stderr.trim().slice(0, 500) };
		} finally {
			fs.rmSync(dir, { recursive: true, force: true });
		}
	}
	assert.equal(runs.reference.status, 0, `the reference's child failed: ${JSON.stringify(runs.reference)}`);
	const ref = JSON.parse(runs.reference.stdout);
	assert.equal(ref.worker.length, 60);
	assert.deepEqual(ref.main, ref.worker);
	assert.deepEqual(
		{ status: runs.ours.status, signal: runs.ours.signal, stdout: runs.ours.stdout },
		{ status: runs.reference.status, signal: runs.reference.signal, stdout: runs.reference.stdout },
		`ours differs from the reference (ours' stderr: ${runs.ours.stderr})`,
	);
});

// --- the event loop during a big listing ----------------------------------------------------

test("event loop: timers keep firing while ours lists 3,000 sessions (~150 MB)", async () => {
	const dir = tempDir("listing-big");
	try {
		const MESSAGES = 20;
		const TEXT = 2400;
		let bytes = 0;
		for (let i = 0; i < 3000; i++) {
			const id = `big-${String(i).padStart(5, "0")}`;
			const ls = [headerLine(id, { cwd: CWD, timestamp: ISO(i % 1000) })];
			for (let m = 0; m < MESSAGES; m++) {
				const text = `${id} message ${m} `.padEnd(TEXT, "lorem ipsum dolor sit amet ");
				ls.push(m % 2 ? assistantLine(text, m + 1) : userLine(text, m + 1));
			}
			const data = lines(...ls);
			bytes += data.length;
			fs.writeFileSync(path.join(dir, `${id}.jsonl`), data);
		}
		let ticks = 0;
		const timer = setInterval(() => ticks++, 5);
		let result;
		try {
			result = await ours.SessionManager.list(CWD, dir);
		} finally {
			clearInterval(timer);
		}
		console.log(`# event loop: ${ticks} ticks of a 5 ms interval during a listing of ${(bytes / MiB).toFixed(0)} MiB in 3,000 files`);
		assert.equal(result.length, 3000);
		assert.equal(result.every((s) => s.messageCount === MESSAGES), true);
		assert.ok(ticks >= 3, `a 5 ms interval fired only ${ticks} times while ours listed ${(bytes / MiB).toFixed(0)} MiB: the event loop was blocked`);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});
