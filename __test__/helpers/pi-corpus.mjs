// Session folders for driving real pi (the pi package's tests and benchmark): an agent dir
// whose sessions/ holds one folder per project, one of them the folder of the cwd pi runs in.
// Dates are fixed and old (2023), so that pi's relative ages ("1y ago") do not move
// between two runs of pi; every session's first message and name are unique.
import fs from "node:fs";
import path from "node:path";

const J = (v) => JSON.stringify(v);
const BASE_MS = Date.UTC(2023, 2, 1, 9, 0, 0);

/** pi's folder name for a cwd (the reference's encoding). */
export function encodeCwd(cwd) {
	return `--${path.resolve(cwd).replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
}

/** About `size` characters of words (varying with `seed`) and a blank line; "" for 0. */
function filler(size, seed) {
	if (size === 0) return "";
	const words = ["parser", "listing", "session", "index", "branch", "folder", "module", "worker", "render", "cache"];
	let text = "";
	for (let i = 0; text.length < size; i++) text += `${words[(seed * 7 + i * 3) % words.length]}${i % 12 === 11 ? ".\n" : " "}`;
	return `${text.trimEnd()}\n\n`;
}

/**
 * One session file's text: header, `turns` user/assistant pairs (each reply costing `cost`
 * dollars, each answer led by about `bulk` characters of filler), maybe a name.
 */
export function sessionText({ id, cwd, startMs, turns, title, name, parentSession, cost = 0, bulk = 0 }) {
	const iso = (ms) => new Date(ms).toISOString();
	const out = [J({ type: "session", version: 3, id, timestamp: iso(startMs), cwd, ...(parentSession ? { parentSession } : {}) })];
	let parentId = null;
	for (let t = 0; t < turns; t++) {
		const at = startMs + (t * 2 + 1) * 1000;
		const user = `u${t}-${id}`.slice(0, 24);
		const text = t === 0 ? title : `follow-up ${t} of ${title}`;
		out.push(J({ type: "message", id: user, parentId, timestamp: iso(at), message: { role: "user", content: text, timestamp: at } }));
		const assistant = `a${t}-${id}`.slice(0, 24);
		out.push(
			J({
				type: "message",
				id: assistant,
				parentId: user,
				timestamp: iso(at + 1000),
				message: {
					role: "assistant",
					content: [{ type: "text", text: `${filler(bulk, t)}answer ${t} to ${title}` }],
					provider: "test-provider",
					model: "test-model",
					usage: { input: 100 + t, output: 20 + t, cacheRead: 0, cacheWrite: 0, totalTokens: 120 + 2 * t, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost } },
					stopReason: "stop",
					timestamp: at + 1000,
				},
			}),
		);
		parentId = assistant;
	}
	if (name) out.push(J({ type: "session_info", id: `n-${id}`.slice(0, 24), parentId, timestamp: iso(startMs + turns * 2000 + 500), name }));
	return `${out.join("\n")}\n`;
}

/**
 * Writes `folders` project folders of `perFolder` sessions under agentDir/sessions; the
 * first folder is `cwd`'s (pi's current folder), the others belong to made-up projects.
 * Modified times are spread over months and distinct; one session in ten is a fork of the
 * one before it (pi's threaded order nests it). Returns { cwd, dirs, files }.
 */
export function writeCorpus(agentDir, cwd, { folders = 3, perFolder = 30 } = {}) {
	const dirs = [];
	let files = 0;
	for (let f = 0; f < folders; f++) {
		const projectCwd = f === 0 ? path.resolve(cwd) : `/home/dev/project-${String(f).padStart(2, "0")}`;
		const dir = path.join(agentDir, "sessions", encodeCwd(projectCwd));
		fs.mkdirSync(dir, { recursive: true });
		let previous;
		for (let i = 0; i < perFolder; i++) {
			const n = f * perFolder + i;
			// Interleaved across folders, 7 hours apart: All mixes the projects.
			const startMs = BASE_MS + (i * folders + f) * 7 * 3_600_000;
			const id = `0186a1b2-${String(f).padStart(4, "0")}-7000-8000-${String(i).padStart(12, "0")}`;
			const title = `task ${String(n).padStart(4, "0")} in project ${f}: ${["fix the parser", "add a test", "rename the module", "speed up listing", "update docs"][n % 5]}`;
			const name = n % 4 === 1 ? `named ${String(n).padStart(4, "0")}` : undefined;
			const file = path.join(dir, `${new Date(startMs).toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`);
			const parentSession = i % 10 === 3 ? previous : undefined;
			fs.writeFileSync(file, sessionText({ id, cwd: projectCwd, startMs, turns: 1 + (n % 3), title, name, parentSession }));
			previous = file;
			const mtime = (startMs + 3_600_000) / 1000;
			fs.utimesSync(file, mtime, mtime);
			files++;
		}
		dirs.push(dir);
	}
	return { cwd: path.resolve(cwd), dirs, files };
}
