// fuzz/README.md finding 3: a v1 file whose entry is a JSON array. The reference's v1
// migration sets `id` and `parentId` on the array object, which JSON.stringify does not
// write: the migrated file holds `[1]`, and the id lives only in the memory of the process
// that migrated it. Ours holds what the file holds (README: "Differences from the
// reference"): right after migration, the session is what every later open of the file
// gives, on both sides. This pins that, and that the reference still does otherwise.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { reference } from "./helpers/reference.mjs";
import { ours } from "./helpers/ours.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const INPUT = fs.readFileSync(path.join(ROOT, "fuzz", "artifacts-found", "reference-v1-array-entry-leaf.jsonl"));

/** The session as a caller sees it, with the migration's random ids named by order. */
function state(sm) {
	const names = new Map();
	const name = (id) => {
		if (typeof id !== "string") return id;
		if (!names.has(id)) names.set(id, `id${names.size}`);
		return names.get(id);
	};
	const entries = sm.getEntries();
	return {
		entries: entries.map((e) => (Array.isArray(e) ? { array: [...e], keys: Object.keys(e), id: name(e.id) } : { ...e, id: name(e.id), parentId: name(e.parentId) })),
		leaf: name(sm.getLeafId()),
		branch: sm.getBranch().map((e) => entries.indexOf(e)),
		tree: sm.getTree().map((n) => entries.indexOf(n.entry)),
		context: sm.buildSessionContext(),
	};
}

function openBoth(module) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-v1-array-"));
	const file = path.join(dir, "s.jsonl");
	fs.writeFileSync(file, INPUT);
	const first = module.SessionManager.open(file);
	const migrated = state(first);
	const written = fs.readFileSync(file, "utf8").replace(/"id":"[0-9a-f]{8}"/g, '"id":"<id>"');
	let branched;
	try {
		branched = { file: path.basename(first.createBranchedSession(first.getLeafId())) !== "" };
	} catch (error) {
		branched = { error: error.message };
	}
	const reopened = state(module.SessionManager.open(file));
	fs.rmSync(dir, { recursive: true, force: true });
	return { migrated, written, branched, reopened };
}

test("a v1 entry that is a JSON array: ours right after migration is the session every reopen gives", () => {
	const theirs = openBoth(reference);
	const mine = openBoth(ours);
	// The same migrated file on disk, and the same session when it is opened again.
	assert.equal(mine.written, theirs.written);
	assert.match(mine.written, /\n\[1\]\n$/);
	assert.deepEqual(mine.reopened, theirs.reopened);
	// Ours, in the process that migrated, is that same session: the array has no id.
	assert.deepEqual(mine.migrated, mine.reopened);
	assert.equal(mine.migrated.leaf, undefined);
	assert.deepEqual(mine.branched, { error: "Entry undefined not found" });
	// The reference's migrating process alone holds an id for the array, which no file holds.
	assert.notDeepEqual(theirs.migrated, theirs.reopened);
	assert.deepEqual(theirs.migrated.entries[1].keys, ["0", "id", "parentId"]);
	assert.equal(theirs.migrated.leaf, theirs.migrated.entries[1].id);
	assert.deepEqual(theirs.branched, { file: true });
});
