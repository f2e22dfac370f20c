// The data of /usage: the periods' totals (today, this week, this month, all time) and
// all time by model and by project, each one usageReport of this package. Dates are local
// dates in `timezone` (the local zone by default, as usageReport's own default), weeks ISO
// weeks from Monday, as usageReport's "week" groups them.

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

/**
 * `{ periods: [{ label, totals }], byModel, byProject }` for UsageView, from
 * `usageReport` (this package's). One report after the other: they share the scan.
 * `onProgress(loaded, total)` is usageReport's, for each report in turn.
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
		const report = await usageReport({ ...base, groupBy: "day", since });
		periods.push({ label, totals: report.totals });
	}
	const byModel = await usageReport({ ...base, groupBy: "model" });
	const byProject = await usageReport({ ...base, groupBy: "project" });
	periods.push({ label: "all time", totals: byModel.totals });
	return { periods, byModel, byProject };
}
