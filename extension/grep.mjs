// /grep: the messages that match, found by this package's grepSessions, in a list drawn
// with pi's TUI components (SelectList); Enter shows the message in full with the
// entries around it, and Enter there resumes that session (ctx.switchSession).
// Results show as they are found; closing the view stops the reading.
import { matchesKey, SelectList, truncateToWidth, wrapTextWithAnsi } from "@earendil-works/pi-tui";

/** At most this many matches are kept (the view says so). */
export const MAX_MATCHES = 1000;
const CONTEXT = 40;

/** `/grep [--all] <pattern>` → `{ pattern, all }`, or null without a pattern. */
export function parseGrepArgs(args) {
	let text = String(args ?? "").trim();
	let all = false;
	if (text === "--all" || text.startsWith("--all ")) {
		all = true;
		text = text.slice("--all".length).trim();
	}
	return text ? { pattern: text, all } : null;
}

const flat = (text) => text.replace(/\s+/g, " ");

/** The text around a match's first range, on one line. */
export function matchSnippet(match, context = CONTEXT) {
	const [start, end] = match.ranges[0];
	const from = Math.max(0, start - context);
	const to = Math.min(match.text.length, end + context);
	return `${from > 0 ? "…" : ""}${flat(match.text.slice(from, to))}${to < match.text.length ? "…" : ""}`;
}

function shortTime(timestamp) {
	const date = new Date(typeof timestamp === "string" || typeof timestamp === "number" ? timestamp : NaN);
	return Number.isNaN(date.getTime()) ? "" : date.toISOString().slice(0, 16).replace("T", " ");
}

/** What an entry says, as text (the same parts grep reads, and tool calls). */
export function entryText(entry) {
	const parts = (content) => {
		if (typeof content === "string") return [content];
		if (!Array.isArray(content)) return [];
		return content.flatMap((b) => {
			if (b?.type === "text" && typeof b.text === "string") return [b.text];
			if (b?.type === "thinking" && typeof b.thinking === "string") return [`(thinking) ${b.thinking}`];
			if (b?.type === "toolCall") return [`(tool call) ${b.name} ${JSON.stringify(b.arguments ?? {})}`];
			return [];
		});
	};
	if (entry?.type === "message") {
		const m = entry.message ?? {};
		if (m.role === "bashExecution") return [`$ ${m.command ?? ""}`, m.output ?? ""].join("\n");
		return parts(m.content).join("\n");
	}
	if (entry?.type === "compaction" || entry?.type === "branch_summary") return String(entry.summary ?? "");
	if (entry?.type === "custom_message") return parts(entry.content).join("\n");
	return "";
}

const entryRole = (entry) => (entry?.type === "message" ? String(entry.message?.role) : String(entry?.type));

/**
 * The matched entry and the entries with text around it (`around` each side), from the
 * session's entries (loadEntriesFromFile). The entry is found by id, or for a session
 * without ids (version 1) by timestamp and text.
 */
export function neighbours(entries, match, around = 2) {
	const withText = entries.filter((e) => e?.type !== "session" && entryText(e) !== "");
	const at = withText.findIndex((e) =>
		match.entryId !== undefined ? e.id === match.entryId : e.timestamp === match.timestamp && entryText(e).includes(match.text),
	);
	if (at === -1) return { before: [], entry: undefined, after: [] };
	return { before: withText.slice(Math.max(0, at - around), at), entry: withText[at], after: withText.slice(at + 1, at + 1 + around) };
}

/**
 * /grep's component for `ctx.ui.custom((tui, theme, keybindings, done) => ...)`: the
 * matches so far in a SelectList; Enter opens one (`loadEntries(path)` gives its
 * session's entries); Enter again asks to resume it (`onClose({ path })`), Escape goes
 * back, Escape in the list closes (`onClose(undefined)`).
 */
export class GrepView {
	constructor({ pattern, theme, onClose, loadEntries, requestRender = () => {}, maxVisible = 12, canResume = true }) {
		this.pattern = pattern;
		this.theme = theme;
		this.onClose = onClose;
		this.loadEntries = loadEntries;
		this.requestRender = requestRender;
		this.maxVisible = maxVisible;
		this.canResume = canResume;
		this.matches = [];
		this.done = false;
		this.error = undefined;
		this.list = undefined;
		this.listSize = -1;
		this.detail = undefined;
		this.scroll = 0;
	}

	fg(colour, text) {
		return this.theme ? this.theme.fg(colour, text) : text;
	}

	addMatch(match) {
		if (this.matches.length >= MAX_MATCHES) return false;
		this.matches.push(match);
		this.requestRender();
		return this.matches.length < MAX_MATCHES;
	}

	setDone() {
		this.done = true;
		this.requestRender();
	}

	setError(message) {
		this.error = message;
		this.done = true;
		this.requestRender();
	}

	/** The SelectList, made again when matches came since (keeping the selection). */
	selectList() {
		if (this.list && this.listSize === this.matches.length) return this.list;
		const selected = this.list ? Number(this.list.getSelectedItem()?.value ?? 0) : 0;
		const items = this.matches.map((m, i) => ({
			value: String(i),
			label: `${String(m.sessionId).slice(0, 8)} ${shortTime(m.timestamp)} ${m.role}`,
			description: matchSnippet(m),
		}));
		const theme = {
			selectedPrefix: (t) => this.fg("accent", t),
			selectedText: (t) => this.fg("accent", t),
			description: (t) => this.fg("muted", t),
			scrollInfo: (t) => this.fg("dim", t),
			noMatch: (t) => this.fg("dim", t),
		};
		this.list = new SelectList(items, this.maxVisible, theme, { minPrimaryColumnWidth: 12, maxPrimaryColumnWidth: 44 });
		this.list.setSelectedIndex(selected);
		this.list.onSelect = (item) => this.open(this.matches[Number(item.value)]);
		this.list.onCancel = () => this.onClose?.(undefined);
		this.listSize = this.matches.length;
		return this.list;
	}

	open(match) {
		let around;
		try {
			around = neighbours(this.loadEntries(match.path), match);
		} catch (error) {
			around = { before: [], entry: undefined, after: [], error: String(error?.message ?? error) };
		}
		this.detail = { match, ...around };
		this.scroll = 0;
		this.requestRender();
	}

	status() {
		const n = this.matches.length;
		const count = `${n}${n >= MAX_MATCHES ? "+" : ""} match${n === 1 ? "" : "es"}`;
		if (this.error) return `/grep: ${this.error}`;
		return this.done ? count : `${count}, reading…`;
	}

	/** The matched block with each range marked. */
	marked(match) {
		let out = "";
		let at = 0;
		for (const [s, e] of match.ranges) {
			out += match.text.slice(at, s) + this.fg("warning", match.text.slice(s, e));
			at = e;
		}
		return out + match.text.slice(at);
	}

	detailLines(width) {
		const { match, before, entry, after, error } = this.detail;
		const lines = [];
		const block = (e, text, current) => {
			lines.push(this.fg(current ? "accent" : "muted", `${current ? "▶ " : ""}${entryRole(e)}  ${shortTime(e.timestamp)}`));
			for (const l of text.split("\n")) lines.push(...wrapTextWithAnsi(l, Math.max(1, width - 2)).map((w) => `  ${w}`));
			lines.push("");
		};
		if (error) lines.push(`Cannot read ${match.path}: ${error}`, "");
		for (const e of before) block(e, entryText(e), false);
		// The matched block in full, its matches marked; the rest of its entry as it is.
		block(entry ?? { type: "message", message: { role: match.role }, timestamp: match.timestamp }, this.marked(match), true);
		for (const e of after) block(e, entryText(e), false);
		return lines;
	}

	render(width) {
		const title = truncateToWidth(this.fg("accent", `grep ${this.pattern}`), width, "");
		if (this.detail) {
			const body = this.detailLines(width);
			const rows = Math.max(5, this.maxVisible * 2);
			this.scroll = Math.min(this.scroll, Math.max(0, body.length - rows));
			const hint = this.canResume ? "enter resume this session · ↑↓ scroll · esc back" : "↑↓ scroll · esc back";
			return [
				title,
				truncateToWidth(this.fg("muted", `${this.detail.match.path}`), width, "…"),
				"",
				...body.slice(this.scroll, this.scroll + rows).map((l) => truncateToWidth(l, width, "")),
				truncateToWidth(this.fg("dim", hint), width, ""),
			];
		}
		const list = this.matches.length ? this.selectList().render(width) : [];
		return [
			title,
			truncateToWidth(this.fg(this.error ? "error" : "muted", this.status()), width, ""),
			"",
			...list,
			"",
			truncateToWidth(this.fg("dim", "↑↓ move · enter open · esc close"), width, ""),
		];
	}

	handleInput(data) {
		if (this.detail) {
			if (matchesKey(data, "escape")) this.detail = undefined;
			else if (matchesKey(data, "enter") || matchesKey(data, "return")) {
				if (this.canResume) this.onClose?.({ path: this.detail.match.path });
				return;
			} else if (matchesKey(data, "down")) this.scroll++;
			else if (matchesKey(data, "up")) this.scroll = Math.max(0, this.scroll - 1);
			else return;
			this.requestRender();
			return;
		}
		if (matchesKey(data, "escape") && !this.matches.length) {
			this.onClose?.(undefined);
			return;
		}
		if (!this.matches.length) return;
		this.selectList().handleInput(data);
		this.requestRender();
	}

	invalidate() {
		this.list?.invalidate();
	}
}

/**
 * Runs /grep in `ctx.ui.custom`: grepSessions over this project's sessions (or every
 * project's with `all`), matches shown as found. Resolves to `{ path }` to resume, or
 * undefined.
 */
export function runGrep(pkg, ctx, { pattern, all }) {
	const reading = new AbortController();
	return ctx.ui.custom((tui, theme, _keybindings, done) => {
		const view = new GrepView({
			pattern,
			theme,
			loadEntries: (file) => pkg.loadEntriesFromFile(file),
			requestRender: () => tui.requestRender(),
			canResume: typeof ctx.switchSession === "function",
			onClose: (result) => {
				reading.abort();
				done(result);
			},
		});
		const where = all ? {} : { cwd: ctx.cwd, sessionDir: ctx.sessionManager.getSessionDir() };
		pkg
			.grepSessions(pattern, {
				...where,
				signal: reading.signal,
				// The view keeps the matches it shows.
				collect: false,
				onMatch: (match) => {
					if (!view.addMatch(match)) reading.abort();
				},
			})
			.then(
				() => view.setDone(),
				(failure) => {
					if (reading.signal.aborted) view.setDone();
					else view.setError(String(failure?.message ?? failure).split("\n")[0]);
				},
			);
		return view;
	});
}
