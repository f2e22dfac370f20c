// The data of /usage: the periods' totals (today, this week, this month, all time), the
// cost of each of the last 30 days, and all time by model and by project, each one
// usageReport of this package. Dates are local dates in `timezone` (the local zone by
// default, as usageReport's own default), weeks ISO weeks from Monday, as usageReport's
// "week" groups them.

/** `YYYY-MM-DD` and the weekday (0 Monday ... 6 Sunday) of `date` in `timeZone`. */
function localDate(date, timeZone) {
	const parts = Object.fromEntries(
		new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", weekday: "short" })
			.formatToParts(date)
			.map((p) => [p.type, p.value]),
	);
	const weekday = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].indexOf(parts.weekday);
	return { ymd: `${parts.year}-${parts.month}-${parts.day}`, year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), weekday };
}

/** The first local dates of today, this week and this month at `now` in `timeZone`. */
export function periodStarts(now, timeZone) {
	const d = localDate(now, timeZone);
	// Calendar arithmetic on the local date itself, so no clock change gets in the way.
	const monday = new Date(Date.UTC(d.year, d.month - 1, d.day - d.weekday)).toISOString().slice(0, 10);
	return { today: d.ymd, week: monday, month: `${d.ymd.slice(0, 7)}-01` };
}

/** The `count` local dates (`YYYY-MM-DD`) that end with `today`, oldest first. */
export function lastDays(today, count) {
	const [year, month, day] = today.split("-").map(Number);
	// Calendar arithmetic, as periodStarts: every date once, whatever the clock changes.
	return Array.from({ length: count }, (_, i) => new Date(Date.UTC(year, month - 1, day - (count - 1) + i)).toISOString().slice(0, 10));
}

/** Days of /usage's chart, today included. */
export const CHART_DAYS = 30;

const NO_USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0, sessions: 0 };

/**
 * `{ periods: [{ label, totals }], daily, byModel, byProject }` for UsageView, from
 * `usageReport` (this package's). One report after the other: they share the scan.
 * `onProgress(loaded, total)` is usageReport's, for each report in turn. `daily` is
 * `{ today, rows, totals }`: one row per day of the last CHART_DAYS local days, oldest
 * first, today last (a day without usage a row of zeros), and their totals.
 */
export async function usageData(usageReport, { now = new Date(), timezone, sessionDir, signal, onProgress } = {}) {
	const timeZone = timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
	const starts = periodStarts(now, timeZone);
	const base = { sessionDir, timezone: timeZone, signal, onProgress };
	const periods = [];
	for (const [label, since] of [
		["today", starts.today],
		["this week", starts.week],
		["this month", starts.month],
	]) {
		// Up to today: an entry dated later (another machine's clock) is in "all time" only.
		const report = await usageReport({ ...base, groupBy: "day", since, until: starts.today });
		periods.push({ label, totals: report.totals });
	}
	const days = lastDays(starts.today, CHART_DAYS);
	const recent = await usageReport({ ...base, groupBy: "day", since: days[0], until: starts.today });
	const byDay = new Map(recent.rows.map((r) => [r.key, r]));
	const daily = { today: starts.today, rows: days.map((key) => byDay.get(key) ?? { key, ...NO_USAGE }), totals: recent.totals };
	const byModel = await usageReport({ ...base, groupBy: "model" });
	const byProject = await usageReport({ ...base, groupBy: "project" });
	periods.push({ label: "all time", totals: byModel.totals });
	return { periods, daily, byModel, byProject };
}
