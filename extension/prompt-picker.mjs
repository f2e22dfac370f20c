// The prompt picker: a keyboard shortcut (alt+r unless keybindings.json says otherwise)
// opens a list of every prompt typed in this project's sessions (Tab: every project's),
// newest first, each text once, from this package's listPrompts; typing filters it as
// pi's /resume matches message text, Enter puts the prompt in pi's editor, Escape closes.
// The list opens at once and fills as the sessions are read, with progress as /resume
// shows it; closing it stops the reading. Drawn with pi-tui's Input and pi's theme.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Input, truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";

/** The id under which keybindings.json may set the picker's keys (pi ignores ids it does not know). */
export const PROMPTS_KEYBINDING = "pi-session-native.prompts";
/** Not one of pi's default keys: "recall". */
export const DEFAULT_PROMPTS_KEYS = Object.freeze(["alt+r"]);

const SCOPE_TITLES = { project: "Prompts (Current Folder)", all: "Prompts (All)" };

/** pi's agent folder: the package's answer when it loaded, else PI_CODING_AGENT_DIR or ~/.pi/agent. */
export function agentDirOf(pkg) {
	if (pkg) return pkg.getAgentDir();
	const fromEnv = process.env.PI_CODING_AGENT_DIR;
	if (fromEnv) return fromEnv === "~" ? os.homedir() : fromEnv.startsWith("~/") ? path.join(os.homedir(), fromEnv.slice(2)) : fromEnv;
	return path.join(os.homedir(), ".pi", "agent");
}

/**
 * The picker's keys: `"pi-session-native.prompts"` of `<agentDir>/keybindings.json` (one key,
 * or a list; `[]` turns the shortcut off), else alt+r. A file that cannot be read or parsed,
 * or a value that is not a key or a list of keys, leaves the default.
 */
export function promptPickerKeys(agentDir) {
	let config;
	try {
		config = JSON.parse(fs.readFileSync(path.join(agentDir, "keybindings.json"), "utf8").replace(/^\uFEFF/, ""));
	} catch {
		return [...DEFAULT_PROMPTS_KEYS];
	}
	const value = config?.[PROMPTS_KEYBINDING];
	if (typeof value === "string" && value.trim() !== "") return [value.trim()];
	if (Array.isArray(value) && value.every((k) => typeof k === "string" && k.trim() !== "")) return value.map((k) => k.trim());
	return [...DEFAULT_PROMPTS_KEYS];
}

// ===== matching =====

const collapse = (text) => text.toLowerCase().replace(/\s+/g, " ").trim();

/**
 * A query as pi's /resume reads it, for one text: `re:<pattern>` a regular expression
 * (ignoring case); else words, each of which must be in the text (ignoring case), and
 * "quoted phrases", matched with runs of whitespace as one space (an unclosed quote makes
 * every word a word). `{ test(lower, collapsed), error? }`; an empty query matches all.
 */
export function promptQuery(query) {
	const trimmed = String(query ?? "").trim();
	if (trimmed === "") return { all: true, test: () => true };
	if (trimmed.startsWith("re:")) {
		const pattern = trimmed.slice(3).trim();
		if (pattern === "") return { error: "Empty regex", test: () => false };
		let regex;
		try {
			regex = new RegExp(pattern, "i");
		} catch (error) {
			return { error: String(error?.message ?? error), test: () => false };
		}
		return { regex: true, test: (prompt) => regex.test(prompt.text) };
	}
	const words = [];
	const phrases = [];
	let quoted = false;
	let current = "";
	const flush = () => {
		const value = current.trim();
		if (value !== "") (quoted ? phrases : words).push(quoted ? collapse(value) : value.toLowerCase());
		current = "";
	};
	for (const ch of trimmed) {
		if (ch === '"') {
			flush();
			quoted = !quoted;
		} else if (!quoted && /\s/.test(ch)) flush();
		else current += ch;
	}
	if (quoted) {
		// An unclosed quote: plain words, the quote marks kept, as /resume does.
		words.length = 0;
		phrases.length = 0;
		for (const w of trimmed.split(/\s+/)) if (w !== "") words.push(w.toLowerCase());
	} else flush();
	return {
		test: (prompt, lowerOf = (p) => p.text.toLowerCase(), collapsedOf = (p) => collapse(p.text)) =>
			words.every((w) => lowerOf(prompt).includes(w)) && phrases.every((p) => collapsedOf(prompt).includes(p)),
	};
}

/** Whether every prompt `next` keeps is one that `previous` kept (typing on narrows). */
function narrows(previous, next) {
	if (previous.includes('"') || next.includes('"')) return false;
	if (previous.trim().startsWith("re:") || next.trim().startsWith("re:")) return false;
	return next.startsWith(previous);
}

// ===== display =====

/** How long ago, as pi's /resume says it: now, 5m, 3h, 2d, 1w, 4mo, 2y. */
export function age(timestamp, now = Date.now()) {
	const time = typeof timestamp === "string" ? Date.parse(timestamp) : NaN;
	if (Number.isNaN(time)) return "";
	const minutes = Math.floor((now - time) / 60_000);
	if (minutes < 1) return "now";
	if (minutes < 60) return `${minutes}m`;
	const hours = Math.floor(minutes / 60);
	if (hours < 24) return `${hours}h`;
	const days = Math.floor(hours / 24);
	if (days < 7) return `${days}d`;
	if (days < 30) return `${Math.floor(days / 7)}w`;
	if (days < 365) return `${Math.floor(days / 30)}mo`;
	return `${Math.floor(days / 365)}y`;
}

/** A path with the home folder as ~. */
function shortPath(file) {
	const home = os.homedir();
	return home && (file === home || file.startsWith(`${home}${path.sep}`)) ? `~${file.slice(home.length)}` : file;
}

/** A prompt on one line: control characters and runs of whitespace as one space. */
const oneLine = (text) => text.replace(/[\x00-\x1f\x7f\s]+/g, " ").trim();

/**
 * The picker, a component for `ctx.ui.custom`. `load(scope, { onPrompts, onProgress })`
 * starts reading a scope and returns a promise of its end (a rejection is shown); the
 * picker asks for each scope once, when it is first shown. `onDone(text)` gets the chosen
 * prompt's text, or undefined on Escape. It opens on `scope` ("project" unless given).
 */
export class PromptPicker {
	constructor({ theme, keybindings, load, onDone, requestRender = () => {}, maxVisible = 10, now = () => Date.now(), scope = "project" }) {
		this.theme = theme;
		this.keybindings = keybindings;
		this.load = load;
		this.onDone = onDone;
		this.requestRender = requestRender;
		this.maxVisible = maxVisible;
		this.now = now;
		this.input = new Input();
		this.scopes = new Map();
		this.lower = new WeakMap();
		this.collapsed = new WeakMap();
		this.lowerOf = (p) => {
			let l = this.lower.get(p);
			if (l === undefined) this.lower.set(p, (l = p.text.toLowerCase()));
			return l;
		};
		this.collapsedOf = (p) => {
			let c = this.collapsed.get(p);
			if (c === undefined) this.collapsed.set(p, (c = collapse(p.text)));
			return c;
		};
		this.query = "";
		this.matcher = promptQuery("");
		this.filtered = [];
		this.selected = 0;
		this._focused = false;
		this.show(scope);
	}

	// Focusable: the search field shows the terminal's cursor (IME).
	get focused() {
		return this._focused;
	}
	set focused(value) {
		this._focused = value;
		this.input.focused = value;
	}

	state(scope = this.scope) {
		return this.scopes.get(scope);
	}

	/** Shows `scope`, reading it the first time. */
	show(scope) {
		this.scope = scope;
		if (!this.scopes.has(scope)) {
			const state = { prompts: [], loading: true, loaded: 0, total: null, error: null };
			this.scopes.set(scope, state);
			const onPrompts = (batch) => this.add(scope, batch);
			const onProgress = (loaded, total) => {
				state.loaded = loaded;
				state.total = total;
				if (this.scope === scope) this.requestRender();
			};
			Promise.resolve()
				.then(() => this.load(scope, { onPrompts, onProgress }))
				.then(
					() => {
						state.loading = false;
						if (this.scope === scope) this.requestRender();
					},
					(failure) => {
						state.loading = false;
						state.error = String(failure?.message ?? failure).split("\n")[0];
						if (this.scope === scope) this.requestRender();
					},
				);
		}
		this.refilter();
	}

	/** A batch of `scope` arrived: newer ones came before, so it goes at the end. */
	add(scope, batch) {
		const state = this.state(scope);
		if (!state) return;
		for (const p of batch) state.prompts.push(p);
		if (scope !== this.scope) return;
		for (const p of batch) if (this.matcher.test(p, this.lowerOf, this.collapsedOf)) this.filtered.push(p);
		this.requestRender();
	}

	/** The list for the query, narrowed from the last one when typing on allows it. */
	refilter() {
		const query = this.input.getValue();
		const from = narrows(this.query, query) && this.filteredScope === this.scope ? this.filtered : this.state().prompts;
		this.query = query;
		this.matcher = promptQuery(query);
		this.filtered = this.matcher.all ? from.slice() : from.filter((p) => this.matcher.test(p, this.lowerOf, this.collapsedOf));
		this.filteredScope = this.scope;
		this.selected = 0;
	}

	selectedPrompt() {
		return this.filtered[this.selected];
	}

	fg(colour, text) {
		return this.theme ? this.theme.fg(colour, text) : text;
	}

	keyText(id, fallback) {
		return this.keybindings?.getKeys?.(id)?.[0] ?? fallback;
	}

	header(width) {
		const state = this.state();
		const title = this.theme ? this.theme.bold(SCOPE_TITLES[this.scope]) : SCOPE_TITLES[this.scope];
		let scopeText;
		if (state.loading) {
			const progress = state.total === null ? "..." : `${state.loaded}/${state.total}`;
			scopeText = `${this.fg("muted", "○ Current Folder | ")}${this.fg("accent", `Loading ${progress}`)}`;
		} else if (this.scope === "project") scopeText = `${this.fg("accent", "◉ Current Folder")}${this.fg("muted", " | ○ All")}`;
		else scopeText = `${this.fg("muted", "○ Current Folder | ")}${this.fg("accent", "◉ All")}`;
		const right = truncateToWidth(scopeText, width, "");
		const left = truncateToWidth(title, Math.max(0, width - visibleWidth(right) - 1), "");
		const gap = " ".repeat(Math.max(0, width - visibleWidth(left) - visibleWidth(right)));
		const sep = this.fg("muted", " · ");
		const hint = [
			`${this.keyText("tui.input.tab", "tab")} ${this.fg("muted", "scope")}`,
			`${this.keyText("tui.select.confirm", "enter")} ${this.fg("muted", "to editor")}`,
			`${this.keyText("tui.select.cancel", "escape")} ${this.fg("muted", "close")}`,
			this.fg("muted", 're:<pattern> regex · "phrase" exact'),
		].join(sep);
		return [`${left}${gap}${right}`, truncateToWidth(hint, width, "…")];
	}

	emptyMessage() {
		const state = this.state();
		if (this.matcher.error) return `  Invalid query: ${this.matcher.error}`;
		if (state.error) return `  Could not read the sessions: ${state.error}`;
		if (state.loading) return state.prompts.length === 0 ? "  Reading sessions…" : "  No prompts match yet, still reading…";
		if (state.prompts.length > 0) return "  No prompts match";
		return this.scope === "project" ? "  No prompts in this project's sessions. Press Tab for every project." : "  No prompts found";
	}

	render(width) {
		const lines = [...this.header(width), "", ...this.input.render(width), ""];
		if (this.filtered.length === 0) {
			lines.push(this.fg("muted", truncateToWidth(this.emptyMessage(), width, "…")));
			return lines;
		}
		const count = this.filtered.length;
		const start = Math.max(0, Math.min(this.selected - Math.floor(this.maxVisible / 2), count - this.maxVisible));
		const end = Math.min(start + this.maxVisible, count);
		const now = this.now();
		for (let i = start; i < end; i++) {
			const prompt = this.filtered[i];
			const isSelected = i === this.selected;
			const when = age(prompt.timestamp, now);
			const right = this.scope === "all" && prompt.cwd ? `${shortPath(prompt.cwd)} ${when}` : when;
			const cursor = isSelected ? this.fg("accent", "› ") : "  ";
			const room = Math.max(10, width - 2 - visibleWidth(right) - 2);
			let text = truncateToWidth(oneLine(prompt.text), room, "…");
			if (isSelected && this.theme) text = this.theme.bold(text);
			const left = cursor + text;
			const gap = " ".repeat(Math.max(1, width - visibleWidth(left) - visibleWidth(right)));
			let line = left + gap + this.fg("dim", right);
			if (isSelected && this.theme?.bg) line = this.theme.bg("selectedBg", line);
			lines.push(truncateToWidth(line, width));
		}
		const state = this.state();
		if (start > 0 || end < count || state.loading) {
			const more = state.loading ? " reading…" : "";
			lines.push(this.fg("muted", truncateToWidth(`  (${this.selected + 1}/${count})${more}`, width, "")));
		}
		return lines;
	}

	handleInput(data) {
		const kb = this.keybindings;
		const count = this.filtered.length;
		if (kb.matches(data, "tui.select.cancel")) {
			this.onDone?.(undefined);
			return;
		}
		if (kb.matches(data, "tui.select.confirm")) {
			const prompt = this.selectedPrompt();
			if (prompt) this.onDone?.(prompt.text);
			return;
		}
		if (kb.matches(data, "tui.input.tab")) {
			this.show(this.scope === "project" ? "all" : "project");
		} else if (kb.matches(data, "tui.select.up")) {
			if (count > 0) this.selected = this.selected === 0 ? count - 1 : this.selected - 1;
		} else if (kb.matches(data, "tui.select.down")) {
			if (count > 0) this.selected = this.selected === count - 1 ? 0 : this.selected + 1;
		} else if (kb.matches(data, "tui.select.pageUp")) {
			this.selected = Math.max(0, this.selected - this.maxVisible);
		} else if (kb.matches(data, "tui.select.pageDown")) {
			this.selected = Math.max(0, Math.min(count - 1, this.selected + this.maxVisible));
		} else {
			this.input.handleInput(data);
			if (this.input.getValue() !== this.query) this.refilter();
		}
		this.requestRender();
	}

	invalidate() {
		this.input.invalidate();
	}
}

/**
 * Opens the picker in `ctx.ui.custom` over `pkg.listPrompts` (this project's folder as pi
 * uses it: `ctx.sessionManager.getSessionDir()`), and puts the chosen prompt in pi's
 * editor (replacing what it held). Resolves to the text put there, or undefined.
 */
export async function runPromptPicker(pkg, ctx) {
	const readings = [];
	const sessionDir = ctx.sessionManager.getSessionDir?.() || undefined;
	let screen;
	const chosen = await ctx.ui.custom((tui, theme, keybindings, done) => {
		screen = tui;
		const rows = Math.max(5, Math.min(20, (tui.terminal?.rows ?? 30) - 14));
		return new PromptPicker({
			theme,
			keybindings,
			maxVisible: rows,
			requestRender: () => tui.requestRender(),
			load: (scope, { onPrompts, onProgress }) => {
				const reading = new AbortController();
				readings.push(reading);
				return pkg.listPrompts({ cwd: ctx.cwd, sessionDir, scope, onPrompts, onProgress, signal: reading.signal }).catch((failure) => {
					// Closing the picker stops the reading: that is no failure to show.
					if (!reading.signal.aborted) throw failure;
				});
			},
			onDone: (text) => {
				for (const reading of readings) reading.abort();
				done(text);
			},
		});
	});
	if (typeof chosen !== "string") return undefined;
	ctx.ui.setEditorText(chosen);
	// pi draws after a key is handled; this comes later (the picker's promise), so ask for a frame.
	screen?.requestRender();
	return chosen;
}
