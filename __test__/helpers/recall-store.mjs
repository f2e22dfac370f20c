// A seeded store of sessions written by pi's own SessionManager (the reference) for the
// recall tests, and an oracle of recallSearch and recallRead written here, over pi's own
// class: its listing (list/listAll) for the order, open() and getEntries()/getBranch() for
// what each file holds. Nothing here imports lib/.
//
// The store: two projects; sessions with user and assistant text, thinking, tool calls and
// results (the recall tools' own among them, their results holding the words searched),
// user shell commands, custom messages, compactions, branches with and without summaries,
// labels, names and model changes; forks made by forkFrom (a fork of a fork, one into the
// other project) and by createBranchedSession; one file with a torn line in its middle,
// and a file in a session folder that is no session. Time is a fake clock that moves a
// few minutes per entry, so that dates select something.
import fs from "node:fs";
import path from "node:path";
import { blocksOf, oracleRegExp } from "./grep-oracle.mjs";

export const WORDS = [
	"deploy", "postgres", "migration", "config", "econnrefused", "auth", "cache", "build", "release", "login",
	"timeout", "retry", "a.b", "fix", "schema", "lint", "rollback", "ünïcode", "日本語", "(x)",
];
export const QUERIES = ["deploy", "DEPLOY", "Postgres", "migration", "a.b", "ünïcode", "日本語", "rollback", "login timeout", "econn", "(x)", "zzz-none"];
export const RECALL_TOOLS = ["session_search", "session_read"];
export const SEARCH_FIELDS = ["text", "toolResult", "summary", "toolCall", "custom"];
const ROLE_FIELDS = { user: ["text"], assistant: ["text"], toolCall: ["toolCall"], toolResult: ["toolResult"] };
const FILE_KEYS = ["path", "file_path", "filePath", "file"];
const FILES = ["src/app.ts", "src/db/schema.sql", "README.md", "lib/auth.js", "test/app.test.ts"];
const DAY_MS = 24 * 60 * 60 * 1000;

/** Runs `fn` with `Date` replaced by a clock that stands still until `advance(ms)`. */
export function withFakeClock(startMs, fn) {
	const RealDate = globalThis.Date;
	let now = startMs;
	class FakeDate extends RealDate {
		constructor(...args) {
			if (args.length === 0) super(now);
			else super(...args);
		}
		static now() {
			return now;
		}
	}
	globalThis.Date = FakeDate;
	try {
		return fn({ advance: (ms) => (now += ms), now: () => now });
	} finally {
		globalThis.Date = RealDate;
	}
}

const hex = (rng, n) => Array.from({ length: n }, () => "0123456789abcdef"[rng.int(16)]).join("");
/** Ids that all begin with "0198", so that a short prefix names several sessions. */
export const sessionIdOf = (rng) => `0198${hex(rng, 4)}-${hex(rng, 4)}-7${hex(rng, 3)}-8${hex(rng, 3)}-${hex(rng, 12)}`;

function words(rng, min, max) {
	const n = min + rng.int(max - min + 1);
	const out = [];
	for (let i = 0; i < n; i++) out.push(rng.pick(WORDS) + (rng.bool(0.1) ? "\n" : ""));
	return out.join(" ");
}

/** A session's entries, appended one at a time as pi appends them, a few minutes apart. */
export function fillSession(sm, rng, clock, steps, project, withRecall = false) {
	const tick = () => clock.advance(60_000 + rng.int(5 * 60_000));
	const onBranch = () => sm.getBranch().map((e) => e.id);
	const user = () => {
		tick();
		const text = words(rng, 2, 12);
		sm.appendMessage({ role: "user", content: rng.bool() ? text : [{ type: "text", text }], timestamp: Date.now() });
	};
	const assistant = (calls = []) => {
		tick();
		const content = [];
		if (rng.bool(0.4)) content.push({ type: "thinking", thinking: words(rng, 3, 8) });
		if (calls.length === 0 || rng.bool()) content.push({ type: "text", text: words(rng, 2, 15) });
		content.push(...calls);
		sm.appendMessage({ role: "assistant", content, api: "faux", provider: "faux", model: "faux-1", stopReason: calls.length ? "toolUse" : "stop", timestamp: Date.now() });
	};
	const toolCall = (name) => {
		const id = `call_${hex(rng, 8)}`;
		const kind = name ?? rng.weighted([[3, "read"], [2, "edit"], [2, "bash"], [1, "write"], [1, "grep"], [2, "session_search"], [1, "session_read"]]);
		const file = rng.pick(FILES);
		const asPath = rng.pick([file, path.join(project, file), `@${file}`]);
		const args = {
			read: { path: asPath },
			edit: { path: asPath, edits: [{ oldText: words(rng, 1, 2), newText: words(rng, 1, 2) }] },
			bash: { command: `npm run ${rng.pick(WORDS)}` },
			write: { file_path: asPath, content: words(rng, 2, 6) },
			grep: { pattern: rng.pick(WORDS), path: "src" },
			session_search: { query: rng.pick(WORDS) },
			session_read: { session: "current", from: "start" },
		}[kind];
		return { type: "toolCall", id, name: kind, arguments: args };
	};
	const results = (calls) => {
		for (const call of calls) {
			tick();
			// The recall tools' results hold what was searched: every query of theirs matches them.
			const text = RECALL_TOOLS.includes(call.name) ? `1 hit for "${call.arguments.query ?? "x"}": ${words(rng, 3, 8)}` : words(rng, 1, 20);
			sm.appendMessage({ role: "toolResult", toolCallId: call.id, toolName: call.name, content: [{ type: "text", text }], isError: rng.bool(0.1), timestamp: Date.now() });
		}
	};
	user();
	assistant();
	if (withRecall) {
		const calls = [toolCall("session_search"), toolCall("session_read")];
		assistant(calls);
		results(calls);
	}
	for (let s = 0; s < steps; s++) {
		const op = rng.weighted([[5, "user"], [4, "assistant"], [4, "tools"], [1, "compaction"], [1, "branch"], [1, "branchSummary"], [1, "custom"], [1, "bash"], [1, "model"], [1, "label"], [1, "name"]]);
		if (op === "user") user();
		else if (op === "assistant") assistant();
		else if (op === "tools") {
			const calls = Array.from({ length: 1 + rng.int(2) }, () => toolCall());
			assistant(calls);
			results(calls);
		} else if (op === "compaction") {
			tick();
			const ids = onBranch();
			sm.appendCompaction(words(rng, 5, 20), ids[Math.floor(ids.length / 2)], 1000 + rng.int(50_000));
		} else if (op === "branch" || op === "branchSummary") {
			const ids = onBranch();
			const at = ids[rng.int(ids.length)];
			tick();
			if (op === "branch") sm.branch(at);
			else sm.branchWithSummary(at, words(rng, 4, 12));
			user();
		} else if (op === "custom") {
			tick();
			sm.appendCustomMessageEntry("note", rng.bool() ? words(rng, 2, 8) : [{ type: "text", text: words(rng, 2, 8) }], true);
		} else if (op === "bash") {
			tick();
			sm.appendMessage({ role: "bashExecution", command: `git ${rng.pick(WORDS)}`, output: words(rng, 1, 10), exitCode: rng.int(2), cancelled: false, truncated: false, timestamp: Date.now() });
		} else if (op === "model") {
			tick();
			sm.appendModelChange("faux", `faux-${1 + rng.int(2)}`);
		} else if (op === "label") {
			tick();
			const ids = onBranch();
			sm.appendLabelChange(ids[rng.int(ids.length)], rng.pick(["checkpoint", "start", "bug"]));
		} else {
			tick();
			sm.appendSessionInfo(`${rng.pick(WORDS)} ${rng.pick(WORDS)}`);
		}
	}
}

/**
 * Writes the store under `root` with pi's `SessionManager` and returns
 * `{ agentDir, projects: [alpha, beta], files, damaged, forks }`. Sets PI_CODING_AGENT_DIR.
 */
export function writeRecallStore(SessionManager, root, rng) {
	const agentDir = path.join(root, "agent");
	process.env.PI_CODING_AGENT_DIR = agentDir;
	const alpha = path.join(root, "alpha");
	const beta = path.join(root, "beta");
	fs.mkdirSync(alpha, { recursive: true });
	fs.mkdirSync(beta, { recursive: true });
	const files = [];
	const forks = [];
	// Weeks before now, so that "days ago" reaches into the store too.
	withFakeClock(Date.now() - 20 * DAY_MS, (clock) => {
		const create = (cwd) => {
			clock.advance(DAY_MS / 4 + rng.int(DAY_MS));
			const sm = SessionManager.create(cwd, undefined, { id: sessionIdOf(rng) });
			fillSession(sm, rng, clock, 4 + rng.int(14), cwd, files.length === 0);
			files.push(sm.getSessionFile());
			return sm.getSessionFile();
		};
		const base = [];
		for (let i = 0; i < 4 + rng.int(3); i++) base.push(create(alpha));
		for (let i = 0; i < 2 + rng.int(2); i++) create(beta);
		const fork = (source, cwd, steps) => {
			clock.advance(60_000 * (1 + rng.int(60)));
			const sm = SessionManager.forkFrom(source, cwd, undefined, { id: sessionIdOf(rng) });
			if (steps > 0) fillSession(sm, rng, clock, steps, cwd);
			files.push(sm.getSessionFile());
			forks.push(sm.getSessionFile());
			return sm.getSessionFile();
		};
		const first = fork(rng.pick(base), alpha, 2 + rng.int(5));
		fork(first, alpha, rng.int(3));
		fork(rng.pick(base), beta, 1 + rng.int(3));
		// /tree's "new session from here": the branch up to an entry, then a conversation of its own.
		const opened = SessionManager.open(rng.pick(base));
		const branch = opened.getBranch();
		clock.advance(60_000 * (1 + rng.int(60)));
		opened.createBranchedSession(branch[1 + rng.int(branch.length - 1)].id);
		fillSession(opened, rng, clock, 1 + rng.int(5), alpha);
		files.push(opened.getSessionFile());
		forks.push(opened.getSessionFile());
	});
	// One torn line in the middle of a file: pi reads around it.
	const damaged = rng.pick(files.filter((f) => !forks.includes(f)));
	const lines = fs.readFileSync(damaged, "utf8").split("\n");
	const torn = 2 + rng.int(lines.length - 4);
	lines[torn] = lines[torn].slice(0, Math.floor(lines[torn].length / 2));
	fs.writeFileSync(damaged, lines.join("\n"));
	// A file in a session folder that is no session: listed by nobody, read by nobody.
	fs.writeFileSync(path.join(path.dirname(files[0]), "notes.jsonl"), '{"not":"a session"}\ndeploy deploy\n');
	return { agentDir, projects: [alpha, beta], files, damaged, forks };
}

// ===== the oracle =====

const isReadable = (e) =>
	(e.type === "message" && e.message?.role !== "system") || e.type === "compaction" || e.type === "branch_summary" || e.type === "custom_message";

/** pi's view of the store, each file opened once: entries, header, ids. */
export class PiView {
	constructor(SessionManager) {
		this.SM = SessionManager;
		this.opened = new Map();
	}

	open(file) {
		if (!this.opened.has(file)) {
			let sm = null;
			try {
				sm = fs.existsSync(file) ? this.SM.open(file) : null;
			} catch {
				sm = null;
			}
			this.opened.set(file, sm);
		}
		return this.opened.get(file);
	}

	holds(file, id) {
		return this.open(file)?.getEntry(id) !== undefined;
	}

	parent(file) {
		const parent = this.open(file)?.getHeader()?.parentSession;
		return typeof parent === "string" && parent !== "" ? path.resolve(parent) : undefined;
	}
}

/** `file` (which holds entry `id`) and the files up its parentSession chain that hold it too, nearest first (each once). */
function carriers(view, file, id) {
	const chain = [file];
	for (let at = view.parent(file); at !== undefined && !chain.includes(at) && view.holds(at, id); at = view.parent(at)) chain.push(at);
	return chain;
}

/** The oracle's session_search: `{ hits, sessions?, truncated }` as recallSearch gives them (no text). */
export async function oracleSearch(view, { cwd, scope = "project", query, role, after, before, file, sessionFile, limit = 20 }) {
	const SM = view.SM;
	const listed = scope === "all" ? await SM.listAll() : await SM.list(cwd);
	let sessions = listed;
	if (sessionFile !== undefined) {
		const everywhere = [...listed, ...(await SM.listAll())];
		sessions = [everywhere.find((s) => s.path === sessionFile)];
	}
	if (file !== undefined) sessions = sessions.filter((s) => touches(view, s, file, cwd));
	const from = after === undefined ? -Infinity : after;
	const to = before === undefined ? Infinity : before;
	if (query === undefined) {
		const active = sessions.filter((s) => s.modified.getTime() >= from && s.created.getTime() <= to);
		return {
			hits: [],
			sessions: active.slice(0, limit).map((s) => ({
				sessionId: s.id,
				sessionFile: s.path,
				cwd: s.cwd,
				name: s.name ?? null,
				firstMessage: s.firstMessage,
				modified: s.modified.toISOString(),
				size: fs.statSync(s.path).size,
			})),
			truncated: active.length > limit,
		};
	}
	const searched = new Set(sessions.map((s) => path.resolve(s.path)));
	const regexp = oracleRegExp(query);
	const fields = role === undefined ? SEARCH_FIELDS : ROLE_FIELDS[role];
	const hits = [];
	for (const s of sessions) {
		const sm = view.open(s.path);
		if (!sm) continue;
		const found = new Map();
		for (const entry of sm.getEntries()) {
			const time = new Date(entry.timestamp).getTime();
			if (!(time >= from && time <= to)) continue;
			for (const block of blocksOf(entry, fields)) {
				regexp.lastIndex = 0;
				if (![...block.text.matchAll(regexp)].some((m) => m[0].length > 0)) continue;
				const kind = block.field === "toolCall" ? "toolCall" : block.role;
				const toolName =
					kind === "toolCall" ? entry.message.content[block.blockIndex].name : kind === "toolResult" ? (entry.message.toolName ?? null) : null;
				if (RECALL_TOOLS.includes(toolName)) continue;
				if (role !== undefined && kind !== role) continue;
				const key = `${entry.id}|${kind}|${toolName}`;
				if (!found.has(key)) found.set(key, { entry, kind, toolName, block });
			}
		}
		const here = path.resolve(s.path);
		for (const { entry, kind, toolName, block } of [...found.values()].reverse()) {
			// Shown in the searched file nearest to where the entry was first written (the store has no cycles).
			const shownIn = carriers(view, here, entry.id).filter((f) => searched.has(f)).pop();
			if (shownIn !== here) continue;
			// Forks carrying it: listed sessions whose chain of carriers passes through this file.
			const forks = listed.filter((other) => {
				const theirs = path.resolve(other.path);
				return theirs !== here && view.holds(theirs, entry.id) && carriers(view, theirs, entry.id).includes(here);
			}).length;
			hits.push({
				sessionId: s.id,
				sessionFile: s.path,
				cwd: s.cwd,
				sessionName: s.name ?? null,
				entryId: entry.id,
				role: kind,
				toolName,
				timestamp: entry.timestamp,
				forks,
				text: block.text,
			});
		}
	}
	return { hits: hits.slice(0, limit), truncated: hits.length > limit };
}

/** Whether a session's tool calls (not the recall tools') name `file`. */
function touches(view, session, file, cwd) {
	const wanted = file.replace(/^@/, "");
	const matches = (p) => {
		const resolved = path.resolve(session.cwd || cwd, p.replace(/^@/, ""));
		return path.isAbsolute(wanted) ? resolved === path.resolve(wanted) : resolved === path.resolve(cwd, wanted) || resolved.endsWith(`/${path.normalize(wanted)}`);
	};
	const sm = view.open(session.path);
	if (!sm) return false;
	return sm.getEntries().some(
		(e) =>
			e.type === "message" &&
			e.message.role === "assistant" &&
			Array.isArray(e.message.content) &&
			e.message.content.some(
				(b) =>
					b?.type === "toolCall" &&
					!RECALL_TOOLS.includes(b.name) &&
					[...FILE_KEYS.map((k) => b.arguments?.[k]), ...(Array.isArray(b.arguments?.paths) ? b.arguments.paths : [])].some(
						(v) => typeof v === "string" && v !== "" && matches(v),
					),
			),
	);
}

/** The oracle's session_read page: `{ entries, next, leafId }` (no text; pages are small enough never to be cut). */
export function oracleRead(view, file, { around, from, last, limit = 50, leaf }) {
	const sm = view.open(file);
	let leafId = leaf ?? sm.getLeafId();
	const target = around ?? (from !== undefined && from !== "start" ? from : undefined);
	let branch = sm.getBranch(leafId);
	if (target !== undefined && !branch.some((e) => e.id === target)) {
		// The branch through the entry, down to its newest leaf.
		let here = target;
		for (let kids = sm.getChildren(here); kids.length > 0; kids = sm.getChildren(here)) here = kids[kids.length - 1].id;
		leafId = here;
		branch = sm.getBranch(here);
	}
	const readable = branch.filter(isReadable);
	const size = last ?? limit;
	let start = 0;
	if (last !== undefined) start = Math.max(0, readable.length - last);
	else if (target !== undefined) {
		const at = branch.findIndex((e) => e.id === target);
		let k = readable.findIndex((e) => branch.indexOf(e) >= at);
		if (k === -1) k = readable.length;
		start = around !== undefined ? Math.max(0, Math.min(k - Math.floor((size - 1) / 2), readable.length - size)) : k;
	}
	const page = readable.slice(start, start + size);
	return {
		leafId,
		entries: page.map((e) => ({ id: e.id, type: e.type, role: e.type === "message" ? e.message.role : null })),
		next: start + page.length < readable.length ? readable[start + page.length].id : null,
	};
}
