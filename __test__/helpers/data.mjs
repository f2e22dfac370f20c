// Test data: messages and entries as pi writes them, plus seeded random variants.
// Message timestamps are fixed (Dec 2024), far outside the normalizer's "now" window, so
// they are compared verbatim. Nothing here looks like an 8-hex id or a UUID.
import { waitForNextMs } from "./clock.mjs";

export const T0 = 1733234400000; // 2024-12-03T14:00:00.000Z

export function usage(n = 1) {
	return {
		input: 100 * n,
		output: 20 * n,
		cacheRead: 0,
		cacheWrite: 0,
		totalTokens: 120 * n,
		cost: { input: 0.0003 * n, output: 0.0003 * n, cacheRead: 0, cacheWrite: 0, total: 0.0006 * n },
	};
}

export function user(content = "hello", i = 0) {
	return { role: "user", content, timestamp: T0 + i * 1000 };
}

export function assistant(text = "hi there", { i = 1, provider = "anthropic", model = "claude-sonnet-4-5", extra = {} } = {}) {
	return {
		role: "assistant",
		content: [{ type: "text", text }],
		api: "anthropic-messages",
		provider,
		model,
		usage: usage(i),
		stopReason: "stop",
		timestamp: T0 + i * 1000,
		...extra,
	};
}

export function assistantToolCall(i = 2) {
	return {
		role: "assistant",
		content: [
			{ type: "thinking", thinking: "let me look" },
			{ type: "toolCall", id: "call_one", name: "bash", arguments: { command: "ls -la" } },
		],
		api: "openai-responses",
		provider: "openai",
		model: "gpt-5.1-codex",
		usage: usage(i),
		stopReason: "toolUse",
		timestamp: T0 + i * 1000,
	};
}

export function toolResult(text = "file-a\nfile-b", i = 3) {
	return {
		role: "toolResult",
		toolCallId: "call_one",
		toolName: "bash",
		content: [{ type: "text", text }],
		isError: false,
		timestamp: T0 + i * 1000,
	};
}

export function system({ content = "You are a coding assistant.", sections, toolsAdded, toolsRemoved, i = 0 } = {}) {
	const m = { role: "system", content };
	if (sections !== undefined) m.sections = sections;
	if (toolsAdded !== undefined) m.toolsAdded = toolsAdded;
	if (toolsRemoved !== undefined) m.toolsRemoved = toolsRemoved;
	m.timestamp = T0 + i * 1000;
	return m;
}

export function tool(name, description = `the ${name} tool`) {
	return { name, description, parameters: { type: "object", properties: { arg: { type: "string" } } } };
}

export function customRole(content = "extension says hi", i = 4) {
	return { role: "custom", customType: "my-ext", content, display: true, details: { k: 1 }, timestamp: T0 + i * 1000 };
}

export function bashExecution(i = 5) {
	return {
		role: "bashExecution",
		command: "echo hi",
		output: "hi\n",
		exitCode: 0,
		cancelled: false,
		truncated: false,
		timestamp: T0 + i * 1000,
	};
}

/** A rich session: system prompt with sections and tools, a tool round trip, settings, labels, a compaction, a branch. */
export function buildRichSession(s) {
	const sm = s.sm;
	const step = (fn) => {
		waitForNextMs();
		return fn();
	};
	step(() => sm.appendMessage(system({ sections: { preamble: "Be brief.", cwd: "/project" }, toolsAdded: [tool("read"), tool("bash")] })));
	step(() => sm.appendThinkingLevelChange("high"));
	step(() => sm.appendModelChange("anthropic", "claude-sonnet-4-5"));
	const u1 = step(() => sm.appendMessage(user("list the files", 1)));
	step(() => sm.appendMessage(assistantToolCall(2)));
	step(() => sm.appendMessage(toolResult("a.txt\nb.txt", 3)));
	const a1 = step(() => sm.appendMessage(assistant("two files", { i: 4 })));
	step(() => sm.appendLabelChange(u1, "start"));
	step(() =>
		sm.appendMessage(system({ content: "", sections: { cwd: null, extra: "More rules." }, toolsRemoved: [{ name: "bash" }], i: 5 })),
	);
	step(() => sm.appendCustomMessageEntry("my-ext", "injected context", true, { source: "test" }));
	step(() => sm.appendCompaction("we listed files", u1, 12345, { readFiles: ["a.txt"], modifiedFiles: [] }));
	step(() => sm.appendMessage(user("and now?", 6)));
	step(() => sm.appendMessage(assistant("done", { i: 7 })));
	step(() => sm.appendSessionInfo("Rich session"));
	step(() => sm.branch(a1));
	step(() => sm.appendMessage(user("another way", 8)));
	step(() => sm.appendMessage(assistant("sure", { i: 9, provider: "openai", model: "gpt-5.1" })));
	return sm;
}

// --- seeded random data -----------------------------------------------------------

const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo"];
const SPECIAL_TEXTS = [
	"héllo wörld ñ",
	"emoji 😀 and 👩‍💻",
	'quote " and \\ backslash',
	"tab\tand\nnewline\r\nand cr",
	"nul\u0000char",
	"lone \ud800 surrogate",
	"line\u2028sep\u2029para",
	"   padded   ",
	"",
	"<script>&amp;</script>",
	"日本語のテキスト",
];

export function randomText(rng) {
	if (rng.bool(0.25)) return rng.pick(SPECIAL_TEXTS);
	// Sometimes long enough (over 512 bytes of JSON) to be a heavy value ours reads lazily
	// and, when it lets go, makes again from its line.
	const n = rng.bool(0.12) ? 100 + rng.int(200) : 1 + rng.int(6);
	const words = [];
	for (let i = 0; i < n; i++) words.push(rng.pick(WORDS));
	return words.join(" ");
}

function randomBlocks(rng) {
	const blocks = [{ type: "text", text: randomText(rng) }];
	if (rng.bool(0.2)) blocks.push({ type: "image", data: "aGVsbG8=", mimeType: "image/png" });
	if (rng.bool(0.2)) blocks.push({ type: "text", text: randomText(rng) });
	return blocks;
}

/** A random message of any role pi stores; sometimes with null content or odd fields. */
export function randomMessage(rng, i) {
	const role = rng.pick(["user", "user", "assistant", "assistant", "toolResult", "system", "custom", "bashExecution"]);
	let m;
	switch (role) {
		case "user":
			m = user(rng.bool() ? randomText(rng) : randomBlocks(rng), i);
			break;
		case "assistant":
			m = rng.bool(0.3)
				? assistantToolCall(i)
				: assistant(randomText(rng), { i, provider: rng.pick(["anthropic", "openai"]), model: rng.pick(["m-one", "m-two"]) });
			break;
		case "toolResult":
			m = toolResult(randomText(rng), i);
			if (rng.bool(0.2)) m.isError = true;
			break;
		case "system": {
			const opts = { content: rng.bool(0.5) ? randomText(rng) : "", i };
			if (rng.bool(0.6)) opts.sections = { [rng.pick(["preamble", "cwd", "skills"])]: rng.bool(0.2) ? null : randomText(rng) };
			if (rng.bool(0.5)) opts.toolsAdded = [tool(rng.pick(["read", "bash", "edit"]))];
			if (rng.bool(0.3)) opts.toolsRemoved = [{ name: rng.pick(["read", "bash", "edit"]) }];
			m = system(opts);
			break;
		}
		case "custom":
			m = customRole(rng.bool() ? randomText(rng) : randomBlocks(rng), i);
			m.display = rng.bool();
			break;
		default:
			m = bashExecution(i);
			m.output = randomText(rng);
			m.exitCode = rng.pick([0, 1, null]);
			if (rng.bool(0.2)) m.excludeFromContext = true;
	}
	if (rng.bool(0.08) && role !== "bashExecution") m.content = null;
	if (rng.bool(0.08)) m.extraUndefined = undefined; // kept in memory, dropped from the file
	if (rng.bool(0.04)) m.notANumber = Number.NaN; // NaN in memory, null in the file
	return m;
}

export const SESSION_NAMES = ["My session", "line1\nline2", "  spaced\r\n\r\nname  ", "\n\n", "", "tab\tname", "naïve café"];

export const CONTEXT_EDIT_REPLACEMENTS = [
	["null", null],
	["string", { content: "replaced text" }],
	["blocks", { content: [{ type: "text", text: "replaced block" }] }],
	["empty string", { content: "" }],
	["invalid: bare string", "just a string"],
	["invalid: {}", {}],
	["invalid: content 5", { content: 5 }],
	["invalid: content null", { content: null }],
	["invalid: number", 42],
	["invalid: undefined", undefined],
	["invalid: array", []],
];
