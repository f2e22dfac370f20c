// grepSessions as a plain JavaScript program: read each listed file, JSON.parse
// each line, take the blocks the fields name, and `text.matchAll(regexp)`.
// The tests compare grepSessions with it; the benchmark times it.
import fs from "node:fs";

export const ALL_FIELDS = ["text", "toolResult", "summary", "thinking", "toolCall", "custom"];
export const DEFAULT_FIELDS = ["text", "toolResult", "summary"];

export function escapeRegExp(text) {
	return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function oracleRegExp(pattern, caseSensitive = false) {
	const flags = caseSensitive ? "g" : "gi";
	return pattern.startsWith("re:") ? new RegExp(pattern.slice(3), flags) : new RegExp(escapeRegExp(pattern), flags);
}

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/** The searched blocks of one parsed line: { field, blockIndex, text, role }. */
export function blocksOf(entry, fields) {
	const out = [];
	if (!isObject(entry)) return out;
	const add = (field, blockIndex, text, role) => {
		if (fields.includes(field) && typeof text === "string") out.push({ field, blockIndex, text, role });
	};
	const textBlocks = (field, content, role) => {
		if (typeof content === "string") add(field, 0, content, role);
		else if (Array.isArray(content)) {
			content.forEach((b, i) => {
				if (isObject(b) && b.type === "text") add(field, i, b.text, role);
			});
		}
	};
	if (entry.type === "message") {
		const m = entry.message;
		if (!isObject(m)) return out;
		const role = m.role;
		if (role === "user") textBlocks("text", m.content, role);
		else if (role === "toolResult") textBlocks("toolResult", m.content, role);
		else if (role === "custom" || role === "hookMessage") textBlocks("custom", m.content, role);
		else if (role === "bashExecution") add("custom", 0, m.output, role);
		else if (role === "assistant") {
			if (typeof m.content === "string") add("text", 0, m.content, role);
			else if (Array.isArray(m.content)) {
				m.content.forEach((b, i) => {
					if (!isObject(b)) return;
					if (b.type === "text") add("text", i, b.text, role);
					else if (b.type === "thinking") add("thinking", i, b.thinking, role);
					else if (b.type === "toolCall" && typeof b.name === "string") {
						add("toolCall", i, `${b.name} ${JSON.stringify(b.arguments ?? {})}`, role);
					}
				});
			}
		}
	} else if (entry.type === "compaction" || entry.type === "branch_summary") add("summary", 0, entry.summary, entry.type);
	else if (entry.type === "custom_message") textBlocks("custom", entry.content, entry.type);
	return out;
}

/** A match's toolName: the tool call's name, or a tool result message's toolName (a string), else null. */
function toolNameOf(entry, block) {
	if (block.field === "toolCall") return entry.message.content[block.blockIndex].name;
	return block.role === "toolResult" && typeof entry.message.toolName === "string" ? entry.message.toolName : null;
}

function inTime(timestamp, since, until) {
	if (since === undefined && until === undefined) return true;
	const time = typeof timestamp === "string" || typeof timestamp === "number" ? new Date(timestamp).getTime() : NaN;
	return (since === undefined || time >= since) && (until === undefined || time <= until);
}

/** The matches of `sessions` (SessionInfo[] in listing order). */
export function oracleGrep(sessions, pattern, { fields = DEFAULT_FIELDS, caseSensitive = false, since, until, limit } = {}) {
	const regexp = oracleRegExp(pattern, caseSensitive);
	const time = (d) => (d === undefined ? undefined : new Date(d).getTime());
	const [from, to] = [time(since), time(until)];
	const matches = [];
	for (const session of sessions) {
		let content;
		try {
			content = fs.readFileSync(session.path, "utf8");
		} catch {
			continue;
		}
		for (const line of content.split("\n")) {
			let entry;
			try {
				entry = JSON.parse(line);
			} catch {
				continue;
			}
			const blocks = blocksOf(entry, fields);
			if (blocks.length === 0 || !inTime(entry.timestamp, from, to)) continue;
			for (const block of blocks) {
				const ranges = [];
				for (const m of block.text.matchAll(regexp)) if (m[0].length > 0) ranges.push([m.index, m.index + m[0].length]);
				if (ranges.length === 0) continue;
				matches.push({
					path: session.path,
					sessionId: session.id,
					cwd: session.cwd,
					entryId: entry.id,
					timestamp: entry.timestamp,
					role: block.role,
					toolName: toolNameOf(entry, block),
					field: block.field,
					blockIndex: block.blockIndex,
					text: block.text,
					ranges,
				});
				if (limit !== undefined && matches.length >= limit) return matches;
			}
		}
	}
	return matches;
}
