// pi-sessions search: the real bin as a child process, its --json against the
// reference's own /resume search (filterAndSortSessions over the reference's listing)
// on the same files, each session as the recall tools list it (recall-cli.test.mjs compares
// them with recallSearch's), --limit and truncated, exit statuses, its table, and bad input.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { fileNameFor, fixedSession, makeWorld, runCli, writeSession } from "./helpers/cli.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";

const oracle = await import(
	pathToFileURL(path.join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/modes/interactive/components/session-selector-search.js")).href
);

const world = makeWorld("pi-cli-search-");
after(() => world.cleanup());
process.env.PI_CODING_AGENT_DIR = world.agentDir;

const other = path.join(world.root, "elsewhere");
fs.mkdirSync(other);
const ids = [
	"0198f3a2-5b6c-7d8e-9f00-000000000001",
	"0198f3a2-5b6c-7d8e-9f00-000000000002",
	"0198f3a2-5b6c-7d8e-9f00-000000000003",
	"0198f3a2-5b6c-7d8e-9f00-000000000004",
];
const starts = ["2026-01-02T03:04:05.000Z", "2026-01-03T03:04:05.000Z", "2026-01-04T03:04:05.000Z", "2026-01-05T03:04:05.000Z"];
for (let i = 0; i < ids.length; i++) {
	const cwd = i === 3 ? other : world.project;
	writeSession(
		path.join(world.sessionDirOf(cwd), fileNameFor(starts[i], ids[i])),
		fixedSession({ id: ids[i], cwd, start: Date.parse(starts[i]), name: i % 2 ? `Named ${i}` : undefined, extra: i <= 1 }),
	);
}

const paths = (infos) => infos.map((s) => s.path);
const SESSION_KEYS = ["sessionId", "sessionFile", "cwd", "name", "firstMessage", "modified", "size"];

/** The sessions of a search --json, checked to be `{ sessions, truncated }` with the tools' fields; their paths. */
function jsonPaths(stdout, truncated, where) {
	const printed = JSON.parse(stdout);
	assert.deepEqual(Object.keys(printed), ["sessions", "truncated"], where);
	assert.equal(printed.truncated, truncated, where);
	for (const s of printed.sessions) {
		assert.deepEqual(Object.keys(s), SESSION_KEYS, where);
		assert.equal(s.size, fs.statSync(s.sessionFile).size, where);
		assert.equal(typeof s.firstMessage, "string", where);
	}
	return printed.sessions.map((s) => s.sessionFile);
}
const QUERIES = ["listing", "files", '"list the"', "re:l[io]st", "0198f3a2", "named", "elsewhere", "re:(", "nothing-matches-this"];

test("search --json is the reference's filterAndSortSessions over its listing, in the project and with --all", async () => {
	const inProject = await reference.SessionManager.list(world.project);
	const everywhere = await reference.SessionManager.listAll();
	assert.equal(everywhere.length, 4);
	for (const query of QUERIES) {
		for (const sort of ["relevance", "recent", "threaded"]) {
			for (const named of [false, true]) {
				const flags = ["--sort", sort, ...(named ? ["--named"] : [])];
				const nameFilter = named ? "named" : "all";
				const here = runCli(world, ["search", query, "--json", ...flags]);
				const expected = paths(oracle.filterAndSortSessions(inProject, query, sort, nameFilter));
				assert.equal(here.status, expected.length > 0 ? 0 : 1, here.stderr);
				assert.deepEqual(jsonPaths(here.stdout, false, `${query} ${flags}`), expected, `${query} ${flags}`);
				const all = runCli(world, ["search", query, "--all", "--json", ...flags]);
				const everyExpected = paths(oracle.filterAndSortSessions(everywhere, query, sort, nameFilter));
				assert.equal(all.status, everyExpected.length > 0 ? 0 : 1, all.stderr);
				assert.deepEqual(jsonPaths(all.stdout, false, `--all ${query} ${flags}`), everyExpected, `--all ${query} ${flags}`);
				if (everyExpected.length > 1) {
					const cut = runCli(world, ["search", query, "--all", "--json", "--limit", "1", ...flags]);
					assert.equal(cut.status, 0, cut.stderr);
					assert.deepEqual(jsonPaths(cut.stdout, true, `--limit 1 ${query} ${flags}`), everyExpected.slice(0, 1));
					const whole = runCli(world, ["search", query, "--all", "--json", "--limit", String(everyExpected.length), ...flags]);
					assert.deepEqual(jsonPaths(whole.stdout, false, `--limit ${everyExpected.length} ${query} ${flags}`), everyExpected);
				}
			}
		}
	}
});

test("searchSessions with allMessagesText: false (the table's search: texts left in the listing cache) finds what the reference's filterAndSortSessions finds", async () => {
	const { searchSessions } = await import(pathToFileURL(path.join(REPO_ROOT, "index.mjs")).href);
	const inProject = await reference.SessionManager.list(world.project);
	const everywhere = await reference.SessionManager.listAll();
	for (const query of QUERIES) {
		for (const sort of ["relevance", "recent", "threaded"]) {
			for (const nameFilter of ["all", "named"]) {
				for (const [cwd, infos] of [[world.project, inProject], [undefined, everywhere]]) {
					// A re: query runs on the texts, in V8: the answer is the same, still without texts.
					const found = await searchSessions(query, { cwd, sort, nameFilter, allMessagesText: false });
					const where = `${query} ${sort} ${nameFilter} ${cwd ?? "--all"}`;
					assert.deepEqual(paths(found), paths(oracle.filterAndSortSessions(infos, query, sort, nameFilter)), where);
					assert.ok(found.every((info) => !("allMessagesText" in info)), `${where}: no texts`);
				}
			}
		}
	}
});

test("search prints the matching sessions as ls does, and says so when none match", () => {
	const r = runCli(world, ["search", "named", "--all"], { env: { COLUMNS: "120" } });
	assert.equal(r.status, 0, r.stderr);
	const lines = r.stdout.trimEnd().split("\n");
	assert.match(lines[0], /MODIFIED\s+MSGS\s+PROJECT\s+NAME \/ FIRST MESSAGE\s+ID/);
	assert.ok(lines.some((l) => l.includes("Named 1") && l.includes("0198f3a2")), r.stdout);
	const none = runCli(world, ["search", "nothing-matches-this"]);
	assert.equal(none.status, 1, "nothing found: exit 1, as grep and recall");
	assert.equal(none.stdout, "");
	assert.match(none.stderr, /^no sessions match/);
});

test("search: bad input is one line and exit 2", () => {
	for (const args of [["search"], ["search", "x", "--sort", "oldest"], ["search", "x", "--limit", "-1"], ["search", "x", "--nope"]]) {
		const r = runCli(world, args);
		assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
		const lines = r.stderr.split("\n").filter(Boolean);
		assert.equal(lines.length, 1, r.stderr);
		assert.match(lines[0], /^pi-sessions: /);
	}
});
