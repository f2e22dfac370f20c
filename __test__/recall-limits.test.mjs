// The recall tools' text within pi's tool-output limits, checked with pi's own truncation
// helpers (truncateHead, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES: from pi's package root on
// Node 22, from the module it re-exports on Node 20): a store of huge matches and messages
// keeps the text within 50 KB and 2,000 lines, states the cut, and pages on exactly from
// where a page stopped.
//
//   node __test__/run.mjs __test__/recall-limits.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { tempDir } from "./helpers/harness.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";

const require = createRequire(import.meta.url);
const { recallSearch, recallRead } = require(path.join(REPO_ROOT, "index.js"));

const PI = path.join(REPO_ROOT, "node_modules", "@earendil-works", "pi-coding-agent");
const pi =
	typeof fs.globSync === "function"
		? await import("@earendil-works/pi-coding-agent")
		: await import(pathToFileURL(path.join(PI, "dist", "core", "tools", "truncate.js")).href);
const { truncateHead, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES } = pi;

process.env.PI_SESSION_NATIVE_CACHE_DIR = "";
const root = fs.realpathSync(tempDir("recall-limits"));
after(() => fs.rmSync(root, { recursive: true, force: true }));
process.env.PI_CODING_AGENT_DIR = path.join(root, "agent");
const cwd = path.join(root, "project");
fs.mkdirSync(cwd);

const SM = reference.SessionManager;
let clock = Date.parse("2025-01-01T00:00:00Z");
function session(fill) {
	const sm = SM.create(cwd);
	fill({
		user: (content) => sm.appendMessage({ role: "user", content, timestamp: clock++ }),
		assistant: (text, calls = []) =>
			sm.appendMessage({ role: "assistant", content: [{ type: "text", text }, ...calls], stopReason: calls.length ? "toolUse" : "stop", timestamp: clock++ }),
		result: (toolName, text) => sm.appendMessage({ role: "toolResult", toolCallId: "c", toolName, content: [{ type: "text", text }], isError: false, timestamp: clock++ }),
	});
	return sm;
}

const many = session(({ user, assistant }) => {
	for (let i = 0; i < 700; i++) {
		user(`message ${i}: the needle is here, ${"with a long tail of words ".repeat(8)}`);
		assistant(`reply ${i}`);
	}
});
const huge = session(({ user, assistant }) => {
	user(`${"x".repeat(150_000)} needle ${"y".repeat(150_000)}`);
	assistant("ok");
});
const longOutput = session(({ user, assistant, result }) => {
	user("run it");
	assistant("running", [{ type: "toolCall", id: "c", name: "bash", arguments: { command: "yes" } }]);
	result("bash", Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join("\n"));
	assistant("done");
});
const heavy = session(({ user, assistant }) => {
	for (let i = 0; i < 120; i++) {
		user(`question ${i}`);
		assistant(`answer ${i}: ${"z".repeat(2000)}`);
	}
});
const tall = session(({ user, assistant }) => {
	for (let i = 0; i < 300; i++) {
		user(`short ${i}`);
		assistant(Array.from({ length: 12 }, (_, k) => `${i}.${k}`).join("\n"));
	}
});

/** Within pi's limits: pi's own truncateHead leaves it as it is. */
function assertWithinLimits(text, where) {
	assert.equal(DEFAULT_MAX_BYTES, 50 * 1024);
	assert.equal(DEFAULT_MAX_LINES, 2000);
	const cut = truncateHead(text, { maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_MAX_LINES });
	assert.equal(cut.truncated, false, `${where}: ${cut.totalBytes} bytes, ${cut.totalLines} lines`);
}

test("500 hits of long messages: the text stops at the limit and says how many it shows", async () => {
	const result = await recallSearch({ cwd, query: "needle", limit: 500 });
	assert.equal(result.hits.length, 500);
	assert.equal(result.truncated, true);
	assertWithinLimits(result.text, "search");
	const shown = Number(result.text.match(/Output limit reached: (\d+) of 500 hits shown\./)?.[1]);
	assert.ok(shown > 0 && shown < 500, result.text.slice(-300));
	assert.match(result.text, /More hits than the limit \(500\)/);
	// Every hit shown is one line, its snippet a bounded piece of a long message.
	for (const hit of result.hits) assert.ok(hit.snippet.length < 400, hit.snippet);
	const big = (await recallSearch({ cwd, query: "needle", session: huge.getSessionId() })).hits[0];
	assert.ok(big.snippet.length < 200 && big.snippet.includes("«needle»"), big.snippet);
});

test("a message larger than a page is shown in part, the cut stated", async () => {
	const read = await recallRead({ session: huge.getSessionFile(), cwd });
	assertWithinLimits(read.text, "huge");
	assert.equal(read.truncated, true);
	assert.deepEqual(read.entries.map((e) => e.role), ["user"]);
	const [, shown, total] = read.text.match(/\[entry cut to the output limit: (\d+) of (\d+) characters shown\]/) ?? [];
	assert.ok(Number(shown) > 40_000 && Number(total) > 300_008, `${shown} of ${total}`);
	assert.match(read.text, /This page stops early at the output limit/);
	// The next page begins after it.
	assert.equal(read.next, huge.getBranch().at(-1).id);
});

test("a tool result is cut to its first lines, the cut stated", async () => {
	const read = await recallRead({ session: longOutput.getSessionFile(), cwd });
	assertWithinLimits(read.text, "tool output");
	assert.equal(read.truncated, false);
	assert.match(read.text, /line 7\n\[output cut: 8 of 20000 lines, \d+ of \d+ characters shown\]/);
	assert.doesNotMatch(read.text, /line 8\b/);
	assert.match(read.text, /→ bash: yes/);
	assert.match(read.text, /Left out: the rest of 1 tool output \(cut to their first lines\)\./);
});

for (const [name, sm] of [
	["bytes", heavy],
	["lines", tall],
]) {
	test(`pages stop at the limit (${name}) and the next page goes on exactly from there`, async () => {
		const readable = sm.getBranch().filter((e) => e.type === "message").map((e) => e.id);
		const seen = [];
		let from = "start";
		let pages = 0;
		while (from !== null) {
			const page = await recallRead({ session: sm.getSessionId(), cwd, from, limit: 500 });
			assertWithinLimits(page.text, `${name} page ${pages}`);
			assert.ok(page.entries.length > 0);
			seen.push(...page.entries.map((e) => e.id));
			if (page.next !== null) {
				assert.equal(page.truncated, true, "a page of 500 stops early only at the limit");
				assert.match(page.text, /This page stops early at the output limit/);
				assert.ok(page.text.endsWith(`Next page: from "${page.next}" (${readable.length - seen.length} more).`), page.text.slice(-200));
			}
			from = page.next;
			pages++;
		}
		assert.ok(pages > 1, `${name}: the limit cut the pages`);
		assert.deepEqual(seen, readable, "every message once, in order");
	});
}
