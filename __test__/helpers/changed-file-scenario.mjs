// pi's own AgentSession (its SDK, replies scripted by pi-ai's faux provider) on a session whose
// file another program changes while pi has it open: a few turns with large tool results
// (values a manager that lets go gives back to the file), a full collection, the change, then
// what pi does next: a prompt (an append), a compaction (it reads the old messages), the
// context, the tree. Run by __test__/agent-changed-file.test.mjs, once per side and change:
//
//   node --expose-gc changed-file-scenario.mjs pi|native|native-keep <change> <dir>
//
// <change>: appended (another process appends a line), truncated, rewritten (in place, the
// same size), renamed-over (another file renamed onto it), deleted. Prints one JSON object:
// what each step returned or threw, and the session file's lines afterwards.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import * as sdk from "@earendil-works/pi-coding-agent";
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { collectGarbage } from "./collect.mjs";
import { runtimeFactory } from "./sdk-runtime.mjs";

const { createAgentSessionRuntime, ModelRuntime, SessionManager, SettingsManager } = sdk;
const [side, change, root] = process.argv.slice(2);
const CHANGES = ["appended", "truncated", "rewritten", "renamed-over", "deleted"];
if (!["pi", "native", "native-keep"].includes(side) || !CHANGES.includes(change) || !root) {
	throw new Error(`usage: changed-file-scenario.mjs pi|native|native-keep ${CHANGES.join("|")} <dir>`);
}
if (side !== "pi") {
	createRequire(import.meta.url)("../../index.js").useNativeSessions(SessionManager, { releaseEntries: side === "native" });
}

const agentDir = path.join(root, "agent");
const cwd = path.join(root, "project");
fs.mkdirSync(agentDir, { recursive: true });
fs.mkdirSync(cwd, { recursive: true });
process.env.PI_CODING_AGENT_DIR = agentDir;
process.env.PI_OFFLINE = "1";

const faux = fauxProvider({ api: "faux", provider: "faux", models: [{ id: "faux-1", reasoning: false, contextWindow: 200_000, maxTokens: 4096 }] });
const modelRuntime = await ModelRuntime.create({ authPath: path.join(agentDir, "auth.json"), modelsPath: null, refreshOnCreate: false });
modelRuntime.registerNativeProvider(faux.provider);
const settingsManager = SettingsManager.inMemory({ compaction: { enabled: false, reserveTokens: 2000, keepRecentTokens: 40 }, retry: { enabled: false } });
const blob = (n) => Array.from({ length: 200 }, (_, i) => `result ${n} line ${i}: ${"x".repeat(40)}`).join("\n");
const tool = {
	name: "fetch_blob",
	label: "Fetch blob",
	description: "Returns a blob.",
	parameters: Type.Object({ n: Type.Number() }),
	execute: async (_id, params) => ({ content: [{ type: "text", text: blob(params.n) }], details: {} }),
};
const createRuntime = runtimeFactory(sdk, { agentDir, settingsManager, modelRuntime }, { model: faux.getModel("faux-1"), thinkingLevel: "off", tools: ["fetch_blob"], customTools: [tool] });
const runtime = await createAgentSessionRuntime(createRuntime, { cwd, agentDir, sessionManager: SessionManager.create(cwd) });
const sm = () => runtime.session.sessionManager;

const log = [];
async function step(name, fn) {
	await collectGarbage();
	try {
		const result = await fn();
		log.push({ step: name, result: result ?? null });
	} catch (error) {
		log.push({ step: name, error: String(error?.message ?? error) });
	}
}

for (let n = 1; n <= 3; n++) {
	faux.setResponses([
		fauxAssistantMessage([fauxText(`Fetching ${n}.`), fauxToolCall("fetch_blob", { n }, { id: `call_${n}` })], { stopReason: "toolUse" }),
		fauxAssistantMessage(`Blob ${n} is long.`),
	]);
	await step(`prompt ${n}`, () => runtime.session.prompt(`fetch blob ${n}`));
}
const file = sm().getSessionFile();
// pi's agent holds its own copies of what it appended until a compaction or a session switch;
// a reload of the session (what pi does on /resume of it) leaves the manager's entries the only
// holders, so that what the manager let go of is really gone before the change.
await step("switch to the file again", () => runtime.switchSession(file).then(() => ({ messages: runtime.session.messages.length })));
await collectGarbage();

switch (change) {
	case "appended":
		fs.appendFileSync(file, `${JSON.stringify({ type: "custom", customType: "other-process", data: { n: 1 }, id: "0ther001", parentId: null, timestamp: new Date().toISOString() })}\n`);
		break;
	case "truncated":
		fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2));
		break;
	case "rewritten": {
		const bytes = fs.readFileSync(file);
		for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x78 /* x */) bytes[i] = 0x79; // y
		fs.writeFileSync(file, bytes);
		break;
	}
	case "renamed-over":
		fs.writeFileSync(`${file}.new`, fs.readFileSync(file, "utf8").replaceAll("x", "z"));
		fs.renameSync(`${file}.new`, file);
		break;
	case "deleted":
		fs.rmSync(file);
		break;
}

const textOf = (m) => (typeof m?.content === "string" ? m.content : Array.isArray(m?.content) ? m.content.map((b) => b.text ?? "").join("") : "");
await step("context", () => sm().buildSessionContext().messages.map((m) => `${m.role}:${textOf(m).length}`));
await step("entries", () => sm().getEntries().map((e) => (e.type === "message" ? `${e.message.role}:${textOf(e.message).length}` : e.type)));
await step("tree", () => sm().getTree().length);
faux.setResponses([fauxAssistantMessage("## Summary\nBlobs were fetched."), fauxAssistantMessage("## Turn prefix\nnone")]);
await step("compact", async () => (await runtime.session.compact()).summary);
faux.setResponses([fauxAssistantMessage("Still here.")]);
await step("prompt after the change", () => runtime.session.prompt("are you still there?"));
await step("context after", () => sm().buildSessionContext().messages.map((m) => m.role));
await runtime.dispose();

const lines = fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : null;
const torn = lines?.filter((line) => {
	try {
		JSON.parse(line);
		return false;
	} catch {
		return true;
	}
});
process.stdout.write(JSON.stringify({ side, change, log, fileLines: lines?.length ?? null, torn }));
