// One run of pi's own AgentSession (its SDK: createAgentSessionRuntime, with pi-ai's faux
// provider scripting every reply) through a scenario that touches every part of the session
// API pi uses: prompts, tool calls and results, a custom message, a bash command, a model
// and a thinking-level change, a session name, labels, a manual and an automatic (overflow,
// with its context edits) compaction, /tree navigation with a branch summary, forks, a new
// session and a switch back, an import, the command line's statics, errors, and every file
// reopened at the end. Run by __test__/agent-fidelity.test.mjs, once per side:
//
//   node agent-scenario.mjs pi     <dir>   pi's own SessionManager class
//   node agent-scenario.mjs native <dir>   the same class after useNativeSessions (this package),
//                                          letting go of entry values nothing holds (its default)
//   node agent-scenario.mjs native-keep <dir>   the same, keeping every value (releaseEntries: false)
//
// With --expose-gc, a full collection runs before every step and every snapshot, so that
// what the native class lets go of is gone before pi reads it again.
//
// Prints one JSON object: { log, files }, where log is what pi showed after each step
// (contexts, leaves, trees, names, errors) and files the text of every session file, in the
// order the scenario met them. Both are raw (ids, times and the dir as they are); the test
// normalizes them.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import * as sdk from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxThinking, fauxToolCall } from "@earendil-works/pi-ai";
import { collectGarbage } from "./collect.mjs";
import { runtimeFactory } from "./sdk-runtime.mjs";

const { createAgentSessionRuntime, ModelRuntime, SessionManager, SettingsManager } = sdk;

const [side, root] = process.argv.slice(2);
if (!["pi", "native", "native-keep"].includes(side) || !root) throw new Error("usage: agent-scenario.mjs pi|native|native-keep <dir>");
if (side !== "pi") {
	const { useNativeSessions } = createRequire(import.meta.url)("../../index.js");
	useNativeSessions(SessionManager, side === "native-keep" ? { releaseEntries: false } : undefined);
}

const agentDir = path.join(root, "agent");
const cwd = path.join(root, "project");
fs.mkdirSync(agentDir, { recursive: true });
fs.mkdirSync(cwd, { recursive: true });
// Long enough that the read tool's result is a heavy value (over 512 bytes of JSON).
const filler = Array.from({ length: 60 }, (_, i) => `line ${i + 1}: the notes go on about nothing in particular`).join("\n");
fs.writeFileSync(path.join(cwd, "notes.txt"), `alpha\nbeta\ngamma\n${filler}\n`);
process.env.PI_CODING_AGENT_DIR = agentDir;
process.env.PI_OFFLINE = "1";

const faux = fauxProvider({
	api: "faux",
	provider: "faux",
	models: [
		{ id: "faux-1", reasoning: true, contextWindow: 100_000, maxTokens: 4096 },
		{ id: "faux-2", reasoning: true, contextWindow: 200_000, maxTokens: 8192 },
	],
});
const modelRuntime = await ModelRuntime.create({ authPath: path.join(agentDir, "auth.json"), modelsPath: null, refreshOnCreate: false });
modelRuntime.registerNativeProvider(faux.provider);
const model1 = faux.getModel("faux-1");
const model2 = faux.getModel("faux-2");

const settingsManager = SettingsManager.inMemory({
	compaction: { enabled: true, reserveTokens: 2000, keepRecentTokens: 40 },
	branchSummary: { reserveTokens: 2000 },
	retry: { enabled: false },
});

const createRuntime = runtimeFactory(sdk, { agentDir, settingsManager, modelRuntime }, { model: model1, thinkingLevel: "low", tools: ["read", "ls"] });

const log = [];
const filesSeen = [];
const seeFile = (file) => {
	if (file && !filesSeen.includes(file)) filesSeen.push(file);
};

/** A copy as things stand now (session.messages is live). */
const now = (value) => JSON.parse(JSON.stringify(value ?? null));

/** Entries whose message the manager answers through an accessor (it wrote them and lets go). */
const letGoMessages = (entries) => entries.filter((e) => typeof Object.getOwnPropertyDescriptor(e, "message")?.get === "function").length;

/** What pi and its user see of the current session. */
async function snapshot(runtime, step) {
	await collectGarbage();
	const session = runtime.session;
	const sm = session.sessionManager;
	seeFile(sm.getSessionFile());
	const tree = (nodes) => nodes.map((n) => ({ id: n.entry.id, type: n.entry.type, label: n.label, children: tree(n.children) }));
	log.push({
		step,
		native: Boolean(Object.getPrototypeOf(sm).constructor[Symbol.for("pi-session-native.nativeClass")]),
		letGo: letGoMessages(sm.getEntries()),
		file: sm.getSessionFile(),
		sessionId: sm.getSessionId(),
		name: sm.getSessionName(),
		leafId: sm.getLeafId(),
		header: now(sm.getHeader()),
		model: session.model ? `${session.model.provider}/${session.model.id}` : null,
		thinkingLevel: session.thinkingLevel,
		context: now(sm.buildSessionContext()),
		agentMessages: now(session.messages),
		entries: now(sm.getEntries()),
		branch: sm.getBranch().map((e) => e.id),
		tree: tree(sm.getTree()),
		stats: now(session.getSessionStats()),
	});
}

async function step(name, fn) {
	await collectGarbage();
	try {
		const result = await fn();
		log.push({ step: name, result: result === undefined ? null : result });
	} catch (error) {
		log.push({ step: name, error: error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error) });
	}
}

// A reply made when pi asks for it: one made before would carry a timestamp from before the
// response stream began, which pi-ai leaves untimed (no durationMs) or not, by the millisecond.
const reply = (content, options) => () => fauxAssistantMessage(content, options);

const runtime = await createAgentSessionRuntime(createRuntime, { cwd, agentDir, sessionManager: SessionManager.create(cwd) });
await snapshot(runtime, "start");

// Prompts, a tool call and its result.
faux.setResponses([reply([fauxThinking("greeting"), fauxText("Hello! How can I help?")])]);
await step("prompt hello", () => runtime.session.prompt("hello"));
faux.setResponses([
	reply([fauxText("Reading the notes."), fauxToolCall("read", { path: "notes.txt" }, { id: "call_read_1" })], { stopReason: "toolUse" }),
	reply([fauxToolCall("ls", { path: "." }, { id: "call_ls_1" })], { stopReason: "toolUse" }),
	reply("The notes say alpha, beta, gamma."),
]);
await step("prompt with tools", () => runtime.session.prompt("what do the notes say?"));
await snapshot(runtime, "after tools");

// Model and thinking level, the session's name, labels.
await step("set model", () => runtime.session.setModel(model2));
await step("set thinking", () => runtime.session.setThinkingLevel("high"));
await step("set name", () => runtime.session.setSessionName("fidelity\nscenario  "));
const firstUser = runtime.session.sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "user");
await step("label", () => runtime.session.sessionManager.appendLabelChange(firstUser.id, "start here"));
await step("label missing", () => runtime.session.sessionManager.appendLabelChange("nope0000", "x"));
// A custom message (an extension's sendMessage) and a bash command (pi's !command).
await step("custom message", () => runtime.session.sendCustomMessage({ customType: "note", content: "a custom note", display: true, details: { from: "scenario" } }));
await step("bash", async () => {
	const result = await runtime.session.executeBash("printf 'bash out'");
	return { output: result.output, exitCode: result.exitCode };
});
faux.setResponses([reply("Noted, on the second model.")]);
await step("prompt on model 2", () => runtime.session.prompt("remember the number 42"));
await snapshot(runtime, "after model, name, label");

// Manual compaction.
faux.setResponses([
	reply("## Summary\nThe user said hello and read notes.txt (alpha, beta, gamma), then asked to remember 42."),
	reply("## Turn prefix\nThe turn so far: remember 42."),
]);
await step("compact", async () => {
	const result = await runtime.session.compact("keep the number");
	return { summary: result.summary, firstKeptEntryId: result.firstKeptEntryId, tokensBefore: result.tokensBefore };
});
faux.setResponses([reply("After compaction I still know 42.")]);
await step("prompt after compaction", () => runtime.session.prompt("what number?"));
await snapshot(runtime, "after manual compaction");

// Automatic compaction: the provider says the prompt is too long; pi compacts and retries.
faux.setResponses([
	reply([], { stopReason: "error", errorMessage: "prompt is too long: 213462 tokens > 200000 maximum" }),
	reply("## Summary\nOverflow summary: hello, notes, 42."),
	reply("Retried after the automatic compaction."),
]);
await step("prompt overflowing", () => runtime.session.prompt("a very long question"));
await snapshot(runtime, "after automatic compaction");

// /tree: back to the first user message with a branch summary, then a new branch.
const target = runtime.session.sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "assistant");
faux.setResponses([reply("Branch summary: the abandoned branch read the notes and compacted twice.")]);
await step("navigate tree", async () => {
	const result = await runtime.session.navigateTree(target.id, { summarize: true, label: "summarized" });
	return { editorText: result.editorText, cancelled: result.cancelled, summaryId: result.summaryEntry?.id, summary: result.summaryEntry?.summary };
});
faux.setResponses([reply("On the new branch.")]);
await step("prompt on branch", () => runtime.session.prompt("let's try another way"));
await step("navigate missing", () => runtime.session.navigateTree("missing0"));
await snapshot(runtime, "after tree navigation");
const originalFile = runtime.session.sessionFile;

// Fork from a user message: a new file with the branch up to it.
const forkFrom = runtime.session.sessionManager.getBranch().filter((e) => e.type === "message" && e.message.role === "user").at(-1);
await step("fork", () => runtime.fork(forkFrom.id));
faux.setResponses([reply("In the fork.")]);
await step("prompt in fork", () => runtime.session.prompt("forked question"));
await snapshot(runtime, "after fork");
await step("fork missing", () => runtime.fork("missing1"));
const forkedFile = runtime.session.sessionFile;

// A new session, then back to the first one.
await step("new session", () => runtime.newSession());
await snapshot(runtime, "new session, empty");
faux.setResponses([reply("A fresh start.")]);
await step("prompt in new session", () => runtime.session.prompt("new session question"));
await snapshot(runtime, "new session");
await step("switch back", () => runtime.switchSession(originalFile));
faux.setResponses([reply("Back in the original session.")]);
await step("prompt after switch", () => runtime.session.prompt("are we back?"));
await snapshot(runtime, "switched back");
await step("switch to missing", () => runtime.switchSession(path.join(agentDir, "nope.jsonl")));

// Import a copy of the fork, then fork at a position before a message.
const copy = path.join(root, "copy.jsonl");
fs.copyFileSync(forkedFile, copy);
await step("import", () => runtime.importFromJsonl(copy));
await snapshot(runtime, "imported");
const importedUser = runtime.session.sessionManager.getEntries().find((e) => e.type === "message" && e.message.role === "user");
await step("fork at", () => runtime.fork(importedUser.id, { position: "at" }));
await snapshot(runtime, "forked at");
await step("import missing", () => runtime.importFromJsonl(path.join(root, "missing.jsonl")));

await runtime.dispose();

// The statics pi's command line starts with: -c, --fork, --session <id>, --no-session.
await step("continueRecent", () => {
	const sm = SessionManager.continueRecent(cwd);
	seeFile(sm.getSessionFile());
	return { file: sm.getSessionFile(), leafId: sm.getLeafId(), context: now(sm.buildSessionContext()) };
});
await step("forkFrom", () => {
	const sm = SessionManager.forkFrom(originalFile, cwd, undefined, { id: "forked-on-the-command-line" });
	seeFile(sm.getSessionFile());
	return { file: sm.getSessionFile(), header: now(sm.getHeader()), context: now(sm.buildSessionContext()) };
});
await step("forkFrom missing", () => SessionManager.forkFrom(path.join(root, "missing.jsonl"), cwd));
await step("findById", () => SessionManager.findById(cwd, path.basename(originalFile, ".jsonl").split("_")[1]) ?? null);
await step("inMemory", () => now(SessionManager.inMemory(cwd).getEntries()));

// Every file of the session folder, reopened by pi's own class (the switched one on the native side).
const sessionDir = path.dirname(originalFile);
for (const name of fs.readdirSync(sessionDir).sort()) seeFile(path.join(sessionDir, name));
const reopened = [];
for (const file of filesSeen) {
	try {
		const sm = SessionManager.open(file);
		reopened.push({ file, context: now(sm.buildSessionContext()), leafId: sm.getLeafId(), name: sm.getSessionName(), count: sm.getEntryCount() });
	} catch (error) {
		reopened.push({ file, error: String(error?.message ?? error) });
	}
}
const listed = (await SessionManager.list(cwd)).map((s) => ({ path: s.path, name: s.name, messageCount: s.messageCount, firstMessage: s.firstMessage, parentSessionPath: s.parentSessionPath }));
const files = filesSeen.map((file) => ({ file, text: fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null }));
process.stdout.write(JSON.stringify({ side, log, reopened, listed, files }));
