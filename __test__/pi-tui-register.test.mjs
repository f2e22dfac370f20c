// Real pi 1.6.0 under tmux (its published bundle, dist/bundle/cli.js, on Node 22) with the
// register hook in NODE_OPTIONS, side by side with pi on its own class: `pi -c` on a long
// session, /tree, /resume (rows page by page) and Enter on another session, /fork and Enter
// show the same screens on both; and every session pi started (the one of -c, the resumed
// one, the fork) was native on the hook's side only, as an extension given with -e
// records from each session_start in a file of its own.
//
// pi needs Node >= 22.19 and tmux: the Node 20 pass skips this file, and so does a machine
// without tmux (a failure where CI=true), as in pi-tui.test.mjs.
//
//   node __test__/run.mjs __test__/pi-tui-register.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { encodeCwd, sessionText, writeCorpus } from "./helpers/pi-corpus.mjs";
import { closePicker, PiWindow, readPicker, REPO_ROOT, settled, tmuxUnavailable } from "./helpers/pi-tmux.mjs";
import { skipForMissingTool } from "./helpers/tools.mjs";

const [major, minor] = process.versions.node.split(".").map(Number);
const skip =
	major < 22 || (major === 22 && minor < 19)
		? `pi needs Node >= 22.19 (this is ${process.version}); the Node 22 pass runs it`
		: skipForMissingTool(tmuxUnavailable());

const BUNDLE_CLI = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
const REGISTER = path.join(REPO_ROOT, "register.cjs");
const TURNS = 600;
// Each answer's text over lib/lazy.js's threshold: pi reads it through a lazy value.
const BULK = 3000;

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-tui-register-"));
const windows = [];
after(() => {
	for (const w of windows) w.stop();
	fs.rmSync(root, { recursive: true, force: true });
});

const PROBE = `import fs from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
export default function (pi) {
  pi.on("session_start", (event, ctx) => {
    const cls = Object.getPrototypeOf(ctx.sessionManager).constructor;
    const native = Boolean(cls[Symbol.for("pi-session-native.nativeClass")]);
    // Characters of entry text this package handed to JavaScript so far (its entries are
    // built from skeletons, their heavy values read when first asked for).
    const handed = native ? require(process.env.PROBE_LAZY).handed.chars : 0;
    fs.appendFileSync(process.env.PROBE_FILE, JSON.stringify({ reason: event.reason, native, handed, entries: ctx.sessionManager.getEntries().length }) + "\\n");
  });
}
`;

/** A world: the corpus of pi-tui.test.mjs, and the newest session of the cwd a long one with a name. */
function world(label) {
	const dir = path.join(root, label);
	const agentDir = path.join(dir, "agent");
	const home = path.join(dir, "home");
	const cwd = path.join(root, "project");
	for (const d of [home, cwd]) fs.mkdirSync(d, { recursive: true });
	const realCwd = fs.realpathSync(cwd);
	writeCorpus(agentDir, realCwd, { folders: 2, perFolder: 12 });
	const long = path.join(agentDir, "sessions", encodeCwd(realCwd), "2023-06-01T09-00-00-000Z_0000aaaa-0000-4000-8000-00000000beef.jsonl");
	fs.writeFileSync(long, sessionText({ id: "0000aaaa-0000-4000-8000-00000000beef", cwd: realCwd, startMs: Date.UTC(2023, 5, 1, 9), turns: TURNS, title: "the long session", name: "long one", bulk: BULK }));
	const probe = path.join(dir, "probe.mjs");
	fs.writeFileSync(probe, PROBE);
	return { agentDir, home, cwd: realCwd, probe, probeFile: path.join(dir, "probe.jsonl") };
}

async function startPi(w, env) {
	const win = await PiWindow.start({
		cwd: w.cwd,
		agentDir: w.agentDir,
		home: w.home,
		cli: BUNDLE_CLI,
		args: ["-c", "-e", w.probe],
		env: { PROBE_FILE: w.probeFile, PROBE_LAZY: path.join(REPO_ROOT, "lib", "lazy.js"), ...env },
		ready: (screen) => screen.includes("long one") && screen.includes(`answer ${TURNS - 1} to the long session`),
	});
	windows.push(win);
	return win;
}

const probes = (w) => fs.readFileSync(w.probeFile, "utf8").trim().split("\n").map((l) => JSON.parse(l));

/** The same keys on one side; the screens at each checkpoint. */
async function drive(w, env) {
	const win = await startPi(w, env);
	const screens = { continued: await settled(win, "pi -c") };
	await win.command("/tree");
	await win.waitFor((s) => s.includes("Session Tree") && /\(\d+\/\d+\)/.test(s), { what: "the tree" });
	screens.tree = await settled(win, "/tree");
	win.keys("Up", "Up", "Up");
	screens.treeMoved = await settled(win, "/tree after moving");
	win.keys("Escape");
	await win.waitFor((s) => !s.includes("Session Tree"), { what: "the tree closed" });
	await win.command("/resume");
	screens.resume = await readPicker(win, "current");
	win.keys("Down", "Down", "Enter");
	await win.waitFor((s) => !s.includes("Resume Session ("), { what: "the resumed session" });
	screens.resumed = await settled(win, "the resumed session");
	await win.command("/fork");
	await win.waitFor((s) => s.includes("Fork from Message"), { what: "the fork selector" });
	screens.fork = await settled(win, "/fork");
	win.keys("Up", "Enter");
	await win.waitFor((s) => !s.includes("Fork from Message"), { what: "the fork" });
	screens.forked = await settled(win, "the forked session");
	win.stop();
	return screens;
}

test("pi -c, /tree, /resume and Enter, /fork and Enter: the same screens with the hook as on pi's own class; native only with the hook", { skip }, async () => {
	const own = world("own");
	const hooked = world("hooked");
	const expected = await drive(own, {});
	const actual = await drive(hooked, { NODE_OPTIONS: `--require=${REGISTER}` });
	for (const name of Object.keys(expected)) assert.deepEqual(actual[name], expected[name], name);
	assert.ok(expected.continued.includes(`answer ${TURNS - 1} to the long session`));
	assert.ok(expected.forked.includes("Forked to new session"));
	assert.ok(!actual.continued.includes("pi-session-native:"), "the hook says nothing");

	const ownStarts = probes(own);
	const hookedStarts = probes(hooked);
	assert.deepEqual(
		hookedStarts.map(({ reason, entries }) => ({ reason, entries })),
		ownStarts.map(({ reason, entries }) => ({ reason, entries })),
	);
	assert.deepEqual(ownStarts.map((p) => p.reason), ["startup", "resume", "fork"]);
	assert.ok(ownStarts[0].entries > TURNS * 2, "pi -c opened the long session");
	assert.ok(ownStarts.every((p) => !p.native), "pi's own class without the hook");
	assert.ok(hookedStarts.every((p) => p.native), "every session native with the hook, the startup one included");
	const size = fs.statSync(path.join(hooked.agentDir, "sessions", encodeCwd(hooked.cwd), "2023-06-01T09-00-00-000Z_0000aaaa-0000-4000-8000-00000000beef.jsonl")).size;
	assert.ok(size > TURNS * BULK, `the long session has ${size} bytes`);
	assert.ok(hookedStarts[0].handed > 0, "entries were built from the native side's skeletons");
});
