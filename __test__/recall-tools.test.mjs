// session_search and session_read, the pi package's tools: registered with parameters,
// prompt snippet and guidelines that name them; run against a stand-in for pi's
// ExtensionAPI and tool ctx (their text and details are the library's, errors thrown
// with the library's sentence, the AbortSignal honoured, paths outside pi's session
// folders refused); drawn compactly by renderCall/renderResult; and through pi's own SDK
// (createAgentSessionRuntime, pi-ai's faux provider scripting a session_search, a
// session_read of a hit and of the current session), where the tool results pi stores
// equal the library's answers.
//
//   node __test__/run.mjs __test__/recall-tools.test.mjs   SEED=... reproduces a failure
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { tempDir } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";
import { writeRecallStore } from "./helpers/recall-store.mjs";

const require = createRequire(import.meta.url);
const { recallSearch, recallRead } = require(path.join(REPO_ROOT, "index.js"));

// pi 1.6.0 (its TUI, which the extension imports, and its SDK) needs Node 22, as in extension.test.mjs.
const piLoads = typeof fs.globSync === "function" ? false : "pi 1.6.0 needs Node 22; run.mjs runs this file there too";

const SEED = baseSeed();
console.log(`# recall tools seed ${SEED} (SEED=${SEED} node __test__/run.mjs __test__/recall-tools.test.mjs)`);
process.env.PI_SESSION_NATIVE_CACHE_DIR = "";
const root = fs.realpathSync(tempDir("recall-tools"));
after(() => fs.rmSync(root, { recursive: true, force: true }));
const store = writeRecallStore(reference.SessionManager, root, new Rng(SEED));
const [alpha] = store.projects;
const idOf = (file) => path.basename(file).split("_")[1].replace(/\.jsonl$/, "");

/** The tools the extension registers, against a stand-in for pi's ExtensionAPI. */
async function registeredTools() {
	const { default: piSessionNative } = await import("../extension/index.mjs");
	const tools = new Map();
	piSessionNative({ on() {}, registerCommand() {}, registerTool: (tool) => tools.set(tool.name, tool), registerShortcut() {} });
	return tools;
}

/** A tool ctx as pi gives it: the cwd and the session manager of a session `file` of the store. */
function toolCtx(file) {
	const sm = reference.SessionManager.open(file);
	return {
		cwd: alpha,
		sessionManager: {
			getSessionDir: () => sm.getSessionDir(),
			getSessionFile: () => sm.getSessionFile(),
			getHeader: () => sm.getHeader(),
			getLeafId: () => sm.getLeafId(),
		},
	};
}
const placeOf = (file) => {
	const sm = reference.SessionManager.open(file);
	return {
		cwd: alpha,
		sessionDir: sm.getSessionDir(),
		currentSessionFile: file,
		parentSessionFile: sm.getHeader().parentSession,
		sessionFoldersOnly: true,
	};
};
const theme = { fg: (_colour, text) => text, bold: (text) => text };
// Wide enough that no line wraps.
const rendered = (component) => component.render(100_000).map((l) => l.trimEnd()).join("\n");

test("session_search and session_read are registered with the parameters, prompt snippet and guidelines that name them", { skip: piLoads }, async () => {
	const tools = await registeredTools();
	assert.deepEqual([...tools.keys()], ["session_search", "session_read"]);
	const search = tools.get("session_search");
	const read = tools.get("session_read");
	assert.deepEqual(Object.keys(search.parameters.properties), ["query", "scope", "role", "after", "before", "file", "session", "limit"]);
	assert.deepEqual(search.parameters.required ?? [], []);
	assert.deepEqual(search.parameters.properties.scope.enum, ["project", "all"]);
	assert.deepEqual(search.parameters.properties.role.enum, ["user", "assistant", "toolCall", "toolResult"]);
	assert.deepEqual(Object.keys(read.parameters.properties), ["session", "around", "from", "last", "limit", "leaf", "thinking"]);
	assert.deepEqual(read.parameters.required, ["session"]);
	for (const tool of [search, read]) {
		assert.match(tool.promptSnippet, new RegExp(tool.name));
		assert.ok(tool.promptGuidelines.length > 0);
		// pi appends guidelines flat to its rules: each must say which tool it means.
		for (const line of tool.promptGuidelines) assert.match(line, new RegExp(`\\b${tool.name}\\b`), line);
		assert.match(tool.description, /50 KB \/ 2,000 lines/);
	}
	assert.match(read.promptGuidelines.join(" "), /before its last compaction/);
});

test("the tools answer with the library's text and details, throw its sentences, and honour the signal", { skip: piLoads }, async () => {
	const tools = await registeredTools();
	const current = store.forks[0];
	const ctx = toolCtx(current);
	const place = placeOf(current);
	const r = new Rng(SEED ^ 0x7001);
	for (let i = 0; i < 12; i++) {
		const params = r.pick([
			{ query: "deploy" },
			{ query: "migration", scope: "all", limit: 5 },
			{ query: "a.b", role: "user" },
			{ query: "e", session: "parent" },
			{ query: "e", session: "current", role: "toolCall" },
			{},
			{ scope: "all", after: 30 },
		]);
		const result = await tools.get("session_search").execute(`call${i}`, params, undefined, undefined, ctx);
		const expected = await recallSearch({ ...params, ...place });
		assert.deepEqual(result.content, [{ type: "text", text: expected.text }], JSON.stringify(params));
		const { text: _text, ...details } = expected;
		assert.deepEqual(result.details, details, JSON.stringify(params));
	}
	for (const params of [{ session: "current", from: "start", limit: 3 }, { session: "parent", last: 4 }, { session: idOf(store.files[1]), thinking: true }]) {
		const result = await tools.get("session_read").execute("read", params, undefined, undefined, ctx);
		const expected = await recallRead({ ...params, ...place, currentLeafId: ctx.sessionManager.getLeafId() });
		assert.deepEqual(result.content, [{ type: "text", text: expected.text }], JSON.stringify(params));
		const { text: _text, ...details } = expected;
		assert.deepEqual(result.details, details);
	}
	// Errors are thrown (pi makes them tool errors) with the library's sentence.
	await assert.rejects(tools.get("session_read").execute("e1", { session: "zzzz" }, undefined, undefined, ctx), { message: /^No session found with the id or id prefix 'zzzz'/ });
	const outside = path.join(root, "copy.jsonl");
	fs.copyFileSync(store.files[0], outside);
	await assert.rejects(tools.get("session_read").execute("e2", { session: outside }, undefined, undefined, ctx), { message: /outside pi's session folders/ });
	await assert.rejects(tools.get("session_search").execute("e3", { query: "x", session: outside }, undefined, undefined, ctx), { message: /outside pi's session folders/ });
	const aborted = AbortSignal.abort(new Error("user pressed escape"));
	await assert.rejects(tools.get("session_search").execute("e4", { query: "deploy" }, aborted, undefined, ctx), { message: "user pressed escape" });
	await assert.rejects(tools.get("session_read").execute("e5", { session: "current" }, aborted, undefined, ctx), { message: "user pressed escape" });
});

test("renderCall is one line; renderResult a line per hit, the snippets when expanded", { skip: piLoads }, async () => {
	const tools = await registeredTools();
	const search = tools.get("session_search");
	const read = tools.get("session_read");
	assert.equal(rendered(search.renderCall({ query: "deploy", scope: "all", limit: 5 }, theme, {})), 'session_search "deploy" scope:all limit:5');
	assert.equal(rendered(read.renderCall({ session: "current", from: "start" }, theme, {})), 'session_read "current" from:start');
	const result = await search.execute("c", { query: "e", scope: "all", limit: 4 }, undefined, undefined, toolCtx(store.files[0]));
	assert.equal(result.details.hits.length, 4);
	const collapsed = rendered(search.renderResult(result, { expanded: false, isPartial: false }, theme, {})).split("\n");
	assert.equal(collapsed.length, 4 + (result.details.truncated ? 1 : 0));
	result.details.hits.forEach((hit, k) => assert.ok(collapsed[k].startsWith(`${hit.sessionId.slice(0, 8)} `) && collapsed[k].includes(hit.entryId), collapsed[k]));
	const expanded = rendered(search.renderResult(result, { expanded: true, isPartial: false }, theme, {})).split("\n");
	// The rendered line is trimmed (the terminal drops trailing spaces); the snippet may end in one.
	result.details.hits.forEach((hit, k) => assert.equal(expanded[2 * k + 1].trim(), hit.snippet.trim()));
	assert.equal(rendered(search.renderResult(result, { expanded: false, isPartial: true }, theme, {})), "searching…");
	const failed = { content: [{ type: "text", text: "No session found with the id or id prefix 'x', in this project or any other" }] };
	assert.equal(rendered(search.renderResult(failed, { expanded: false }, theme, { isError: true })), failed.content[0].text);
	const page = await read.execute("r", { session: idOf(store.files[0]), limit: 2 }, undefined, undefined, toolCtx(store.files[0]));
	const line = rendered(read.renderResult(page, { expanded: false, isPartial: false }, theme, {}));
	// The seeded store may give this session fewer than two readable entries: the line follows the page.
	const count = page.details.entries.length;
	assert.ok(count >= 1 && count <= 2, `page of ${count}`);
	const counted = count === 1 ? "1 entry" : `${count} entries`;
	const tail = page.details.next ? `next from ${page.details.next}` : "end of branch";
	assert.equal(line, `${counted} of ${idOf(store.files[0]).slice(0, 8)} · ${tail}`);
	assert.ok(rendered(read.renderResult(page, { expanded: true, isPartial: false }, theme, {})).includes(`[${page.details.entries[0].id}]`));
});

test("through pi's SDK: a scripted session_search, a session_read of its hit and of the current session; pi stores the library's answers", { skip: piLoads }, async () => {
	const sdk = await import("@earendil-works/pi-coding-agent");
	const { fauxAssistantMessage, fauxProvider, fauxToolCall } = await import("@earendil-works/pi-ai");
	const { default: piSessionNative } = await import("../extension/index.mjs");
	const agentDir = store.agentDir;
	process.env.PI_OFFLINE = "1";
	const faux = fauxProvider({ api: "faux", provider: "faux", models: [{ id: "faux-1", contextWindow: 100_000, maxTokens: 4096 }] });
	const modelRuntime = await sdk.ModelRuntime.create({ authPath: path.join(agentDir, "auth.json"), modelsPath: null, refreshOnCreate: false });
	modelRuntime.registerNativeProvider(faux.provider);
	const settingsManager = sdk.SettingsManager.inMemory({ compaction: { enabled: false }, retry: { enabled: false } });
	const createRuntime = async ({ cwd, sessionManager, sessionStartEvent }) => {
		const services = await sdk.createAgentSessionServices({
			cwd,
			agentDir,
			settingsManager,
			modelRuntime,
			resourceLoaderOptions: { noExtensions: true, extensionFactories: [piSessionNative], noSkills: true, noPromptTemplates: true, noThemes: true, noContextFiles: true },
		});
		const created = await sdk.createAgentSessionFromServices({ services, sessionManager, sessionStartEvent, model: faux.getModel("faux-1"), thinkingLevel: "off" });
		return { ...created, services, diagnostics: services.diagnostics };
	};
	const runtime = await sdk.createAgentSessionRuntime(createRuntime, { cwd: alpha, agentDir, sessionManager: sdk.SessionManager.create(alpha) });
	try {
		const session = runtime.session;
		const query = "migration";
		const lastResult = () => session.messages.at(-1);
		faux.setResponses([
			() => fauxAssistantMessage([fauxToolCall("session_search", { query, scope: "all", limit: 10 }, { id: "call_search" })], { stopReason: "toolUse" }),
			() => {
				const hit = lastResult().details.hits[0];
				return fauxAssistantMessage([fauxToolCall("session_read", { session: hit.sessionId, around: hit.entryId, limit: 5 }, { id: "call_read" })], { stopReason: "toolUse" });
			},
			() => fauxAssistantMessage([fauxToolCall("session_read", { session: "current", from: "start", limit: 2 }, { id: "call_current" })], { stopReason: "toolUse" }),
			() => fauxAssistantMessage("That is what was said."),
		]);
		// The prompt does not hold the query: the current session is then no hit of it.
		await session.prompt("What did we decide before?");
		const results = session.messages.filter((m) => m.role === "toolResult");
		assert.deepEqual(results.map((m) => [m.toolName, m.isError]), [["session_search", false], ["session_read", false], ["session_read", false]]);
		const sm = session.sessionManager;
		const place = { cwd: alpha, sessionDir: sm.getSessionDir(), currentSessionFile: sm.getSessionFile(), sessionFoldersOnly: true };
		const search = await recallSearch({ query, scope: "all", limit: 10, ...place });
		assert.ok(search.hits.length > 0, "the store holds the query");
		assert.deepEqual(results[0].content, [{ type: "text", text: search.text }]);
		assert.deepEqual(results[0].details, { hits: search.hits, truncated: search.truncated });
		const hit = search.hits[0];
		const read = await recallRead({ session: hit.sessionId, around: hit.entryId, limit: 5, ...place });
		assert.deepEqual(results[1].content, [{ type: "text", text: read.text }]);
		assert.deepEqual(results[1].details, { sessionId: read.sessionId, sessionFile: read.sessionFile, entries: read.entries, truncated: read.truncated, next: read.next });
		assert.ok(read.entries.some((e) => e.id === hit.entryId));
		// The current session's first page: the prompt and the first tool call, read from its file.
		const currentPage = results[2].details;
		assert.equal(currentPage.sessionFile, sm.getSessionFile());
		assert.deepEqual(currentPage.entries.map((e) => e.role), ["user", "assistant"]);
		assert.match(results[2].content[0].text, /What did we decide before\?/);
		assert.match(results[2].content[0].text, /→ session_search: migration/);
		// The model was told about the tools.
		const system = JSON.stringify(session.messages.find((m) => m.role === "system") ?? {});
		assert.match(system, /Find messages in past pi sessions by text, role, date or file \(session_search\)/);
		assert.match(system, /Use session_read with session \\"current\\"/);
	} finally {
		await runtime.dispose?.();
	}
});
