// onProgress's partial lists: the reference sorts a copy of the infos loaded so far
// (`sortSessionInfos([...partial])`) at every publish; ours keeps them sorted as they
// arrive (lib/listing.js, PartialList). The lists must be the same: same infos, same
// order, a new array each time. Loads finish in a different order on each side, so
// the structure is checked against the reference's formula on the same arrivals, and
// real listings (first and second, with ties of `modified` and a cwd filter) are
// checked on both sides for what the formula implies whatever the arrival order.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import { reference } from "./helpers/reference.mjs";
import { ours } from "./helpers/ours.mjs";
import { Rng } from "./helpers/prng.mjs";

const require = createRequire(import.meta.url);
const { PartialList } = require("../lib/listing.js");
const SEED = Number(process.env.SEED ?? 1) >>> 0;

/** The reference's partial list (dist/core/session-manager.js, listSessionsFromDir and list()). */
const referencePartial = (arrived, include) => {
	const sorted = [...arrived].sort((a, b) => b.modified.getTime() - a.modified.getTime());
	return include ? sorted.filter(include) : sorted;
};

test(`PartialList gives the reference's list at every step (SEED=${SEED})`, () => {
	const rng = new Rng(SEED);
	for (let round = 0; round < 300; round++) {
		const include = rng.bool() ? (info) => info.cwd !== "/other" : undefined;
		const partial = new PartialList(include);
		const arrived = [];
		let previous;
		const n = 1 + rng.int(60);
		for (let i = 0; i < n; i++) {
			// Few distinct times (ties), sometimes an invalid date (NaN: the
			// reference's comparator is inconsistent there).
			const time = rng.bool(0.03) ? Number.NaN : 1_700_000_000_000 + rng.int(6) * 1000;
			const info = { i, cwd: rng.bool(0.2) ? "/other" : "/x", modified: new Date(time) };
			arrived.push(info);
			partial.add(info);
			if (rng.bool(0.3) || i === n - 1) {
				const list = partial.snapshot();
				assert.notEqual(list, previous, "a new array each time");
				assert.deepEqual(
					list.map((s) => s.i),
					referencePartial(arrived, include).map((s) => s.i),
					`round ${round}, after ${i + 1}`,
				);
				previous = list;
				// A caller that changes a date it was handed (the reference then sorts by the new one).
				if (list.length && rng.bool(0.05)) rng.pick(list).modified.setTime(1_700_000_000_000 + rng.int(6) * 1000);
			}
		}
	}
});

const CWD = "/home/dev/progress";
const ISO = (s) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();

function writeFolder(dir, count) {
	fs.mkdirSync(dir, { recursive: true });
	for (let i = 0; i < count; i++) {
		// Five distinct activity times over all files: ties everywhere.
		const when = ISO(i % 5);
		const header = { type: "session", version: 3, id: `s${i}`, timestamp: ISO(0), cwd: i % 7 === 3 ? "/elsewhere" : CWD };
		const message = { type: "message", id: "m1", parentId: null, timestamp: when, message: { role: "user", content: `hello ${i}`, timestamp: Date.parse(when) } };
		const name = `2025-01-01T00-00-${String(i).padStart(4, "0")}_s${i}.jsonl`;
		fs.writeFileSync(path.join(dir, name), `${JSON.stringify(header)}\n${JSON.stringify(message)}\n`);
	}
}

/** What the reference's formula implies for its successive partial lists, whatever order the loads finish in. */
function checkPartials(calls, result, where) {
	const lists = calls.filter((c) => c.partial !== undefined).map((c) => c.partial);
	assert.ok(lists.length > 10, where);
	const resultSet = new Set(result);
	for (let k = 0; k < lists.length; k++) {
		const list = lists[k];
		const before = k > 0 ? lists[k - 1] : [];
		assert.notEqual(list, before, `${where}: a new array each time`);
		for (let i = 1; i < list.length; i++) {
			assert.ok(list[i - 1].modified.getTime() >= list[i].modified.getTime(), `${where}: list ${k} newest first`);
		}
		assert.ok(list.every((s) => resultSet.has(s)), `${where}: list ${k} holds the result's infos`);
		// Every info of the last list is still there, in the same order, and
		// before any newly loaded one of the same time (a stable sort of arrivals).
		const place = new Map(list.map((s, i) => [s, i]));
		const old = new Set(before);
		for (let i = 0; i < before.length; i++) {
			assert.ok(place.has(before[i]), `${where}: list ${k} lost an info`);
			if (i > 0) assert.ok(place.get(before[i - 1]) < place.get(before[i]), `${where}: list ${k} reordered older infos`);
		}
		for (let i = 1; i < list.length; i++) {
			const tie = list[i - 1].modified.getTime() === list[i].modified.getTime();
			if (tie && !old.has(list[i - 1])) assert.ok(!old.has(list[i]), `${where}: list ${k}: a new info before an older one of the same time`);
		}
	}
	const last = lists[lists.length - 1];
	assert.deepEqual(new Set(last), resultSet, `${where}: the last list is the result`);
}

for (const [side, module] of [["reference", reference], ["ours", ours]]) {
	test(`${side}: list() and listAll() partial lists, first and second listing, with ties and a cwd filter`, async () => {
		const base = fs.mkdtempSync(path.join(os.tmpdir(), `pisn-progress-${side}-`));
		const dir = path.join(base, "sessions");
		writeFolder(dir, 240);
		for (const round of ["first", "second"]) {
			const calls = [];
			const result = await module.SessionManager.list(CWD, dir, (loaded, total, partial) => calls.push({ loaded, total, partial }));
			assert.equal(result.length, 240 - Math.floor((240 + 3) / 7), "the cwd filter applies");
			checkPartials(calls, result, `${side} list() ${round}`);
			const allCalls = [];
			const all = await module.SessionManager.listAll(dir, (loaded, total, partial) => allCalls.push({ loaded, total, partial }));
			assert.equal(all.length, 240);
			checkPartials(allCalls, all, `${side} listAll(dir) ${round}`);
		}
		fs.rmSync(base, { recursive: true, force: true });
	});
}

test("a caller that changes dates during a warm listing's progress: the result is the reference's", async () => {
	// A second listing of an unchanged folder reuses the order of the first (same names,
	// same dates); a date changed in a partial list must still move its session, as in
	// the reference, whose final sort reads the dates as they are then, ties by name.
	const results = {};
	for (const [side, module] of [["reference", reference], ["ours", ours]]) {
		const base = fs.mkdtempSync(path.join(os.tmpdir(), `pisn-progress-dates-${side}-`));
		const dir = path.join(base, "sessions");
		writeFolder(dir, 120);
		const plain = await module.SessionManager.list(CWD, dir);
		const again = await module.SessionManager.list(CWD, dir);
		const changed = await module.SessionManager.list(CWD, dir, (_loaded, _total, partial) => {
			for (const info of partial ?? []) {
				if (info.id === "s12") info.modified.setTime(Date.parse(ISO(4)));
				if (info.id === "s13") info.modified = new Date(0);
			}
		});
		const after = await module.SessionManager.list(CWD, dir);
		const show = (infos) => infos.map((s) => `${s.id} ${s.modified.toISOString()}`);
		results[side] = { plain: show(plain), again: show(again), changed: show(changed), after: show(after) };
		fs.rmSync(base, { recursive: true, force: true });
	}
	const { reference: expected, ours: actual } = results;
	// s12 now ties with s4, s9, s14 ...: among them by name (descending), as the reference sorts.
	const newest = expected.changed.filter((line) => line.endsWith(ISO(4)));
	assert.deepEqual(newest.slice(-3), [`s12 ${ISO(4)}`, `s9 ${ISO(4)}`, `s4 ${ISO(4)}`]);
	assert.equal(expected.changed.at(-1), `s13 ${new Date(0).toISOString()}`, "and s13 last");
	assert.deepEqual(expected.after, expected.plain, "the next listing has fresh infos");
	assert.deepEqual(actual, expected);
});
