// The screen of /usage: usage across sessions (the daily cost of the last 30 days as a bar
// chart; today, this week, this month, all time; by model and by project), drawn with pi's
// TUI components from the `{ rows, totals }` reports of this package's usageReport (issue
// 12), gathered by usage.mjs; this module computes nothing itself beyond the layout.
// extension/index.mjs registers it as /usage.
//
// A report is `{ rows, totals }`; each row `{ key, input, output, cacheRead, cacheWrite,
// totalTokens, cost, sessions }` and `totals` the same fields without `key`.
// `UsageView` takes `{ periods: [{ label, totals }], daily: { today, rows, totals },
// byModel: report, byProject: report }` (daily's rows one per day, oldest first).
import { matchesKey, truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";

/** 1234 -> "1,234"; 1234567 -> "1.23M" (token counts). */
export function formatTokens(n) {
	if (!Number.isFinite(n)) return "-";
	const abs = Math.abs(n);
	if (abs >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
	if (abs >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
	return Math.round(n).toLocaleString("en-US");
}

/** Dollars with cents; fractions of a cent as "<$0.01". */
export function formatCost(cost) {
	if (!Number.isFinite(cost)) return "-";
	if (cost > 0 && cost < 0.01) return "<$0.01";
	return `$${cost.toFixed(2)}`;
}

const COLUMNS = [
	{ title: "input", value: (r) => formatTokens(r.input) },
	{ title: "output", value: (r) => formatTokens(r.output) },
	{ title: "cache read", value: (r) => formatTokens(r.cacheRead) },
	{ title: "cache write", value: (r) => formatTokens(r.cacheWrite) },
	{ title: "total", value: (r) => formatTokens(r.totalTokens) },
	{ title: "cost", value: (r) => formatCost(r.cost) },
	{ title: "sessions", value: (r) => formatTokens(r.sessions) },
];

const padStart = (text, width) => " ".repeat(Math.max(0, width - visibleWidth(text))) + text;
const padEnd = (text, width) => text + " ".repeat(Math.max(0, width - visibleWidth(text)));

/**
 * A table: a label column (left, truncated to what the width leaves) and the number
 * columns (right-aligned); columns that do not fit are dropped from the right, so the
 * label and the first numbers always show. `rows`: [{ label, ...fields }]; `total`: one
 * more row under a rule, or null. `style(kind, text)` colours ("header", "label", "total",
 * "dim"). Returns lines no wider than `width`.
 */
export function tableLines({ labelTitle, rows, total, width, style = (_kind, text) => text }) {
	const all = total ? [...rows, total] : rows;
	const widths = COLUMNS.map((c) => Math.max(visibleWidth(c.title), ...all.map((r) => visibleWidth(c.value(r)))));
	const labelWanted = Math.max(visibleWidth(labelTitle), ...all.map((r) => visibleWidth(r.label)));
	const gap = 2;
	let shown = COLUMNS.length;
	const numbersWidth = (n) => widths.slice(0, n).reduce((a, w) => a + w + gap, 0);
	while (shown > 1 && Math.min(labelWanted, 12) + numbersWidth(shown) > width) shown--;
	const labelWidth = Math.max(1, Math.min(labelWanted, width - numbersWidth(shown)));
	const line = (label, values, kind) => {
		const cells = values.slice(0, shown).map((v, i) => " ".repeat(gap) + padStart(v, widths[i]));
		return truncateToWidth(style(kind, padEnd(truncateToWidth(label, labelWidth, "…"), labelWidth)) + style(kind === "label" ? "value" : kind, cells.join("")), width, "");
	};
	const out = [line(labelTitle, COLUMNS.map((c) => c.title), "header")];
	for (const r of rows) out.push(line(r.label, COLUMNS.map((c) => c.value(r)), "label"));
	if (total) {
		out.push(style("dim", "─".repeat(Math.min(width, labelWidth + numbersWidth(shown)))));
		out.push(line(total.label, COLUMNS.map((c) => c.value(total)), "total"));
	}
	return out;
}

// Vertical bars in eighths of a line.
const BLOCKS = ["", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
const CHART_HEIGHT = 6;
const FEWEST_DAYS = 7;

/**
 * The daily chart: one bar per day (`daily.rows`, oldest first) scaled to the costliest
 * day shown, the y-axis labelled with that cost and $0, today's bar (`daily.today`) marked
 * under it. Narrower screens give each day fewer columns (3, 2, then 1), then show only
 * the last days; fewer than a week: no chart ([]). A cost that is not a finite number
 * has no bar. `style(kind, text)`: "header", "bar", "today", "axis". Lines no wider than
 * `width`.
 */
export function chartLines({ daily, width, height = CHART_HEIGHT, style = (_kind, text) => text }) {
	const finite = (r) => (Number.isFinite(r.cost) ? r.cost : 0);
	const widest = Math.max(6, visibleWidth(formatCost(daily.rows.reduce((m, r) => Math.max(m, finite(r)), 0))));
	const room = width - widest - 2;
	const perDay = Math.min(3, Math.floor(room / Math.max(1, daily.rows.length)));
	const rows = perDay >= 1 ? daily.rows : room > 0 ? daily.rows.slice(-room) : [];
	if (rows.length === 0 || rows.length < Math.min(FEWEST_DAYS, daily.rows.length)) return [];
	// A gap of one column between bars when a day has two or three.
	const gap = perDay >= 2 ? 1 : 0;
	const barWidth = Math.max(1, perDay - gap);
	const most = rows.reduce((m, r) => Math.max(m, finite(r)), 0);
	const levels = rows.map((r) => {
		if (!(most > 0) || !Number.isFinite(r.cost) || r.cost <= 0) return 0;
		return Math.max(1, Math.round((r.cost / most) * height * 8));
	});
	const kindOf = (r) => (r.key === daily.today ? "today" : "bar");
	const axis = (text) => style("axis", text);
	const lines = [truncateToWidth(style("header", `Daily cost, last ${rows.length} days`), width, "")];
	for (let line = 0; line < height; line++) {
		const floor = (height - 1 - line) * 8;
		const label = line === 0 ? padStart(formatCost(most), widest) : " ".repeat(widest);
		let text = `${style("header", label)} ${axis(line === 0 ? "┤" : "│")}`;
		rows.forEach((r, i) => {
			const fill = Math.max(0, Math.min(8, levels[i] - floor));
			const cell = fill === 0 ? " ".repeat(barWidth) : BLOCKS[fill].repeat(barWidth);
			text += " ".repeat(gap) + (fill === 0 ? cell : style(kindOf(r), cell));
		});
		lines.push(truncateToWidth(text, width, ""));
	}
	lines.push(truncateToWidth(`${style("header", padStart("$0", widest))} ${axis(`└${"─".repeat(rows.length * (gap + barWidth))}`)}`, width, ""));
	// Under the bars: the first day's date at its bar, and a marker under today's.
	const column = (i) => i * (gap + barWidth) + gap;
	const marks = [{ at: column(0), text: rows[0].key.slice(5), kind: "header" }];
	const todayAt = rows.findIndex((r) => r.key === daily.today);
	if (todayAt !== -1) {
		const label = `today ${formatCost(rows[todayAt].cost)} `;
		const at = column(todayAt);
		const mark = at >= label.length ? { at: at - label.length, text: `${label}▲`, kind: "today" } : { at, text: `▲ ${label.trimEnd()}`, kind: "today" };
		// The date gives way to the marker when they would meet.
		if (mark.at <= marks[0].at + marks[0].text.length) marks.length = 0;
		marks.push(mark);
	}
	let under = " ".repeat(widest + 2);
	let used = 0;
	for (const m of marks) {
		under += " ".repeat(Math.max(0, m.at - used)) + style(m.kind, m.text);
		used = Math.max(used, m.at) + m.text.length;
	}
	lines.push(truncateToWidth(under, width, ""));
	return lines;
}

const VIEWS = [
	{ id: "model", title: "By model", labelTitle: "model", report: (data) => data.byModel },
	{ id: "project", title: "By project", labelTitle: "project", report: (data) => data.byProject },
];

/**
 * /usage's component for `ctx.ui.custom((tui, theme, keybindings, done) => ...)`: the
 * periods' totals on top, then one breakdown (Tab switches by model / by project; ↑/↓
 * scroll it); Escape or q closes (`onClose`). At most `maxRows` breakdown rows at a time.
 * `data` may be null at first: the view opens at once and says how far the reading is
 * (`setProgress`) until `setData` (or `setError`) comes.
 */
export class UsageView {
	constructor(data, { theme, onClose, requestRender = () => {}, maxRows = 15 }) {
		this.data = data;
		this.theme = theme;
		this.onClose = onClose;
		this.requestRender = requestRender;
		this.maxRows = maxRows;
		this.view = 0;
		this.offset = 0;
	}

	style(kind, text) {
		const t = this.theme;
		if (!t) return text;
		if (kind === "header") return t.fg("muted", text);
		if (kind === "total") return t.bold(text);
		if (kind === "dim") return t.fg("dim", text);
		if (kind === "title") return t.fg("accent", t.bold(text));
		if (kind === "bar") return t.fg("accent", text);
		if (kind === "today") return t.fg("success", text);
		if (kind === "axis") return t.fg("dim", text);
		return text;
	}

	setData(data) {
		this.data = data;
		this.requestRender();
	}

	setProgress(loaded, total) {
		this.progress = { loaded, total };
		// A call per file: the screen follows ten times a second.
		const now = performance.now();
		if (loaded < total && now - (this.progressShownAt ?? -Infinity) < 100) return;
		this.progressShownAt = now;
		this.requestRender();
	}

	setError(message) {
		this.error = message;
		this.requestRender();
	}

	render(width) {
		const style = (kind, text) => this.style(kind, text);
		if (!this.data) {
			const progress = this.progress?.total ? ` ${formatTokens(this.progress.loaded)} of ${formatTokens(this.progress.total)}` : "";
			return [
				truncateToWidth(style("title", "Usage across sessions"), width, ""),
				"",
				truncateToWidth(this.error ? `/usage: ${this.error}` : style("dim", `Reading sessions…${progress}`), width, ""),
				"",
				truncateToWidth(style("dim", "esc close"), width, ""),
			];
		}
		const view = VIEWS[this.view];
		const report = view.report(this.data);
		const rows = report.rows.slice(this.offset, this.offset + this.maxRows).map((r) => ({ ...r, label: r.key }));
		const more = report.rows.length > this.maxRows ? ` (${this.offset + 1}-${this.offset + rows.length} of ${report.rows.length})` : "";
		const tabs = VIEWS.map((v, i) => (i === this.view ? style("title", v.title) : style("header", v.title))).join(style("header", " | "));
		const chart = this.data.daily ? chartLines({ daily: this.data.daily, width, style }) : [];
		return [
			truncateToWidth(style("title", "Usage across sessions"), width, ""),
			"",
			...(chart.length > 0 ? [...chart, ""] : []),
			...tableLines({ labelTitle: "period", rows: this.data.periods.map((p) => ({ ...p.totals, label: p.label })), total: null, width, style }),
			"",
			truncateToWidth(`${tabs}${style("header", more)}`, width, ""),
			...tableLines({ labelTitle: view.labelTitle, rows, total: { ...report.totals, label: "total" }, width, style }),
			"",
			truncateToWidth(style("dim", "tab by model / by project · ↑↓ scroll · esc close"), width, ""),
		];
	}

	handleInput(data) {
		if (matchesKey(data, "escape") || data === "q") {
			this.onClose?.();
			return;
		}
		if (!this.data) return;
		const rows = VIEWS[this.view].report(this.data).rows.length;
		if (matchesKey(data, "tab")) {
			this.view = (this.view + 1) % VIEWS.length;
			this.offset = 0;
		} else if (matchesKey(data, "down")) {
			this.offset = Math.min(this.offset + 1, Math.max(0, rows - this.maxRows));
		} else if (matchesKey(data, "up")) {
			this.offset = Math.max(0, this.offset - 1);
		} else {
			return;
		}
		this.requestRender();
	}

	invalidate() {}
}
