// Recall in real pi 1.6.0 (the devDependency's CLI on Node 22) under tmux, with this package
// as `pi -e <package dir>`, as pi-tui-grep.test.mjs drives /grep:
//
// - a scripted model (pi-ai's faux provider, registered by a small extension written here)
//   calls session_search and then session_read, and pi's TUI shows their compact lines: the
//   call with its query, one line per hit, the page's entry count;
// - the prompt picker: alt+r opens it on this project's prompts, newest first, typing
//   filters them, Tab shows every project's, and Enter puts the chosen prompt in pi's editor.
//
// pi needs Node >= 22.19 and tmux: the Node 20 pass skips this file, and so does a machine
// without tmux (a failure where CI=true), as in pi-tui.test.mjs.
//
//   node __test__/run.mjs __test__/pi-tui-recall.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, test } from "node:test";
import { encodeCwd, sessionText, writeCorpus } from "./helpers/pi-corpus.mjs";
import { PiWindow, REPO_ROOT, tmuxUnavailable } from "./helpers/pi-tmux.mjs";
import { skipForMissingTool } from "./helpers/tools.mjs";

const [major, minor] = process.versions.node.split(".").map(Number);
const skip =
	major < 22 || (major === 22 && minor < 19)
		? `pi needs Node >= 22.19 (this is ${process.version}); the Node 22 pass runs it`
		: skipForMissingTool(tmuxUnavailable());

const PI_AI = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-ai", "dist", "index.js");

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-tui-recall-"));
const windows = [];
after(() => {
	for (const w of windows) w.stop();
	fs.rmSync(root, { recursive: true, force: true });
});

/** A world of its own: agent dir with the generated corpus, home, project folder. */
function world(label) {
	const dir = path.join(root, label);
	const agentDir = path.join(dir, "agent");
	const home = path.join(dir, "home");
	const cwd = path.join(dir, "project");
	for (const d of [home, cwd]) fs.mkdirSync(d, { recursive: true });
	const realCwd = fs.realpathSync(cwd);
	writeCorpus(agentDir, realCwd, { folders: 2, perFolder: 5 });
	return { dir, agentDir, home, cwd: realCwd, env: { PI_SESSION_NATIVE_CACHE_DIR: path.join(dir, "cache") } };
}

/** A session of `w`'s project written at `startMs` (its file's mtime an hour later). */
function addSession(w, { id, startMs, turns, title }) {
	const file = path.join(w.agentDir, "sessions", encodeCwd(w.cwd), `${new Date(startMs).toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`);
	fs.writeFileSync(file, sessionText({ id, cwd: w.cwd, startMs, turns, title }));
	const mtime = (startMs + 3_600_000) / 1000;
	fs.utimesSync(file, mtime, mtime);
	return file;
}

async function startPi(w, args = []) {
	const win = await PiWindow.start({ cwd: w.cwd, agentDir: w.agentDir, home: w.home, args: ["-e", REPO_ROOT, ...args], env: w.env });
	windows.push(win);
	return win;
}

/** The editor's text: the lines between the two rules at the bottom of pi's screen. */
function editorLines(screen) {
	const lines = screen.split("\n");
	const rules = lines.map((l, i) => (/^─{20,}$/.test(l) ? i : -1)).filter((i) => i !== -1);
	if (rules.length < 2) return null;
	const [top, bottom] = rules.slice(-2);
	return lines.slice(top + 1, bottom).map((l) => l.trim());
}

test("a scripted model calls session_search, then session_read: pi shows each call and its result in one line", { skip }, async () => {
	const w = world("tools");
	const id = "0199eeee-0000-7000-8000-000000000001";
	addSession(w, { id, startMs: Date.UTC(2024, 0, 2), turns: 2, title: "why does the auth service say ECONNREFUSED" });
	const userEntry = `u0-${id}`.slice(0, 24);
	// The model: a search, a page around its hit, then an answer; pi-ai's faux provider
	// (the copy pi runs, by its file) registered as pi's docs register a provider.
	const extension = path.join(w.dir, "faux-model.mjs");
	fs.writeFileSync(
		extension,
		`import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from ${JSON.stringify(pathToFileURL(PI_AI).href)};
export default function (pi) {
  const faux = fauxProvider({ api: "faux", provider: "faux", models: [{ id: "faux-1", reasoning: false, contextWindow: 200000, maxTokens: 8192 }] });
  faux.setResponses([
    () => fauxAssistantMessage([fauxText("Looking in past sessions."), fauxToolCall("session_search", { query: "econnrefused", scope: "project" }, { id: "call_search" })], { stopReason: "toolUse" }),
    () => fauxAssistantMessage([fauxToolCall("session_read", { session: ${JSON.stringify(id)}, around: ${JSON.stringify(userEntry)} }, { id: "call_read" })], { stopReason: "toolUse" }),
    () => fauxAssistantMessage("The auth service could not reach its database."),
  ]);
  pi.registerProvider(faux.provider);
}
`,
	);
	const win = await startPi(w, ["-e", extension, "--model", "faux/faux-1"]);
	win.type("what did we find about the refused connections?");
	win.keys("Enter");
	const screen = await win.waitFor((s) => (s.includes("The auth service could not reach its database.") ? s : null), { what: "the model's answer after both tools" });
	// session_search: the call with its arguments, then one line per hit (session, time, role, entry).
	assert.match(screen, /session_search "econnrefused" scope:project/);
	const hits = screen.split("\n").filter((l) => l.trimStart().startsWith("0199eeee "));
	assert.equal(hits.length, 4, `the two user messages and two answers that say ECONNREFUSED, one line each:\n${screen}`);
	assert.ok(
		hits.some((l) => /0199eeee 2024-01-02 00:00 user u0-0199eeee-0000-7000-8/.test(l)),
		`the first prompt's hit: session, time, role and entry id on one line:\n${hits.join("\n")}`,
	);
	// session_read: the call, and the page in one line (its four entries, the end of the branch).
	assert.match(screen, new RegExp(`session_read "${id}" around:${userEntry}`));
	assert.match(screen, /4 entries of 0199eeee · end of branch/);
	// Compact: the page's text is not on screen (it shows when expanded).
	assert.doesNotMatch(screen, /Branch to leaf/);
	win.stop();
});

test("the prompt picker: alt+r lists this project's prompts newest first, typing filters, Enter puts the prompt in the editor", { skip }, async () => {
	const w = world("picker");
	// The newest session of the project: its prompts come first, the latest one on top.
	addSession(w, { id: "0199ffff-0000-7000-8000-000000000001", startMs: Date.UTC(2024, 5, 1), turns: 3, title: "deploy the staging cluster" });
	const win = await startPi(w);
	win.keys("M-r");
	const opened = await win.waitFor((s) => (s.includes("Prompts (Current Folder)") && s.includes("◉ Current Folder") ? s : null), { what: "the picker, loaded" });
	/** The picker's rows: after its search line, "› " on the selected one, "  " on the others. */
	const rows = (screen) => {
		const lines = screen.split("\n");
		const title = lines.findIndex((l) => l.startsWith("Prompts ("));
		const search = lines.findIndex((l, i) => i > title && l.startsWith(">"));
		if (title === -1 || search === -1) return [];
		const out = [];
		for (const line of lines.slice(search + 2)) {
			if (!/^(›| ) \S/.test(line) || /^\s*\(\d+\/\d+\)/.test(line)) break;
			out.push(line);
		}
		return out;
	};
	const first = rows(opened);
	assert.match(first[0], /^› follow-up 2 of deploy the staging cluster\s+\S+$/, opened);
	assert.match(first[1], /^ {2}follow-up 1 of deploy the staging cluster/, opened);
	assert.match(first[2], /^ {2}deploy the staging cluster/, opened);
	// Another project's prompts are not this project's.
	assert.ok(!opened.includes("in project 1:"), opened);

	win.type("rename");
	const filtered = await win.waitFor((s) => {
		const r = rows(s);
		return s.includes("> rename") && r.length > 0 && r.every((l) => /rename/i.test(l)) ? r : null;
	}, { what: "the list filtered to rename" });
	// writeCorpus: session 2 of this project ("rename the module"), its follow-ups first.
	assert.match(filtered[0], /^› follow-up 2 of task 0002 in project 0: rename the module/);
	assert.equal(filtered.length, 3, filtered.join("\n"));

	win.keys("Down");
	await win.waitFor((s) => (rows(s)[1]?.startsWith("› ") ? s : null), { what: "the second row selected" });
	win.keys("Enter");
	/** The editor's non-empty lines once the picker is closed and the editor holds text. */
	const editorText = (s) => {
		const text = s.includes("Prompts (") ? null : editorLines(s)?.filter((l) => l !== "");
		return text?.length ? text : null;
	};
	const editor = await win.waitFor(editorText, { what: "the picker closed and the prompt in the editor" });
	assert.deepEqual(editor, ["follow-up 1 of task 0002 in project 0: rename the module"]);

	// Tab: every project's prompts, another project's among them.
	win.keys("M-r");
	await win.waitFor((s) => (s.includes("◉ Current Folder") ? s : null), { what: "the picker again" });
	win.keys("Tab");
	const all = await win.waitFor((s) => (s.includes("Prompts (All)") && s.includes("◉ All") ? s : null), { what: "every project's prompts" });
	assert.match(all, /in project 1:/);
	win.keys("Escape");
	const closed = await win.waitFor(editorText, { what: "the picker closed by Escape" });
	assert.deepEqual(closed, ["follow-up 1 of task 0002 in project 0: rename the module"], "Escape leaves the editor as it was");
	win.stop();
});
