// Real pi 1.6.0 under tmux (its published bundle on Node 22), a long run on a scripted model,
// with the register hook (pi's managers let go of what nothing holds, its default) side by side
// with pi on its own class: a test extension registers pi-ai's faux provider and a tool that
// returns a large text, and /burn N makes pi run N prompts in a row, each a tool call with its
// large result and an answer, with pi's automatic compaction on a small context window. After
// the run /tree, /fork and /resume show the same screens on both sides, and the extension
// reports the process's memory after a full collection (Node's --expose-gc in NODE_OPTIONS).
//
// pi needs Node >= 22.19 and tmux: the Node 20 pass skips this file, and so does a machine
// without tmux (a failure where CI=true), as in pi-tui.test.mjs.
//
//   node __test__/run.mjs __test__/pi-tui-long-run.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { after, test } from "node:test";
import { PiWindow, REPO_ROOT, settled, tmuxUnavailable } from "./helpers/pi-tmux.mjs";
import { skipForMissingTool } from "./helpers/tools.mjs";

const [major, minor] = process.versions.node.split(".").map(Number);
const skip =
	major < 22 || (major === 22 && minor < 19)
		? `pi needs Node >= 22.19 (this is ${process.version}); the Node 22 pass runs it`
		: skipForMissingTool(tmuxUnavailable());

const BUNDLE_CLI = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js");
const REGISTER = path.join(REPO_ROOT, "register.cjs");
const PROMPTS = Number(process.env.PI_LONG_RUN_PROMPTS || 300);
/** Each tool result, in characters: far over the 512 bytes above which a value is let go. */
const RESULT_CHARS = 100_000;

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-tui-long-run-"));
const windows = [];
after(() => {
	for (const w of windows) w.stop();
	fs.rmSync(root, { recursive: true, force: true });
});

const moduleUrl = (...parts) => pathToFileURL(path.join(REPO_ROOT, "node_modules", ...parts)).href;

// The model: a tool call for a prompt, an answer for a tool result, a short summary when pi's
// compaction asks. /burn N sends the next prompt when pi is idle again, N times, then writes
// the report: how many prompts ran, compactions, and memory after a full collection.
const EXTENSION = `import fs from "node:fs";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "${moduleUrl("@earendil-works", "pi-ai", "dist", "index.js")}";
import { Type } from "${moduleUrl("typebox", "build", "index.mjs")}";
export default function (pi) {
  const faux = fauxProvider({ api: "faux", provider: "faux", models: [{ id: "faux-1", reasoning: false, contextWindow: 100000, maxTokens: 2048 }] });
  pi.registerProvider(faux.provider);
  const blob = (n) => Array.from({ length: ${RESULT_CHARS} / 50 }, (_, i) => \`prompt \${n} line \${i}: \${"y".repeat(28)}\`).join("\\n");
  pi.registerTool({
    name: "fetch_blob", label: "Fetch blob", description: "Returns a blob.",
    parameters: Type.Object({ n: Type.Number() }),
    execute: async (_id, params) => ({ content: [{ type: "text", text: blob(params.n) }], details: {} }),
  });
  const textOf = (m) => (typeof m?.content === "string" ? m.content : Array.isArray(m?.content) ? m.content.map((b) => b.text ?? "").join("") : "");
  let n = 0;
  let summaries = 0;
  const respond = (context) => {
    const messages = context.messages;
    if (messages[0]?.role === "system" && textOf(messages[0]).startsWith("You are a context summarization assistant")) {
      summaries++;
      return fauxAssistantMessage(\`## Summary\\nSummary \${summaries}: blobs up to \${n} were fetched.\`);
    }
    if (messages.at(-1)?.role === "toolResult") return fauxAssistantMessage(\`Blob \${n} fetched.\`);
    return fauxAssistantMessage([fauxText(\`Fetching blob \${n}.\`), fauxToolCall("fetch_blob", { n }, { id: \`call_\${n}\` })], { stopReason: "toolUse" });
  };
  let left = 0;
  let compactions = 0;
  const report = async (ctx) => {
    // pi at rest after its last reply, as while its user reads it (1.5 s: past lib/memory.js's IDLE_MS).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
    globalThis.gc?.();
    const memory = process.memoryUsage();
    // V8 keeps the pages a collection emptied, resident; a last-resort collection hands them back.
    globalThis.gc?.({ type: "major", execution: "sync", flavor: "last-resort" });
    const rssNeeded = process.memoryUsage().rss;
    const entries = ctx.sessionManager.getEntries();
    fs.writeFileSync(process.env.REPORT_FILE, JSON.stringify({
      prompts: n, compactions, summaries,
      entries: entries.length, compactionEntries: entries.filter((e) => e.type === "compaction").length,
      native: Boolean(Object.getPrototypeOf(ctx.sessionManager).constructor[Symbol.for("pi-session-native.nativeClass")]),
      letGo: entries.filter((e) => typeof Object.getOwnPropertyDescriptor(e, "message")?.get === "function").length,
      rss: memory.rss, rssNeeded, heapUsed: memory.heapUsed,
    }));
  };
  const next = (ctx) => {
    if (left <= 0) return report(ctx);
    left--;
    n++;
    faux.appendResponses([respond, respond, respond, respond]);
    pi.sendUserMessage(\`prompt \${n}: fetch blob \${n}\`);
  };
  pi.on("session_compact", () => { compactions++; });
  // Runs requested from agent_settled start once pi has settled (its compaction included).
  pi.on("agent_settled", (_event, ctx) => next(ctx));
  pi.registerCommand("burn", { description: "run prompts in a row", handler: async (args, ctx) => { left = Number(args); next(ctx); } });
}
`;

function world(label) {
	const dir = path.join(root, label);
	const agentDir = path.join(dir, "agent");
	const home = path.join(dir, "home");
	const cwd = path.join(root, "project");
	for (const d of [home, cwd, agentDir]) fs.mkdirSync(d, { recursive: true });
	// pi's automatic compaction on a small window: it compacts every few prompts.
	fs.writeFileSync(path.join(agentDir, "settings.json"), JSON.stringify({ compaction: { enabled: true, reserveTokens: 8000, keepRecentTokens: 30000 }, retry: { enabled: false } }));
	const extension = path.join(dir, "long-run.mjs");
	fs.writeFileSync(extension, EXTENSION);
	return { dir, agentDir, home, cwd: fs.realpathSync(cwd), extension, report: path.join(dir, "report.json") };
}

/** Times since and token counts are not the same twice; everything else on a screen is. */
const steady = (screen) =>
	screen
		.replace(/\b\d+(\.\d+)?[smhd] ago\b|\bjust now\b|\bnow\b/g, "<ago>")
		.replace(/\d+(\.\d+)?k?\/\d+(\.\d+)?k? \(\d+(\.\d+)?%\)|\d+(\.\d+)?% of \d+k?|↑\S+|↓\S+|R\S+ W\S+|\$\d+\.\d+/g, "<tokens>");

async function drive(w, env) {
	const win = await PiWindow.start({
		cwd: w.cwd,
		agentDir: w.agentDir,
		home: w.home,
		cli: BUNDLE_CLI,
		args: ["-e", w.extension, "--model", "faux/faux-1"],
		env: { REPORT_FILE: w.report, ...env },
		timeoutMs: 120_000,
	});
	windows.push(win);
	await win.command(`/burn ${PROMPTS}`);
	await win.waitFor(() => fs.existsSync(w.report), { what: `${PROMPTS} prompts to run`, timeoutMs: 30 * 60_000, intervalMs: 500 });
	const report = JSON.parse(fs.readFileSync(w.report, "utf8"));
	const screens = { end: steady(await settled(win, "the end of the run")) };
	await win.command("/tree");
	await win.waitFor((s) => s.includes("Session Tree"), { what: "the tree" });
	screens.tree = steady(await settled(win, "/tree"));
	win.keys("Escape");
	await win.waitFor((s) => !s.includes("Session Tree"), { what: "the tree closed" });
	await win.command("/fork");
	await win.waitFor((s) => s.includes("Fork from Message"), { what: "the fork selector" });
	screens.fork = steady(await settled(win, "/fork"));
	win.keys("Escape");
	await win.waitFor((s) => !s.includes("Fork from Message"), { what: "the fork selector closed" });
	await win.command("/resume");
	await win.waitFor((s) => s.includes("Resume Session ("), { what: "the resume picker" });
	screens.resume = steady(await settled(win, "/resume"));
	win.stop();
	return { report, screens };
}

test(`${PROMPTS} prompts with large tool results and automatic compaction: /tree, /fork, /resume the same with the hook as on pi's own class`, { skip, timeout: 60 * 60_000 }, async () => {
	const own = await drive(world("own"), { NODE_OPTIONS: "--expose-gc" });
	const hooked = await drive(world("hooked"), { NODE_OPTIONS: `--require=${REGISTER} --expose-gc` });
	console.log(`# pi's own class: ${JSON.stringify(own.report)}`);
	console.log(`# with the hook:  ${JSON.stringify(hooked.report)}`);
	const ratio = (key) => (hooked.report[key] / own.report[key]).toFixed(2);
	console.log(`# at the end, with the hook / pi's own class: RSS ${ratio("rss")}x, RSS once V8 hands back the pages it emptied ${ratio("rssNeeded")}x, heap used ${ratio("heapUsed")}x`);
	assert.equal(own.report.prompts, PROMPTS);
	assert.ok(own.report.compactionEntries >= PROMPTS / 20, `pi compacted on its own (${own.report.compactionEntries} compactions)`);
	assert.ok(!own.report.native && hooked.report.native, "pi's class on one side, ours on the other");
	for (const key of ["prompts", "summaries", "entries", "compactionEntries"]) assert.equal(hooked.report[key], own.report[key], key);
	assert.ok(hooked.report.letGo > PROMPTS / 2, `the tool results pi wrote were let go (${hooked.report.letGo} messages)`);
	assert.ok(hooked.report.heapUsed < own.report.heapUsed, "the heap holds less than pi's own class holds");
	for (const name of Object.keys(own.screens)) assert.equal(hooked.screens[name], own.screens[name], name);
	assert.ok(own.screens.fork.includes(`prompt ${PROMPTS}: fetch blob ${PROMPTS}`));
});
