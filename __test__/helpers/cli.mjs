// Running the real `bin/pi-sessions` as a child process, and the session files it is run on.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./reference.mjs";

export const BIN = path.join(REPO_ROOT, "bin", "pi-sessions");
export const GOLDEN_DIR = path.join(REPO_ROOT, "__test__", "golden", "cli");

/** A temp world: an agent dir (PI_CODING_AGENT_DIR) and a project dir to run in. */
export function makeWorld(prefix = "pi-cli-") {
	const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
	const agentDir = path.join(root, "agent");
	const project = path.join(root, "project");
	fs.mkdirSync(project, { recursive: true });
	const sessionDirOf = (cwd) => path.join(agentDir, "sessions", `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
	const sessionDir = sessionDirOf(project);
	fs.mkdirSync(sessionDir, { recursive: true });
	return {
		root,
		agentDir,
		project,
		sessionDir,
		sessionDirOf,
		cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
	};
}

/** Runs pi-sessions in the world, stdin/stdout/stderr as pipes (not terminals); killed after `timeout` ms if given. */
export function runCli(world, args, { env = {}, cwd = world.project, input, timeout } = {}) {
	const base = { ...process.env };
	for (const k of ["FORCE_COLOR", "NO_COLOR", "COLUMNS", "PI_SESSIONS_DEBUG", "PI_CODING_AGENT_SESSION_DIR", "PI_SESSION_NATIVE_CACHE_DIR"]) {
		delete base[k];
	}
	const result = spawnSync(process.execPath, [BIN, ...args], {
		cwd,
		// The CLI's listing cache defaults to $XDG_CACHE_HOME: inside the world too.
		env: {
			...base,
			PI_CODING_AGENT_DIR: world.agentDir,
			HOME: world.root,
			XDG_DATA_HOME: path.join(world.root, "xdg"),
			XDG_CACHE_HOME: path.join(world.root, "cache"),
			...env,
		},
		encoding: "utf8",
		input: input ?? "",
		maxBuffer: 256 << 20,
		timeout,
	});
	return { status: result.status, stdout: result.stdout, stderr: result.stderr, error: result.error };
}

/** The lines of a session written by a test: fixed ids and timestamps. */
export function fixedSession({ id, cwd, start = Date.parse("2026-01-02T03:04:05.000Z"), name, extra = true }) {
	let t = start;
	const ts = () => new Date((t += 1000)).toISOString();
	const header = { type: "session", version: 3, id, timestamp: new Date(start).toISOString(), cwd };
	const e = [];
	const add = (entry) => {
		e.push(entry);
		return entry;
	};
	const msg = (id, parentId, message) => add({ type: "message", id, parentId, timestamp: ts(), message: { ...message, timestamp: t } });
	add({ type: "model_change", id: "m0000001", parentId: null, timestamp: ts(), provider: "anthropic", modelId: "claude-test" });
	add({ type: "thinking_level_change", id: "t0000001", parentId: "m0000001", timestamp: ts(), thinkingLevel: "high" });
	msg("u0000001", "t0000001", { role: "user", content: "Hello, can you list the files?\nIn this folder." });
	msg("a0000001", "u0000001", {
		role: "assistant",
		content: [
			{ type: "text", text: "Sure, let me look." },
			{ type: "toolCall", id: "call1", name: "bash", arguments: { command: "ls -la" } },
		],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-test",
		usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason: "toolUse",
	});
	msg("r0000001", "a0000001", { role: "toolResult", toolCallId: "call1", toolName: "bash", content: [{ type: "text", text: "a.txt\nb.txt" }], isError: false });
	msg("a0000002", "r0000001", {
		role: "assistant",
		content: [{ type: "text", text: "There are two files: a.txt and b.txt." }],
		api: "anthropic-messages",
		provider: "anthropic",
		model: "claude-test",
		usage: { input: 20, output: 8, cacheRead: 0, cacheWrite: 0, totalTokens: 28, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason: "stop",
	});
	if (extra) {
		// A branch from the first answer, abandoned; then the main line goes on.
		msg("u0000002", "a0000001", { role: "user", content: "Actually, never mind." });
		add({ type: "label", id: "l0000001", parentId: "u0000002", timestamp: ts(), targetId: "u0000001", label: "start" });
		add({
			type: "branch_summary",
			id: "b0000001",
			parentId: "a0000002",
			timestamp: ts(),
			fromId: "u0000002",
			summary: "The user changed their mind.",
		});
		msg("u0000003", "b0000001", { role: "user", content: "Thanks! 日本語 too." });
		if (name) add({ type: "session_info", id: "s0000001", parentId: "u0000003", timestamp: ts(), name });
	}
	return [header, ...e];
}

export function writeSession(file, entries) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, entries.map((x) => JSON.stringify(x)).join("\n") + "\n");
	return file;
}

export const fileNameFor = (timestamp, id) => `${timestamp.replace(/[:.]/g, "-")}_${id}.jsonl`;

/** stdout/stderr with the world's temp root spelled <ROOT>, for golden files. */
export const normalizeRoot = (text, world) => {
	// Also as a session folder spells it (`--tmp-pi-cli-XXXX-project--`).
	const encoded = world.root.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-");
	return text.split(world.root).join("<ROOT>").split(encoded).join("<ROOT>");
};

/** Compares with a golden file; UPDATE_GOLDEN=1 writes it instead. */
export function golden(name, actual) {
	const file = path.join(GOLDEN_DIR, name);
	if (process.env.UPDATE_GOLDEN === "1") {
		fs.mkdirSync(GOLDEN_DIR, { recursive: true });
		fs.writeFileSync(file, actual);
		return actual;
	}
	return fs.readFileSync(file, "utf8");
}
