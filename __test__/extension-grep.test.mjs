// /grep in the pi extension, against a stand-in for pi's ExtensionAPI and command ctx
// (as extension.test.mjs does for /usage and /doctor): registered; the view lists what
// grepSessions finds for the project (or every project with --all); Enter shows the
// message with its neighbours, Enter again resumes that session through
// ctx.switchSession; Escape closes without switching; a bad regex shows V8's message.
//
//   node __test__/run.mjs __test__/extension-grep.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { entryText, GrepView, matchSnippet, neighbours, parseGrepArgs } from "../extension/grep.mjs";
import { tempDir } from "./helpers/harness.mjs";

const require = createRequire(import.meta.url);
const { grepSessions, loadEntriesFromFile } = require("../index.js");

// pi 1.6.0's TUI (which the extension imports) needs Node 22, as in extension.test.mjs.
const piLoads = typeof fs.globSync === "function" ? false : "pi 1.6.0 needs Node 22; run.mjs runs this file there too";

const root = tempDir("ext-grep");
after(() => fs.rmSync(root, { recursive: true, force: true }));
const cwd = "/home/user/grep-project";
const folder = path.join(root, "sessions", "--home-user-grep-project--");
const otherFolder = path.join(root, "sessions", "--home-user-elsewhere--");
const ts = (k) => new Date(Date.UTC(2025, 0, 1, 0, k)).toISOString();

function writeSession(dir, id, sessionCwd, texts) {
	fs.mkdirSync(dir, { recursive: true });
	const lines = [{ type: "session", version: 3, id, timestamp: ts(0), cwd: sessionCwd }];
	let parent = null;
	texts.forEach(([role, text], k) => {
		const entryId = `${id.slice(-2)}${String(k).padStart(6, "0")}`;
		const content = role === "user" ? text : [{ type: "text", text }];
		lines.push({ type: "message", id: entryId, parentId: parent, timestamp: ts(k + 1), message: { role, content, timestamp: 1 } });
		parent = entryId;
	});
	const file = path.join(dir, `2025-01-01T00-00-0${id.slice(-1)}-000Z_${id}.jsonl`);
	fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
	return file;
}

const here = writeSession(folder, "0199aaaa-0000-7000-8000-000000000001", cwd, [
	["user", "The auth service says ECONNREFUSED"],
	["assistant", "Port 5432 is closed; start postgres."],
	["user", "Fixed the ECONNREFUSED, thanks"],
	["assistant", "Good."],
]);
writeSession(otherFolder, "0199aaaa-0000-7000-8000-000000000002", "/home/user/elsewhere", [["user", "econnrefused elsewhere"]]);

test("parseGrepArgs: the pattern, with --all first for every project", () => {
	assert.deepEqual(parseGrepArgs("  ECONNREFUSED "), { pattern: "ECONNREFUSED", all: false });
	assert.deepEqual(parseGrepArgs("--all re:foo\\d"), { pattern: "re:foo\\d", all: true });
	assert.equal(parseGrepArgs(""), null);
	assert.equal(parseGrepArgs("--all"), null);
	assert.equal(parseGrepArgs(undefined), null);
});

test("neighbours: the matched entry and those with text around it", () => {
	const entries = loadEntriesFromFile(here);
	const around = neighbours(entries, { entryId: "01000001", ranges: [[0, 1]], text: "x" }, 1);
	assert.equal(around.entry.id, "01000001");
	assert.deepEqual(around.before.map((e) => e.id), ["01000000"]);
	assert.deepEqual(around.after.map((e) => e.id), ["01000002"]);
	assert.equal(entryText(around.entry), "Port 5432 is closed; start postgres.");
	assert.equal(matchSnippet({ text: `${"a".repeat(100)}NEEDLE${"b".repeat(100)}`, ranges: [[100, 106]] }, 3), "…aaaNEEDLEbbb…");
});

/** The extension's factory run against a recording stand-in for pi's ExtensionAPI. */
async function loadExtension() {
	const { default: piSessionNative } = await import("../extension/index.mjs");
	const commands = new Map();
	piSessionNative({ on() {}, registerCommand: (name, options) => commands.set(name, options), registerTool() {}, registerShortcut() {} });
	return commands;
}

/** Runs /grep with a ctx like pi's interactive one; `keys(view)` drives the view once the reading is done. */
async function runGrepCommand(command, args, keys) {
	const notices = [];
	const switched = [];
	let view;
	const ctx = {
		mode: "tui",
		hasUI: true,
		cwd,
		sessionManager: { getSessionDir: () => folder },
		switchSession: async (file) => switched.push(file),
		ui: {
			notify: (message, type) => notices.push({ message, type }),
			custom: (factory) =>
				new Promise((resolve) => {
					view = factory({ requestRender() {} }, null, null, resolve);
					const wait = () => (view.done ? keys(view) : setTimeout(wait, 5));
					wait();
				}),
		},
	};
	const previous = process.env.PI_CODING_AGENT_DIR;
	process.env.PI_CODING_AGENT_DIR = root;
	try {
		await command.handler(args, ctx);
	} finally {
		if (previous === undefined) delete process.env.PI_CODING_AGENT_DIR;
		else process.env.PI_CODING_AGENT_DIR = previous;
	}
	return { notices, switched, view };
}

test("/grep: registered; lists grepSessions' matches, opens one with its neighbours, resumes its session", { skip: piLoads }, async () => {
	const commands = await loadExtension();
	assert.ok(commands.has("grep"), "/grep is registered");
	const grep = commands.get("grep");
	let screens = {};
	const shown = await runGrepCommand(grep, "econnrefused", (view) => {
		screens.list = view.render(100).join("\n");
		view.handleInput("\x1b[B"); // down: the second match
		view.handleInput("\r"); // open it
		screens.detail = view.render(100).join("\n");
		view.handleInput("\r"); // resume
	});
	const expected = await grepSessions("econnrefused", { cwd, sessionDir: folder });
	assert.equal(expected.length, 2);
	assert.deepEqual(shown.view.matches, expected);
	assert.match(screens.list, /2 matches/);
	assert.ok(screens.list.includes("The auth service says ECONNREFUSED"), screens.list);
	assert.ok(!screens.list.includes("elsewhere"), "only this project");
	// The second match with the entries before and after it.
	assert.ok(screens.detail.includes("Fixed the ECONNREFUSED, thanks"), screens.detail);
	assert.ok(screens.detail.includes("Port 5432 is closed; start postgres."), screens.detail);
	assert.ok(screens.detail.includes("Good."), screens.detail);
	assert.deepEqual(shown.switched, [here]);
	assert.deepEqual(shown.notices, []);

	// --all reads every project; Escape closes without switching.
	const everywhere = await runGrepCommand(grep, "--all econnrefused", (view) => {
		view.handleInput("\x1b");
	});
	assert.equal(everywhere.view.matches.length, 3);
	assert.deepEqual(everywhere.switched, []);

	// A bad regex: V8's words in the view; no pattern: a usage notice.
	const bad = await runGrepCommand(grep, "re:(", (view) => view.handleInput("\x1b"));
	assert.match(bad.view.render(100).join("\n"), /Invalid regular expression: \/\(\/gi: Unterminated group/);
	const none = await runGrepCommand(grep, "  ", () => {});
	assert.deepEqual(none.notices, [{ message: "Usage: /grep [--all] <text or re:regex>", type: "error" }]);
});

test("GrepView keeps at most MAX_MATCHES and says so", { skip: piLoads }, () => {
	const view = new GrepView({ pattern: "x", onClose() {}, loadEntries: () => [] });
	const match = { path: "/p", sessionId: "s", role: "user", timestamp: ts(1), text: "x", ranges: [[0, 1]] };
	let kept = true;
	for (let i = 0; i < 1000 && kept; i++) kept = view.addMatch(match);
	assert.equal(kept, false);
	assert.equal(view.addMatch(match), false);
	view.setDone();
	assert.match(view.render(80).join("\n"), /1000\+ matches/);
});
