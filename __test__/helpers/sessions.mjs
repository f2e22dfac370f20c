// Fixed session data with explicit ids (v3, v2, v1 formats), as fresh objects on every call.
// Ids look like real ones (8 hex chars); tests pass FIXED_KEEP so the normalizer leaves them alone.
import { assistant, customRole, system, T0, tool, toolResult, usage, user } from "./data.mjs";
import { tokensIn } from "./normalize.mjs";

const iso = (i) => new Date(T0 + i * 1000).toISOString();

export const FIXED_SESSION_ID = "0192f0e1-aaaa-7bbb-8ccc-0123456789ab";

export function header(extra = {}) {
	return { type: "session", version: 3, id: FIXED_SESSION_ID, timestamp: iso(0), cwd: "/fixed/project", ...extra };
}

/**
 * A v3 tree:
 *   s0 system -> u1 user -> a1 assistant(tool call) -> t1 toolResult -> a2 assistant -> l1 label(u1)
 *     -> c1 compaction(firstKept t1) -> u2 user -> e1 context_edit(u2) -> a3 assistant
 *   a2 -> b1 branch_summary -> cm1 custom_message -> u3 user -> x1 custom -> i1 session_info -> m1 model_change -> k1 thinking
 */
export function v3Entries() {
	const e = (type, id, parentId, i, fields) => ({ type, id, parentId, timestamp: iso(i), ...fields });
	return [
		header(),
		e("message", "5a000001", null, 1, {
			message: system({ sections: { preamble: "Be brief." }, toolsAdded: [tool("read")], i: 1 }),
		}),
		e("message", "5a000002", "5a000001", 2, { message: user("first question", 2) }),
		e("message", "5a000003", "5a000002", 3, {
			message: {
				...assistant("", { i: 3 }),
				content: [{ type: "toolCall", id: "call_one", name: "read", arguments: { path: "a.txt" } }],
			},
		}),
		e("message", "5a000004", "5a000003", 4, { message: toolResult("contents of a", 4) }),
		e("message", "5a000005", "5a000004", 5, { message: assistant("a.txt says hello", { i: 5 }) }),
		e("label", "5a000006", "5a000005", 6, { targetId: "5a000002", label: "question" }),
		e("compaction", "5a000007", "5a000006", 7, {
			summary: "asked about a.txt",
			firstKeptEntryId: "5a000004",
			tokensBefore: 4242,
			systemMessage: system({ content: "checkpoint", i: 7 }),
		}),
		e("message", "5a000008", "5a000007", 8, { message: user("second question", 8) }),
		e("context_edit", "5a000009", "5a000008", 9, { targetId: "5a000008", replacement: { content: "edited question" } }),
		e("message", "5a00000a", "5a000009", 10, { message: assistant("second answer", { i: 10, provider: "openai", model: "gpt-5.1" }) }),
		e("branch_summary", "5a00000b", "5a000005", 11, { fromId: "5a00000a", summary: "tried another path" }),
		e("custom_message", "5a00000c", "5a00000b", 12, {
			customType: "my-ext",
			content: [{ type: "text", text: "ext context" }],
			display: false,
			details: { n: 1 },
		}),
		e("message", "5a00000d", "5a00000c", 13, { message: user([{ type: "text", text: "third question" }], 13) }),
		e("custom", "5a00000e", "5a00000d", 14, { customType: "state", data: { counter: 3 } }),
		e("session_info", "5a00000f", "5a00000e", 15, { name: "Fixed session" }),
		e("model_change", "5a000010", "5a00000f", 16, { provider: "google", modelId: "gemini-2.5-pro" }),
		e("thinking_level_change", "5a000011", "5a000010", 17, { thinkingLevel: "medium" }),
		e("usage", "5a000012", "5a000011", 18, { kind: "cache_warm", provider: "anthropic", model: "m-one", usage: usage(3) }),
	];
}

/** A v2 file: ids and parents, no version-3 rename yet (hookMessage role). */
export function v2Entries() {
	const e = (type, id, parentId, i, fields) => ({ type, id, parentId, timestamp: iso(i), ...fields });
	return [
		header({ version: 2 }),
		e("message", "6b000001", null, 1, { message: user("v2 question", 1) }),
		e("message", "6b000002", "6b000001", 2, { message: { ...customRole("hook says hi", 2), role: "hookMessage" } }),
		e("message", "6b000003", "6b000002", 3, { message: assistant("v2 answer", { i: 3 }) }),
		e("compaction", "6b000004", "6b000003", 4, { summary: "v2 summary", firstKeptEntryId: "6b000002", tokensBefore: 10 }),
		e("message", "6b000005", "6b000004", 5, { message: { ...customRole("second hook", 5), role: "hookMessage" } }),
	];
}

/** A v1 file: no version, no ids; compactions point at entries by index. */
export function v1Entries() {
	const { version, ...h } = header({ provider: "anthropic", modelId: "claude-sonnet-4-5", thinkingLevel: "off" });
	const e = (type, i, fields) => ({ type, timestamp: iso(i), ...fields });
	return [
		h,
		e("message", 1, { message: user("v1 question", 1) }),
		e("message", 2, { message: assistant("v1 answer", { i: 2 }) }),
		e("thinking_level_change", 3, { thinkingLevel: "low" }),
		e("message", 4, { message: user("v1 follow-up", 4) }),
		e("compaction", 5, { summary: "v1 summary", firstKeptEntryIndex: 4, tokensBefore: 99 }),
		e("message", 6, { message: assistant("after v1 compaction", { i: 6 }) }),
		e("compaction", 7, { summary: "points at header", firstKeptEntryIndex: 0, tokensBefore: 1 }),
		e("compaction", 8, { summary: "points nowhere", firstKeptEntryIndex: 99, tokensBefore: 1 }),
		e("model_change", 9, { provider: "openai", modelId: "gpt-5.1" }),
	];
}

export function toJsonl(entries) {
	return entries.map((e) => `${JSON.stringify(e)}\n`).join("");
}

/** Tokens in the fixed data that must not be normalized away. */
export const FIXED_KEEP = new Set([
	...tokensIn(toJsonl(v3Entries())),
	...tokensIn(toJsonl(v2Entries())),
	...tokensIn(toJsonl(v1Entries())),
]);
