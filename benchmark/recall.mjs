#!/usr/bin/env node
// Recall over a listing corpus (benchmark/lib/datasets.mjs) and over a store of many small
// sessions written here (--many, 10,000 by default, removed after), every project, limit 20,
// page cache warm, no listing cache file; each sample a fresh process
// (lib/recall-worker.mjs), sides alternating; medians of the time inside the process:
//
// - recallSearch for a common word, a rare one (in a few files: fewer hits than the limit,
//   so every file is read) and one in none, over both stores; its first call and a second
//   one in the same process (as in a pi session after its first call); beside it a
//   JavaScript oracle (every file read whole and each line JSON.parse'd, newest file first,
//   stopping past 20 hits) and `rg -l -F -i` over the same files when rg is installed (its
//   time the whole process's, as a shell runs it). The promise: over 10,000 sessions a
//   common word in under 150 ms, a rare word or none in at most rg's time;
// - recallRead of 50 messages around an entry in the middle of the corpus's biggest session,
//   named by its id as the model names it;
// - the prompt picker: listPrompts into the pi package's PromptPicker, the time to its
//   first batch, its first screen rendered, 20 prompts and the end; over both stores (the
//   picker's promise is its first screen in under 100 ms over 10,000 sessions).
//
//   node benchmark/generate.mjs listing-10k --listing-scale 0.05   a 500-file corpus (112 MB)
//   node benchmark/recall.mjs [--corpus listing-10k] [--samples 5] [--many 10000]
//                             [--common keybinding] [--many-common tests] [--rare WORD] [--none zebra]
// Writes benchmark/results-recall.md.
//
//   node benchmark/recall.mjs --big FILE [--samples 5] [--around ID]
// Only recallRead of one big session (linked into a temp agent dir, not copied): 50 messages
// around its middle message (or ID), the first call in a fresh process, the same call again
// and the next page in that process, and the process's peak RSS; with the session's recall
// index kept in a cache folder by an earlier read, and with no cache folder (the index made
// in the process). Writes benchmark/results-recall-big.md.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { BENCH_DIR, DATA_DIR } from "./lib/datasets.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
	const i = args.indexOf(name);
	return i >= 0 ? args[i + 1] : fallback;
};
const samples = Number(opt("--samples", 5));
const corpusName = opt("--corpus", "listing-10k");
const corpus = path.join(DATA_DIR, corpusName);
const many = Number(opt("--many", 10_000));
const LIMIT = 20;
const bigFile = opt("--big", undefined);
// The machine may be shared: the one-minute load average when the run began, for the record.
const loadAtStart = os.loadavg()[0].toFixed(2);
if (bigFile === undefined && !fs.existsSync(corpus)) throw new Error(`no corpus at ${corpus} (node benchmark/generate.mjs ${corpusName} --listing-scale 0.05)`);
const WORKER = path.join(BENCH_DIR, "lib", "recall-worker.mjs");
const hasRg = spawnSync("rg", ["--version"]).status === 0;

const median = (xs) => {
	const s = xs.filter((x) => x !== undefined && !Number.isNaN(x)).sort((a, b) => a - b);
	if (s.length === 0) return NaN;
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (ms) => (Number.isNaN(ms) ? "-" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`);
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** The session files of an agent dir's project folders. */
function sessionFiles(agentDir) {
	const root = path.join(agentDir, "sessions");
	return fs
		.readdirSync(root, { withFileTypes: true })
		.filter((d) => d.isDirectory())
		.flatMap((d) => fs.readdirSync(path.join(root, d.name)).filter((n) => n.endsWith(".jsonl")).map((n) => path.join(root, d.name, n)));
}

/** `task` in a fresh worker process; `cacheDir` the listing's cache folder ("" for none). */
function work(agentDir, task, input, cacheDir = "") {
	const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_SESSION_NATIVE_CACHE_DIR: cacheDir };
	const run = spawnSync(process.execPath, [WORKER, task, JSON.stringify(input)], { env, encoding: "utf8", maxBuffer: 1 << 26 });
	if (run.status !== 0) throw new Error(`${task} failed: ${run.stderr}`);
	return JSON.parse(run.stdout);
}

function timedRg(word, root) {
	const t0 = performance.now();
	const run = spawnSync("rg", ["-l", "-F", "-i", "--no-config", word, root], { encoding: "utf8", maxBuffer: 1 << 26 });
	if (run.status !== 0 && run.status !== 1) throw new Error(`rg failed: ${run.stderr}`);
	return { ms: performance.now() - t0, files: run.stdout.split("\n").filter(Boolean).length };
}

/** `sides` (name -> () => result), a warm-up each, then `samples` rounds, the order alternating. */
function rounds(sides) {
	const names = Object.keys(sides);
	const runs = Object.fromEntries(names.map((n) => [n, []]));
	for (const n of names) sides[n]();
	for (let s = 0; s < samples; s++) for (const n of s % 2 ? [...names].reverse() : names) runs[n].push(sides[n]());
	return runs;
}

if (bigFile !== undefined) {
	readBig(path.resolve(bigFile));
	process.exit(0);
}

// ===== the corpus =====

const files = sessionFiles(corpus);
const sizes = new Map(files.map((f) => [f, fs.statSync(f).size]));
const totalBytes = [...sizes.values()].reduce((a, b) => a + b, 0);
console.log(`corpus ${corpusName}: ${files.length} files, ${mb(totalBytes)}`);

/**
 * A word in a few of `files`: a TypeScript error code of the generated logs (TS2000-TS7999),
 * the one whose file count is nearest 5.
 */
function rareWord(files) {
	const filesOf = new Map();
	for (const file of files) {
		for (const m of new Set(fs.readFileSync(file, "latin1").match(/\bTS\d{4}\b/g) ?? [])) filesOf.set(m, (filesOf.get(m) ?? 0) + 1);
	}
	const [word, count] = [...filesOf].sort((a, b) => Math.abs(a[1] - 5) - Math.abs(b[1] - 5) || a[0].localeCompare(b[0]))[0] ?? ["TS0000", 0];
	return { word, files: count };
}
const none = opt("--none", "zebra");
const rareOf = (storeFiles) => (args.includes("--rare") ? { word: opt("--rare"), files: null } : rareWord(storeFiles));

const searchRows = [];
/** recallSearch's rows over one store: a common word, a rare one, one in none. */
function searchesOf(label, agentDir, storeFiles, common) {
	const rare = rareOf(storeFiles);
	for (const [kind, word, note] of [
		["common", common, ""],
		["rare", rare.word, rare.files === null ? "" : ` (in ${rare.files} files)`],
		["none", none, ""],
	]) {
		console.log(`recallSearch ${label}, ${kind}: ${word}`);
		const sides = {
			ours: () => work(agentDir, "search", { query: word, limit: LIMIT }),
			js: () => work(agentDir, "oracle", { query: word, limit: LIMIT }),
		};
		if (hasRg) sides.rg = () => timedRg(word, path.join(agentDir, "sessions"));
		const runs = rounds(sides);
		searchRows.push({
			label,
			kind,
			word,
			note,
			oursHits: `${runs.ours[0].hits}${runs.ours[0].truncated ? "+" : ""}`,
			jsHits: `${runs.js[0].hits}${runs.js[0].truncated ? "+" : ""}`,
			jsFiles: runs.js[0].filesRead,
			ours: median(runs.ours.map((r) => r.ms)),
			again: median(runs.ours.map((r) => r.again)),
			js: median(runs.js.map((r) => r.ms)),
			ratio: median(runs.ours.map((r, i) => r.ms / runs.js[i].ms)),
			rg: runs.rg ? median(runs.rg.map((r) => r.ms)) : undefined,
			rgFiles: runs.rg?.[0].files,
		});
	}
}
searchesOf(`${corpusName} (${mb(totalBytes)})`, corpus, files, opt("--common", "keybinding"));

// recallRead around an entry in the middle of the biggest session.
const biggest = [...sizes].sort((a, b) => b[1] - a[1])[0][0];
const messages = fs
	.readFileSync(biggest, "utf8")
	.split("\n")
	.flatMap((line) => {
		try {
			const entry = JSON.parse(line);
			return entry.type === "message" && typeof entry.id === "string" ? [entry.id] : [];
		} catch {
			return [];
		}
	});
const around = messages[Math.floor(messages.length / 2)];
// Named by its id, as session_read is called with a search hit's sessionId.
const biggestId = JSON.parse(fs.readFileSync(biggest, "utf8").split("\n", 1)[0]).id;
console.log(`recallRead: ${biggestId} (${path.basename(biggest)}) around ${around}`);
const reads = rounds({ ours: () => work(corpus, "read", { session: biggestId, around, limit: 50 }) }).ours;

// ===== the prompt picker =====

/** The cwd of the folder with the most sessions (the project whose picker reads most). */
function biggestProject(agentDir) {
	const byFolder = new Map();
	for (const file of sessionFiles(agentDir)) byFolder.set(path.dirname(file), [...(byFolder.get(path.dirname(file)) ?? []), file]);
	const [, folderFiles] = [...byFolder].sort((a, b) => b[1].length - a[1].length)[0];
	for (const file of folderFiles) {
		try {
			const header = JSON.parse(fs.readFileSync(file, "utf8").split("\n")[0]);
			if (header.type === "session" && typeof header.cwd === "string") return { cwd: header.cwd, files: folderFiles.length };
		} catch {
			// a broken file: the next one
		}
	}
	throw new Error(`no session header in ${agentDir}`);
}

/**
 * `count` small sessions in 20 project folders, one after another in time (each file's mtime
 * its last entry's), 2 to 6 prompts each, some repeated, "tests" in every one and a
 * TypeScript error code in one in 2,000: the picker's and the search's store of many sessions.
 */
function writeManySessions(count) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "recall-bench-many-"));
	const start = Date.UTC(2025, 0, 1);
	let at = start;
	const iso = (ms) => new Date(ms).toISOString();
	const words = ["parser", "listing", "session", "index", "branch", "folder", "module", "worker", "render", "cache", "tests", "deploy"];
	for (let i = 0; i < count; i++) {
		const project = i % 20;
		const cwd = `/home/dev/many-${String(project).padStart(2, "0")}`;
		const folder = path.join(dir, "sessions", `--${cwd.slice(1).replace(/\//g, "-")}--`);
		fs.mkdirSync(folder, { recursive: true });
		const id = `0199${String(i).padStart(4, "0")}-0000-7000-8000-${String(i).padStart(12, "0")}`;
		at += 60_000;
		const started = at;
		const lines = [{ type: "session", version: 3, id, timestamp: iso(started), cwd }];
		let parentId = null;
		for (let t = 0; t < 2 + (i % 5); t++) {
			const prompt = i % 7 === 0 ? `fix the ${words[t]} tests` : `task ${i} turn ${t}: ${words[(i + t) % words.length]} the ${words[(i * 3 + t) % words.length]} please`;
			at += 20_000;
			lines.push({ type: "message", id: `u${t}${id.slice(4, 8)}`, parentId, timestamp: iso(at), message: { role: "user", content: prompt, timestamp: at } });
			at += 20_000;
			// One session in 2,000 tells of a TypeScript error: the rare word of a search.
			const note = i % 2000 === 1234 && t === 0 ? " It was error TS2589." : "";
			lines.push({ type: "message", id: `a${t}${id.slice(4, 8)}`, parentId: `u${t}${id.slice(4, 8)}`, timestamp: iso(at), message: { role: "assistant", content: [{ type: "text", text: `Done: ${prompt}.${note} ${"The change is made and the tests pass. ".repeat(6)}` }], provider: "faux", model: "faux-1", stopReason: "stop", timestamp: at } });
			parentId = `a${t}${id.slice(4, 8)}`;
		}
		const file = path.join(folder, `${iso(started).replace(/[:.]/g, "-")}_${id}.jsonl`);
		fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
		fs.utimesSync(file, at / 1000, at / 1000);
	}
	return dir;
}

const pickerRows = [];
const pickerOf = (label, agentDir) => {
	const project = biggestProject(agentDir);
	const storeFiles = sessionFiles(agentDir).length;
	for (const [scope, cwd, count] of [
		["project", project.cwd, project.files],
		["all", project.cwd, storeFiles],
	]) {
		console.log(`prompt picker: ${label}, ${scope}`);
		const runs = rounds({ picker: () => work(agentDir, "prompts", { scope, cwd }) }).picker;
		const m = (key) => median(runs.map((r) => r[key]));
		pickerRows.push({ label, scope, files: count, firstBatch: m("firstBatch"), firstScreen: m("firstScreen"), screenful: m("screenful"), total: m("total"), prompts: runs[0].prompts });
	}
};
pickerOf(`${corpusName} (${mb(totalBytes)})`, corpus);
if (many > 0) {
	console.log(`writing ${many} small sessions`);
	const manyDir = writeManySessions(many);
	try {
		const manyFiles = sessionFiles(manyDir);
		const label = `${many.toLocaleString("en-US")} small sessions (${mb(manyFiles.reduce((a, f) => a + fs.statSync(f).size, 0))})`;
		searchesOf(label, manyDir, manyFiles, opt("--many-common", "tests"));
		pickerOf(label, manyDir);
	} finally {
		fs.rmSync(manyDir, { recursive: true, force: true });
	}
}

// ===== the table =====

const count = (n) => n.toLocaleString("en-US");
const lines = [
	`## Recall over ${corpusName} (${count(files.length)} files, ${mb(totalBytes)})${many > 0 ? ` and ${count(many)} small sessions` : ""}, every project, limit ${LIMIT}, ${samples} samples`,
	"",
	`\`node benchmark/recall.mjs --corpus ${corpusName} --samples ${samples} --many ${many}\`, ${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, load average ${loadAtStart} at the start. Medians of the time inside a fresh process (Node's start left out), page cache warm, no listing cache file.`,
	"",
	"| store | query | hits: ours / JS | recallSearch | again, same process | JavaScript (JSON.parse every line, newest file first, stop past 20) | ours / JS | `rg -l -F -i` (its process) |",
	"|---|---|---|---|---|---|---|---|",
	...searchRows.map(
		(r) =>
			`| ${r.label} | ${r.kind} \`${r.word}\`${r.note} | ${r.oursHits} / ${r.jsHits} | ${fmt(r.ours)} | ${fmt(r.again)} | ${fmt(r.js)} (${count(r.jsFiles)} files read) | ${r.ratio.toFixed(2)} | ${r.rg === undefined ? "skipped: rg is not installed" : `${fmt(r.rg)} (${count(r.rgFiles)} files)`} |`,
	),
	"",
	`recallRead, 50 messages around an entry in the middle of the biggest session, named by its id (${mb(sizes.get(biggest))}, ${count(messages.length)} messages): ${fmt(median(reads.map((r) => r.ms)))}, again in the same process ${fmt(median(reads.map((r) => r.again)))} (the page: ${reads[0].entries} entries, ${(reads[0].bytes / 1024).toFixed(0)} KB of text).`,
	"",
	"The prompt picker (listPrompts into the pi package's PromptPicker): the first batch, the first screen rendered, 20 prompts in, every file read.",
	"",
	"| store | scope | files | first batch | first screen | 20 prompts | all read | prompts |",
	"|---|---|---|---|---|---|---|---|",
	...pickerRows.map((r) => `| ${r.label} | ${r.scope} | ${count(r.files)} | ${fmt(r.firstBatch)} | ${fmt(r.firstScreen)} | ${fmt(r.screenful)} | ${fmt(r.total)} | ${count(r.prompts)} |`),
	"",
];
const text = lines.join("\n");
process.stdout.write(`\n${text}`);
fs.writeFileSync(path.join(BENCH_DIR, "results-recall.md"), text);

// ===== --big: recallRead of one big session =====

/** recallRead around the middle message of `file`, linked into a temp agent dir. */
function readBig(file) {
	const agentDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-recall-big-"));
	try {
		const folder = path.join(agentDir, "sessions", "--home-dev-big--");
		fs.mkdirSync(folder, { recursive: true });
		const linked = path.join(folder, `2026-01-01T00-00-00-000Z_${path.basename(file, ".jsonl")}.jsonl`);
		try {
			fs.linkSync(file, linked);
		} catch {
			fs.symlinkSync(file, linked); // another file system: a hard link cannot cross it
		}
		let around = opt("--around", undefined);
		let messages = 0;
		if (around === undefined) {
			// Messages' ids by pi's key order (type, id first), read 8 MB at a time: a child
			// process starts with its parent's peak RSS, which the workers report.
			const ids = [];
			const fd = fs.openSync(file, "r");
			const chunk = Buffer.alloc(8 << 20);
			let rest = "";
			for (let n; (n = fs.readSync(fd, chunk, 0, chunk.length, null)) > 0; ) {
				const text = rest + chunk.toString("latin1", 0, n);
				const end = text.lastIndexOf("\n") + 1;
				for (const m of text.slice(0, end).matchAll(/^\{"type":"message","id":"([^"]+)"/gm)) ids.push(m[1]);
				rest = text.slice(end);
			}
			fs.closeSync(fd);
			messages = ids.length;
			around = ids[Math.floor(ids.length / 2)];
		}
		const size = fs.statSync(file).size;
		console.log(`recallRead ${path.basename(file)} (${mb(size)}) around ${around}`);
		// Its recall index kept in a cache folder: made by the first read (timed once, untimed
		// samples after), then read by each new process.
		const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-recall-big-cache-"));
		const input = { session: linked, around, limit: 50, cwd: "/home/dev/big" };
		const making = work(agentDir, "read", input, cacheDir);
		const indexBytes = fs.readdirSync(path.join(cacheDir, "recall")).reduce((sum, name) => sum + fs.statSync(path.join(cacheDir, "recall", name)).size, 0);
		const runs = rounds({ made: () => work(agentDir, "read", input), kept: () => work(agentDir, "read", input, cacheDir) });
		fs.rmSync(cacheDir, { recursive: true, force: true });
		const row = (label, reads) =>
			`| ${label} | ${fmt(median(reads.map((r) => r.ms)))} | ${fmt(median(reads.map((r) => r.again)))} | ${fmt(median(reads.map((r) => r.next)))} | ${mb(median(reads.map((r) => r.rss * 1024)))} |`;
		const reads = runs.kept;
		const text = [
			`## recallRead of one big session, ${samples} samples`,
			"",
			`\`node benchmark/recall.mjs --big ${path.basename(file)} --samples ${samples}\`, ${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, load average ${loadAtStart} at the start. Medians of the time inside a fresh process (Node's start left out), page cache warm.`,
			"",
			`${path.basename(file)} (${mb(size)}${messages ? `, ${messages.toLocaleString("en-US")} messages` : ""}), 50 messages around ${around} (${reads[0].entries} entries, ${(reads[0].bytes / 1024).toFixed(0)} KB of text). Its recall index: ${mb(indexBytes)} on disk, made and written by the first read in ${fmt(making.ms)}.`,
			"",
			"| the session's recall index | first call | same call again | next page | peak RSS |",
			"|---|---|---|---|---|",
			row("kept in the cache folder by an earlier read", runs.kept),
			row("no cache folder: made in the process", runs.made),
			"",
		].join("\n");
		process.stdout.write(`\n${text}`);
		fs.writeFileSync(path.join(BENCH_DIR, "results-recall-big.md"), text);
	} finally {
		fs.rmSync(agentDir, { recursive: true, force: true });
	}
}
