// /grep in real pi 1.6.0 (the devDependency's CLI on Node 22) under tmux, as
// pi-tui.test.mjs runs /usage and /doctor: with this package as `pi -e <package dir>`,
// /grep lists the matching message, Enter shows it with its neighbours, and Enter again
// resumes its session (pi then shows that session's messages).
//
// pi needs Node >= 22.19 and tmux: the Node 20 pass and machines without tmux skip it.
//
//   node __test__/run.mjs __test__/pi-tui-grep.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { encodeCwd, sessionText, writeCorpus } from "./helpers/pi-corpus.mjs";
import { PiWindow, REPO_ROOT, tmuxUnavailable } from "./helpers/pi-tmux.mjs";

const [major, minor] = process.versions.node.split(".").map(Number);
const skip =
	major < 22 || (major === 22 && minor < 19)
		? `pi needs Node >= 22.19 (this is ${process.version}); the Node 22 pass runs it`
		: (tmuxUnavailable() ?? false);

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-tui-grep-"));
const windows = [];
after(() => {
	for (const w of windows) w.stop();
	fs.rmSync(root, { recursive: true, force: true });
});

test("/grep in pi: the matching message, its neighbours, and Enter resumes its session", { skip }, async () => {
	const agentDir = path.join(root, "agent");
	const home = path.join(root, "home");
	const cwd = path.join(root, "project");
	for (const d of [home, cwd]) fs.mkdirSync(d, { recursive: true });
	const realCwd = fs.realpathSync(cwd);
	writeCorpus(agentDir, realCwd, { folders: 2, perFolder: 5 });
	// An older session of this project holds the messages that match (three turns: six).
	const id = "0199dddd-0000-7000-8000-000000000001";
	const startMs = Date.UTC(2024, 0, 2);
	const file = path.join(agentDir, "sessions", encodeCwd(realCwd), `${new Date(startMs).toISOString().replace(/[:.]/g, "-")}_${id}.jsonl`);
	fs.writeFileSync(file, sessionText({ id, cwd: realCwd, startMs, turns: 3, title: "why does the auth service say ECONNREFUSED" }));

	const win = await PiWindow.start({ cwd: realCwd, agentDir, home, args: ["-e", REPO_ROOT], env: { PI_SESSION_NATIVE_CACHE_DIR: path.join(root, "cache") } });
	windows.push(win);
	await win.command("/grep econnrefused");
	const list = await win.waitFor((s) => (/grep econnrefused/.test(s) && /\b6 matches\b/.test(s) && !/reading…/.test(s) ? s : null), { what: "/grep's list" });
	assert.match(list, /user\s+why does the auth service say ECONNREFUSED/);
	assert.match(list, /assistant\s+…swer 2 to why does the auth service say ECONNREFUSED/);
	win.keys("Enter");
	const detail = await win.waitFor((s) => (/enter resume this session/.test(s) ? s : null), { what: "the match in full" });
	// The message and the answer after it.
	assert.match(detail, /why does the auth service say ECONNREFUSED/);
	assert.match(detail, /answer 0 to why does the auth service say ECONNREFUSED/);
	win.keys("Enter");
	// pi switched to that session: its conversation is on screen, the view is gone.
	const resumed = await win.waitFor((s) => (!/enter resume this session/.test(s) && /follow-up 2 of why does the auth service/.test(s) ? s : null), {
		what: "the resumed session",
	});
	assert.match(resumed, /answer 2 to why does the auth service say ECONNREFUSED/);
	win.stop();
});
