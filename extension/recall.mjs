// session_search and session_read: tools through which the model recalls past sessions
// (and what this session held before its last compaction), over this package's
// recallSearch and recallRead. Their text is the library's, already within pi's
// tool-output limits; `details` carry the data; the TUI shows a line per call and per hit.
import { Text } from "@earendil-works/pi-tui";

const DATE_OR_DAYS = {
	anyOf: [{ type: "string" }, { type: "number", minimum: 0 }],
};

const SEARCH_PARAMETERS = {
	type: "object",
	properties: {
		query: {
			type: "string",
			description:
				"Text to find, matched literally and ignoring case in messages, tool calls, tool results and summaries. Leave it out to list sessions instead.",
		},
		scope: {
			type: "string",
			enum: ["project", "all"],
			description: 'Sessions of this project ("project", the default) or of every project ("all").',
		},
		role: {
			type: "string",
			enum: ["user", "assistant", "toolCall", "toolResult"],
			description: "Only messages of this kind.",
		},
		after: { ...DATE_OR_DAYS, description: "Only messages from this date on (2025-05-01) or from this many days ago (7)." },
		before: { ...DATE_OR_DAYS, description: "Only messages up to this date (its whole day) or older than this many days." },
		file: {
			type: "string",
			description: "Only sessions whose tools read or wrote this file (an absolute path, or a relative one matching any path that ends with it).",
		},
		session: { type: "string", description: 'Only this session: an id, a unique id prefix, "current" or "parent".' },
		limit: { type: "integer", minimum: 1, maximum: 500, description: "Hits (or sessions) at most; default 20." },
	},
	additionalProperties: false,
};

const READ_PARAMETERS = {
	type: "object",
	properties: {
		session: {
			type: "string",
			description: 'The session: an id or unique id prefix (as session_search shows them), "current" (this session, read from its file) or "parent" (the session this one was forked from).',
		},
		around: { type: "string", description: "A page around this entry id (a session_search hit's entry id)." },
		from: { type: "string", description: 'A page from this entry id, or "start" (the default): the next page\'s "from" is given at the end of each page.' },
		last: { type: "integer", minimum: 1, maximum: 500, description: "The last N messages of the branch instead." },
		limit: { type: "integer", minimum: 1, maximum: 500, description: "Messages a page shows; default 50." },
		leaf: { type: "string", description: "Read the branch that ends at this entry id (default: the session's current branch)." },
		thinking: { type: "boolean", description: "Show thinking blocks too (default false)." },
	},
	required: ["session"],
	additionalProperties: false,
};

/** What pi knows of where sessions are: `ctx.sessionManager`'s folder, file and leaf. */
export function recallPlace(ctx) {
	const sm = ctx.sessionManager;
	return {
		cwd: ctx.cwd,
		sessionDir: sm.getSessionDir() || undefined,
		currentSessionFile: sm.getSessionFile() || undefined,
		parentSessionFile: sm.getHeader()?.parentSession || undefined,
		currentLeafId: sm.getLeafId() || undefined,
		// The model reads pi's sessions, nothing else it might name by path.
		sessionFoldersOnly: true,
	};
}

/** The text for the model and the data for `details`. */
export function searchToolResult(result) {
	const details = { hits: result.hits, ...(result.sessions !== undefined ? { sessions: result.sessions } : {}), truncated: result.truncated };
	return { content: [{ type: "text", text: result.text }], details };
}

export function readToolResult(result) {
	const { sessionId, sessionFile, entries, truncated, next } = result;
	return { content: [{ type: "text", text: result.text }], details: { sessionId, sessionFile, entries, truncated, next } };
}

const shortTime = (value) => {
	const time = typeof value === "string" ? Date.parse(value) : NaN;
	return Number.isNaN(time) ? "" : new Date(time).toISOString().slice(0, 16).replace("T", " ");
};

const quoted = (value) => (typeof value === "string" ? JSON.stringify(value) : String(value));

/** The call's arguments on one line: the query first, then the others that are set. */
export function callSummary(args) {
	const parts = [];
	for (const [key, value] of Object.entries(args ?? {})) {
		if (value === undefined || value === null || value === "") continue;
		parts.push(key === "query" || key === "session" ? quoted(value) : `${key}:${typeof value === "string" ? value : JSON.stringify(value)}`);
	}
	return parts.join(" ");
}

function renderCall(name) {
	return (args, theme) => new Text(`${theme.fg("toolTitle", theme.bold(name))} ${theme.fg("muted", callSummary(args))}`.trimEnd(), 0, 0);
}

const firstLine = (result) => String(result?.content?.find?.((c) => c.type === "text")?.text ?? "").split("\n")[0];

/** Lines of a session_search result: one per hit (or session); with `expanded`, each hit's snippet under it. */
export function searchResultLines(details, expanded, theme) {
	const lines = [];
	const hits = details?.hits ?? [];
	if (details?.sessions) {
		for (const s of details.sessions) {
			lines.push(`${theme.fg("accent", s.sessionId.slice(0, 8))} ${theme.fg("dim", shortTime(s.modified))} ${s.name ?? s.firstMessage ?? ""}`.trimEnd());
		}
		if (details.sessions.length === 0) lines.push(theme.fg("muted", "no sessions"));
	} else {
		for (const hit of hits) {
			const kind = hit.toolName ? `${hit.role} ${hit.toolName}` : hit.role;
			const forks = hit.forks > 0 ? theme.fg("dim", ` +${hit.forks} fork${hit.forks === 1 ? "" : "s"}`) : "";
			lines.push(`${theme.fg("accent", hit.sessionId.slice(0, 8))} ${theme.fg("dim", shortTime(hit.timestamp))} ${theme.fg("muted", kind)} ${hit.entryId ?? "-"}${forks}`);
			if (expanded) lines.push(`  ${theme.fg("dim", hit.snippet)}`);
		}
		if (hits.length === 0) lines.push(theme.fg("muted", "no matches"));
	}
	if (details?.truncated) lines.push(theme.fg("warning", "more than the limit"));
	return lines;
}

/** A session_read result: one line; with `expanded`, the page's text. */
export function readResultLines(result, expanded, theme) {
	const details = result?.details;
	if (!details) return [firstLine(result)];
	const next = details.next ? ` · next from ${details.next}` : " · end of branch";
	const cut = details.truncated ? " · cut at the output limit" : "";
	const count = details.entries.length === 1 ? "1 entry" : `${details.entries.length} entries`;
	const line = `${count} of ${String(details.sessionId).slice(0, 8)}${next}${cut}`;
	if (!expanded) return [theme.fg("muted", line)];
	const text = result.content?.find?.((c) => c.type === "text")?.text ?? "";
	return [theme.fg("muted", line), ...text.split("\n").map((l) => theme.fg("dim", l))];
}

function renderResult(lines, busy) {
	return (result, { expanded, isPartial }, theme, context) => {
		if (isPartial) return new Text(theme.fg("muted", busy), 0, 0);
		if (context?.isError) return new Text(theme.fg("error", firstLine(result)), 0, 0);
		return new Text(lines(result, expanded, theme).join("\n"), 0, 0);
	};
}

/**
 * Registers session_search and session_read. `loadPackage()` gives `{ pkg }` or
 * `{ error }` (the addon may fail to load); a tool then fails with that said.
 */
export function registerRecallTools(pi, loadPackage, firstSentence) {
	const recall = (tool) => {
		const { pkg, error } = loadPackage();
		if (error) throw new Error(`pi-session-native's native addon did not load (${firstSentence(error)}), so ${tool} is not available`);
		return pkg;
	};

	pi.registerTool({
		name: "session_search",
		label: "Session search",
		description:
			"Find messages in past pi sessions (this project's, or every project's with scope \"all\"), newest first: each hit names its session and entry id with a snippet, the match marked «…». A conversation copied into forks is shown once. Without query, lists sessions (newest first). Output is capped at 50 KB / 2,000 lines and says when cut.",
		promptSnippet: "Find messages in past pi sessions by text, role, date or file (session_search)",
		promptGuidelines: [
			"Use session_search when the user refers to earlier work, a past session or something said before this conversation's last compaction; then use session_read with around set to a hit's entry id to read it in context.",
			"Use session_search with file set to find the sessions whose tools read or wrote that file.",
		],
		parameters: SEARCH_PARAMETERS,
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const pkg = recall("session_search");
			return searchToolResult(await pkg.recallSearch({ ...params, ...recallPlace(ctx), signal }));
		},
		renderCall: renderCall("session_search"),
		renderResult: renderResult((result, expanded, theme) => searchResultLines(result.details, expanded, theme), "searching…"),
	});

	pi.registerTool({
		name: "session_read",
		label: "Session read",
		description:
			'Read a page of a pi session as text: user and assistant messages, a line per tool call, tool results cut to their first lines, compaction and branch summaries. session is an id or id prefix from session_search, "current" (this session, everything before its last compaction too) or "parent" (the session this one was forked from). Each page says what it left out and gives the from of the next page. Output is capped at 50 KB / 2,000 lines.',
		promptSnippet: "Read a page of a past session, or of this one before its last compaction (session_read)",
		promptGuidelines: [
			'Use session_read with session "current" and from "start" to read what this conversation said before its last compaction, and with session "parent" for the session this one was forked from.',
			"Use session_read's next page (from, as each page ends) rather than a large limit.",
		],
		parameters: READ_PARAMETERS,
		async execute(_toolCallId, params, signal, _onUpdate, ctx) {
			const pkg = recall("session_read");
			return readToolResult(await pkg.recallRead({ ...params, ...recallPlace(ctx), signal }));
		},
		renderCall: renderCall("session_read"),
		renderResult: renderResult(readResultLines, "reading…"),
	});
}
