// One measurement of benchmark/recall.mjs in a fresh process: prints one JSON line.
//
//   node recall-worker.mjs search  '{"query":"...","limit":20}'   recallSearch, every project, twice
//   node recall-worker.mjs oracle  '{"query":"...","limit":20}'   the JavaScript oracle of it
//   node recall-worker.mjs read    '{"session":"...","around":"...","limit":50}'   recallRead, twice, then its next page
//   node recall-worker.mjs prompts '{"scope":"all","cwd":"..."}'  the prompt picker over listPrompts
//
// PI_CODING_AGENT_DIR names the corpus. Times are inside the process, from the call.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "./datasets.mjs";

const require = createRequire(import.meta.url);
const [task, json] = process.argv.slice(2);
const args = JSON.parse(json ?? "{}");
const out = (result) => process.stdout.write(`${JSON.stringify({ ...result, rss: process.resourceUsage().maxRSS })}\n`);
// Every project: the cwd only names "this project", which scope "all" does not use.
const cwd = args.cwd ?? "/home/dev/project-00";

async function twice(call) {
	const t0 = performance.now();
	const first = await call();
	const t1 = performance.now();
	await call();
	return { first, ms: t1 - t0, again: performance.now() - t1 };
}

/** A message's searched texts as recall reads them: [kind, text] (kind: role, or toolCall). */
function textsOf(entry) {
	const blocks = (content, kind) => (typeof content === "string" ? [[kind, content]] : Array.isArray(content) ? content.filter((b) => b?.type === "text" && typeof b.text === "string").map((b) => [kind, b.text]) : []);
	if (entry.type === "compaction" || entry.type === "branch_summary") return typeof entry.summary === "string" ? [[entry.type, entry.summary]] : [];
	if (entry.type === "custom_message") return blocks(entry.content, entry.type);
	if (entry.type !== "message" || !entry.message) return [];
	const m = entry.message;
	if (m.role === "bashExecution") return typeof m.output === "string" ? [[m.role, m.output]] : [];
	if (m.role === "toolResult") return ["session_search", "session_read"].includes(m.toolName) ? [] : blocks(m.content, "toolResult");
	if (m.role !== "assistant") return blocks(m.content, m.role);
	if (typeof m.content === "string") return [["assistant", m.content]];
	return (m.content ?? []).flatMap((b) => {
		if (b?.type === "text" && typeof b.text === "string") return [["assistant", b.text]];
		if (b?.type === "toolCall" && !["session_search", "session_read"].includes(b.name)) return [[`toolCall ${b.name}`, `${b.name} ${JSON.stringify(b.arguments ?? {})}`]];
		return [];
	});
}

/**
 * recallSearch's hits the plain way: every session file of every project, newest first (by
 * mtime), read whole and each line JSON.parse'd; newest message first; one hit per message and
 * kind; stop past `limit`.
 */
function oracle(query, limit) {
	const root = path.join(process.env.PI_CODING_AGENT_DIR, "sessions");
	const files = fs
		.readdirSync(root)
		.flatMap((d) => fs.readdirSync(path.join(root, d)).filter((n) => n.endsWith(".jsonl")).map((n) => path.join(root, d, n)))
		.map((file) => ({ file, mtime: fs.statSync(file).mtimeMs }))
		.sort((a, b) => b.mtime - a.mtime);
	const needle = query.toLowerCase();
	let hits = 0;
	let read = 0;
	for (const { file } of files) {
		read++;
		const entries = [];
		for (const line of fs.readFileSync(file, "utf8").split("\n")) {
			if (line === "") continue;
			try {
				entries.push(JSON.parse(line));
			} catch {
				// a torn line: skipped, as pi skips it
			}
		}
		if (entries[0]?.type !== "session") continue;
		for (const entry of entries.reverse()) {
			const kinds = new Set(textsOf(entry).filter(([, text]) => text.toLowerCase().includes(needle)).map(([kind]) => kind));
			hits += kinds.size;
		}
		if (hits > limit) break;
	}
	return { hits: Math.min(hits, limit), truncated: hits > limit, filesRead: read };
}

if (task === "search") {
	const { recallSearch } = require(REPO_ROOT);
	const { first, ms, again } = await twice(() => recallSearch({ query: args.query, scope: "all", limit: args.limit, cwd }));
	out({ ms, again, hits: first.hits.length, truncated: first.truncated });
} else if (task === "oracle") {
	const t0 = performance.now();
	const result = oracle(args.query, args.limit);
	out({ ms: performance.now() - t0, ...result });
} else if (task === "read") {
	const { recallRead } = require(REPO_ROOT);
	const { first, ms, again } = await twice(() => recallRead({ session: args.session, around: args.around, limit: args.limit, cwd }));
	// The model paging on: the next page of the same branch.
	const t0 = performance.now();
	if (first.next !== null) await recallRead({ session: args.session, from: first.next, limit: args.limit, cwd });
	const next = first.next === null ? Number.NaN : performance.now() - t0;
	out({ ms, again, next, entries: first.entries.length, bytes: Buffer.byteLength(first.text) });
} else if (task === "prompts") {
	// The picker as the pi package opens it: its first screen rendered once the first batch is in.
	const { listPrompts } = require(REPO_ROOT);
	const { PromptPicker } = await import(pathToFileURL(path.join(REPO_ROOT, "extension", "prompt-picker.mjs")).href);
	const { getKeybindings } = await import("@earendil-works/pi-tui");
	const t0 = performance.now();
	let firstBatch;
	let firstScreen;
	let screenful;
	let count = 0;
	let done;
	const finished = new Promise((resolve) => (done = resolve));
	const picker = new PromptPicker({
		scope: args.scope,
		keybindings: getKeybindings(),
		onDone() {},
		load: (scope, { onPrompts, onProgress }) =>
			listPrompts({
				cwd,
				scope,
				onProgress,
				onPrompts: (batch) => {
					onPrompts(batch);
					count += batch.length;
					if (firstBatch === undefined) {
						firstBatch = performance.now() - t0;
						picker.render(160);
						firstScreen = performance.now() - t0;
					}
					if (screenful === undefined && count >= 20) screenful = performance.now() - t0;
				},
			}).then(() => done(performance.now() - t0)),
	});
	const total = await finished;
	out({ firstBatch, firstScreen, screenful, total, prompts: count });
} else {
	throw new Error(`unknown task ${task}`);
}
