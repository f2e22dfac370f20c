// What usageReport() should answer, computed in JavaScript from the documented rules
// (docs/library.md, usageReport): the record an entry adds, its local date in the report's zone
// (Intl), the groups, the order, and which sessions count. Shared by the tests of
// usageReport over random files (stats.test.mjs) and over forked stores
// (usage-forks.test.mjs).
import assert from "node:assert/strict";

export const ZONES = ["UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Chatham"];
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

export function localDate(ms, zone) {
	const parts = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).formatToParts(new Date(ms));
	const get = (t) => parts.find((p) => p.type === t).value;
	return `${get("year")}-${get("month")}-${get("day")}`;
}

function isoWeek(date) {
	const [y, m, d] = date.split("-").map(Number);
	const t = new Date(Date.UTC(y, m - 1, d));
	t.setUTCDate(t.getUTCDate() + 4 - (t.getUTCDay() || 7)); // the Thursday of this ISO week
	const year = t.getUTCFullYear();
	const week = Math.ceil(((t - Date.UTC(year, 0, 1)) / 86400000 + 1) / 7);
	return `${year}-W${String(week).padStart(2, "0")}`;
}

/** The report's record of an entry by the documented rules, or null. */
export function record(entry) {
	let key;
	let usage;
	const m = entry.message;
	if (entry.type === "message" && m !== null && typeof m === "object" && !Array.isArray(m)) {
		if (m.role === "assistant") {
			key = `${m.provider}/${m.responseModel ?? m.model}`;
			usage = m.usage;
		} else if (m.role === "toolResult") {
			key = "Tools/summaries";
			usage = m.usage;
		}
	} else if (entry.type === "usage") {
		key = `${entry.provider}/${entry.model}`;
		usage = entry.usage;
	} else if (entry.type === "branch_summary" || entry.type === "compaction") {
		key = "Tools/summaries";
		usage = entry.usage;
	}
	if (!key || !usage) return null;
	if (typeof entry.timestamp !== "string" || !RFC3339.test(entry.timestamp)) return null;
	const time = Date.parse(entry.timestamp);
	if (Number.isNaN(time)) return null;
	const num = (v) => (typeof v === "number" ? v : 0);
	const cost = usage.cost !== null && typeof usage.cost === "object" && !Array.isArray(usage.cost) ? num(usage.cost.total) : 0;
	return { key, time, input: num(usage.input), output: num(usage.output), cacheRead: num(usage.cacheRead), cacheWrite: num(usage.cacheWrite), cost };
}

/**
 * The report over `sessions` ([{ path, cwd }]): `entriesOf(path)` gives a session's
 * entries, and `counts(path, entry, record)` (default: always) says whether a record
 * counts in that session.
 */
export function expectedReport(sessions, { groupBy, since, until, timezone }, { entriesOf, counts = () => true }) {
	const rows = new Map();
	const totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0, sessions: 0 };
	for (const info of [...sessions].sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)))) {
		const seen = new Set();
		let counted = false;
		for (const entry of entriesOf(info.path)) {
			const r = record(entry);
			if (!r || !counts(info.path, entry, r)) continue;
			const date = localDate(r.time, timezone);
			if ((since && date < since) || (until && date > until)) continue;
			const key = { day: date, week: isoWeek(date), month: date.slice(0, 7), session: info.path, model: r.key, project: info.cwd }[groupBy];
			let row = rows.get(key);
			if (!row) rows.set(key, (row = { key, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, sessions: 0 }));
			for (const f of ["input", "output", "cacheRead", "cacheWrite", "cost"]) {
				row[f] += r[f];
				totals[f] += r[f];
			}
			if (!seen.has(key)) row.sessions++;
			seen.add(key);
			counted = true;
		}
		if (counted) totals.sessions++;
	}
	const out = [...rows.values()]
		.map((r) => ({ ...r, totalTokens: r.input + r.output + r.cacheRead + r.cacheWrite }))
		.filter((r) => r.cost !== 0 || r.totalTokens !== 0);
	if (["day", "week", "month"].includes(groupBy)) out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
	else out.sort((a, b) => b.cost - a.cost || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
	totals.totalTokens = totals.input + totals.output + totals.cacheRead + totals.cacheWrite;
	return { rows: out, totals };
}

function close(actual, expected, what) {
	const ok = actual === expected || Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
	assert.ok(ok, `${what}: ${actual} !== ${expected}`);
}

export function compareReports(actual, expected, label) {
	assert.deepStrictEqual(
		actual.rows.map((r) => [r.key, r.sessions]),
		expected.rows.map((r) => [r.key, r.sessions]),
		`${label}: row keys`,
	);
	const fields = ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"];
	actual.rows.forEach((row, i) => {
		for (const f of fields) close(row[f], expected.rows[i][f], `${label}: ${row.key}.${f}`);
	});
	for (const f of fields) close(actual.totals[f], expected.totals[f], `${label}: totals.${f}`);
	assert.equal(actual.totals.sessions, expected.totals.sessions, `${label}: totals.sessions`);
}
