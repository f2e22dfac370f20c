// extension/usage-view.mjs, the screen of /usage (registered in extension/index.mjs):
// rendered with pi's own pi-tui from the devDependency, on made-up reports.
//
//   node __test__/run.mjs __test__/usage-view.test.mjs
import assert from "node:assert/strict";
import { test } from "node:test";
import { visibleWidth } from "@earendil-works/pi-tui";
import { formatCost, formatTokens, tableLines, UsageView } from "../extension/usage-view.mjs";

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
const data = {
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
