// extension/usage-view.mjs, the screen of /usage (registered in extension/index.mjs):
// rendered with pi's own pi-tui from the devDependency, on made-up reports.
//
//   node __test__/run.mjs __test__/usage-view.test.mjs
import assert from "node:assert/strict";
import { test } from "node:test";
import { visibleWidth } from "@earendil-works/pi-tui";
import { lastDays } from "../extension/usage.mjs";
import { chartLines, formatCost, formatTokens, tableLines, UsageView } from "../extension/usage-view.mjs";

const row = (key, n, cost, sessions = 1) => ({
	key,
	input: n,
	output: Math.round(n / 10),
	cacheRead: n * 3,
	cacheWrite: Math.round(n / 2),
	totalTokens: n + Math.round(n / 10) + n * 3 + Math.round(n / 2),
	cost,
	sessions,
});
const totalsOf = (rows) => {
	const t = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0, sessions: 0 };
	for (const r of rows) for (const k of Object.keys(t)) t[k] += r[k];
	return t;
};
const report = (rows) => ({ rows, totals: totalsOf(rows) });
const models = [row("anthropic/claude-sonnet-4-5", 2_345_678, 12.5, 40), row("openai/gpt-5", 98_765, 0.75, 3), row("Tools/summaries", 1234, 0.004, 2)];
const projects = Array.from({ length: 30 }, (_, i) => row(`/home/dev/project-${String(i).padStart(2, "0")}-with-a-long-name`, 1000 * (30 - i), 30 - i));
// The last 30 days to 2026-03-10: the costliest day 10 days in, one half its cost, today a
// quarter, a day that cost more than a double holds, one a cent, and the rest nothing.
const TODAY = "2026-03-10";
const DAY_COSTS = { 9: 4, 19: 2, 29: 1, 5: Infinity, 2: 0.01 };
const daily = {
	today: TODAY,
	rows: lastDays(TODAY, 30).map((key, i) => row(key, i in DAY_COSTS ? 1000 : 0, DAY_COSTS[i] ?? 0, i in DAY_COSTS ? 1 : 0)),
	totals: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: Infinity, sessions: 5 },
};
const data = {
	daily,
	periods: [
		{ label: "Today", totals: totalsOf(models.slice(2)) },
		{ label: "This week", totals: totalsOf(models.slice(1)) },
		{ label: "This month", totals: totalsOf(models) },
		{ label: "All time", totals: totalsOf(models) },
	],
	byModel: report(models),
	byProject: report(projects),
};

test("numbers as /usage prints them", () => {
	assert.equal(formatTokens(999), "999");
	assert.equal(formatTokens(12_345), "12,345");
	assert.equal(formatTokens(2_345_678), "2.35M");
	assert.equal(formatTokens(3.2e9), "3.20B");
	assert.equal(formatCost(12.5), "$12.50");
	assert.equal(formatCost(0.004), "<$0.01");
	assert.equal(formatCost(0), "$0.00");
});

test("a table keeps to the width, dropping number columns from the right, never the label", () => {
	for (const width of [200, 100, 60, 30]) {
		const lines = tableLines({ labelTitle: "model", rows: models.map((r) => ({ ...r, label: r.key })), total: { ...data.byModel.totals, label: "total" }, width });
		for (const l of lines) assert.ok(visibleWidth(l) <= width, `width ${width}: ${JSON.stringify(l)}`);
		assert.match(lines[0], /^model\s+input/);
		assert.ok(lines[1].startsWith("anthropic/") || lines[1].startsWith("anthr"), lines[1]);
		assert.match(lines.at(-1), /^total\s+2\.45M/, "the total row sums the rows");
	}
	const wide = tableLines({ labelTitle: "model", rows: models.map((r) => ({ ...r, label: r.key })), total: null, width: 200 });
	assert.match(wide[0], /input\s+output\s+cache read\s+cache write\s+total\s+cost\s+sessions$/);
	assert.match(wide[1], /2\.35M\s+234,568\s+7\.04M\s+1\.17M\s+10\.79M\s+\$12\.50\s+40$/);
	const narrow = tableLines({ labelTitle: "model", rows: models.map((r) => ({ ...r, label: r.key })), total: null, width: 40 });
	assert.doesNotMatch(narrow[0], /sessions/);
});

test("the view: periods, by model, Tab to by project, scrolling, Escape closes", () => {
	let closed = 0;
	let renders = 0;
	const view = new UsageView(data, { onClose: () => closed++, requestRender: () => renders++, maxRows: 10 });
	let screen = view.render(160).join("\n");
	for (const label of ["Today", "This week", "This month", "All time", "By model", "anthropic/claude-sonnet-4-5", "$13.25"]) {
		assert.ok(screen.includes(label), `${label} on screen:\n${screen}`);
	}
	view.handleInput("\t");
	screen = view.render(160).join("\n");
	assert.ok(screen.includes("project-00-with-a-long-name") && screen.includes("(1-10 of 30)"), screen);
	assert.ok(!screen.includes("project-10-"), "10 rows at a time");
	view.handleInput("\x1b[B");
	screen = view.render(160).join("\n");
	assert.ok(screen.includes("(2-11 of 30)") && screen.includes("project-10-"), screen);
	assert.equal(renders, 2);
	for (const l of view.render(50)) assert.ok(visibleWidth(l) <= 50, l);
	view.handleInput("\x1b");
	assert.equal(closed, 1);
});

test("the view opens before its data: reading progress, then the data, or the error; Escape closes meanwhile", () => {
	let closed = 0;
	let renders = 0;
	const view = new UsageView(null, { onClose: () => closed++, requestRender: () => renders++ });
	assert.match(view.render(80).join("\n"), /Reading sessions…/);
	view.setProgress(1, 10000);
	view.setProgress(2, 10000); // within 100 ms of the last: not drawn again
	assert.equal(renders, 1);
	assert.match(view.render(80).join("\n"), /Reading sessions… 2 of 10,000/);
	view.setProgress(10000, 10000); // the last: drawn
	assert.equal(renders, 2);
	view.handleInput("\t"); // nothing to switch yet
	assert.equal(renders, 2);
	view.setData(data);
	assert.equal(renders, 3);
	assert.ok(view.render(160).join("\n").includes("All time"));
	const failing = new UsageView(null, { onClose: () => closed++ });
	failing.setError("cannot read /nowhere");
	assert.match(failing.render(80).join("\n"), /\/usage: cannot read \/nowhere/);
	failing.handleInput("\x1b");
	assert.equal(closed, 1);
});

// Kinds of the chart's parts as made-up colour codes, to tell them apart on the line.
const CODES = { header: 90, bar: 36, today: 32, axis: 2 };
const KINDS = Object.fromEntries(Object.entries(CODES).map(([k, v]) => [String(v), k]));
const coded = (kind, text) => `\x1b[${CODES[kind]}m${text}\x1b[0m`;
const plain = (line) => line.replace(/\x1b\[\d+m/g, "");

/** The characters of a styled line, each with the kind it was drawn as (null: unstyled). */
function cells(line) {
	const out = [];
	let kind = null;
	for (const part of line.split(/(\x1b\[\d+m)/)) {
		const code = part.match(/^\x1b\[(\d+)m$/);
		if (code) kind = code[1] === "0" ? null : KINDS[code[1]];
		else for (const ch of part) out.push({ ch, kind });
	}
	return out;
}

const EIGHTHS = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
/** The height of each bar in eighths of a line, read down the chart's columns at `starts`. */
function heights(barRows, starts) {
	return starts.map((at) => barRows.reduce((sum, cellsOfRow) => sum + (cellsOfRow[at].ch === " " ? 0 : EIGHTHS.indexOf(cellsOfRow[at].ch) + 1), 0));
}

test("the daily chart: 30 days, bars in proportion to cost, the maximum labelled, today's bar marked", () => {
	const lines = chartLines({ daily, width: 160, style: coded });
	assert.equal(lines.length, 1 + 6 + 2, lines.map(plain).join("\n"));
	const text = lines.map(plain);
	assert.equal(text[0], "Daily cost, last 30 days");
	// The y-axis: the costliest day's cost at the top, $0 at the axis.
	assert.match(text[1], /^ \$4\.00 ┤/);
	assert.match(text[7], /^    \$0 └─+$/);
	const left = "  $0.00 ".length; // label and axis: 8 columns
	// 30 days of three columns (a gap and a bar of two): the axis is 90 long.
	assert.equal(text[7].length - left, 90);
	const starts = Array.from({ length: 30 }, (_, i) => left + 3 * i + 1);
	const rows = lines.slice(1, 7).map(cells);
	const h = heights(rows, starts);
	const expected = Array(30).fill(0);
	Object.assign(expected, { 9: 48, 19: 24, 29: 12, 2: 1 });
	assert.deepEqual(h, expected, "the costliest bar full (6 lines of 8), half the cost half, a cent still an eighth, Infinity none");
	for (const r of rows) {
		for (const [i, at] of starts.entries()) {
			assert.equal(r[at].ch, r[at + 1].ch, "a bar is two columns wide");
			assert.equal(r[at - 1].ch, " ", "with a gap before it");
			if (r[at].ch !== " ") assert.equal(r[at].kind, i === 29 ? "today" : "bar", `day ${i}`);
		}
	}
	// Under the chart: the first day's date under its bar, the marker under today's.
	const under = cells(lines[8]);
	assert.equal(text[8].indexOf("02-09"), starts[0]);
	assert.equal(text[8].indexOf("▲"), starts[29]);
	assert.equal(under[starts[29]].kind, "today");
	assert.match(text[8], /today \$1\.00 ▲$/);
});

test("the daily chart fits the width: fewer columns a day, then fewer days, then none", () => {
	for (const [width, days, perDay] of [[200, 30, 3], [98, 30, 3], [97, 30, 2], [68, 30, 2], [67, 30, 1], [38, 30, 1], [37, 29, 1], [30, 22, 1], [15, 7, 1], [14, 0], [0, 0]]) {
		const lines = chartLines({ daily, width, style: coded });
		for (const l of lines) assert.ok(visibleWidth(l) <= width, `width ${width}: ${JSON.stringify(plain(l))}`);
		if (days === 0) {
			assert.deepEqual(lines, [], `width ${width}: no chart`);
			continue;
		}
		const text = lines.map(plain);
		assert.equal(text[0], `Daily cost, last ${days} days`.slice(0, width), `width ${width}`);
		assert.equal(text[7].length - 8, days * perDay, `width ${width}: ${days} days of ${perDay}`);
		// Today is the last bar, and marked under it.
		const todayAt = 8 + (days - 1) * perDay + (perDay > 1 ? 1 : 0);
		assert.equal(text[8].indexOf("▲"), todayAt, `width ${width}: ${text[8]}`);
		const top = cells(lines[1]);
		// Scaled to the costliest day shown: at 7 days, today's $1 is the maximum.
		assert.match(text[1], days < 11 ? /^ \$1\.00 ┤/ : /^ \$4\.00 ┤/);
		assert.equal(top[todayAt].kind, days < 11 ? "today" : null, `width ${width}: today's bar reaches the top only when it is the costliest shown`);
	}
});

test("the view draws the chart above the tables, in the theme's colours", () => {
	const colours = [];
	const theme = { fg: (colour, text) => (colours.push(colour), text), bold: (text) => text };
	const lines = new UsageView(data, { theme }).render(160);
	const chart = lines.indexOf("Daily cost, last 30 days");
	const periods = lines.findIndex((l) => /^period\s+input/.test(l));
	assert.ok(chart > 0 && chart < periods, lines.join("\n"));
	assert.match(lines[chart + 7], /└─+$/);
	assert.match(lines[chart + 8], /today \$1\.00 ▲$/);
	for (const colour of ["accent", "success", "dim", "muted"]) assert.ok(colours.includes(colour), colour);
	// Without the daily figures (an older caller), the tables alone.
	const { daily: _, ...rest } = data;
	assert.ok(!new UsageView(rest, {}).render(160).some((l) => l.includes("Daily cost")));
});
