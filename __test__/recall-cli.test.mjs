// pi-sessions recall and read: the real bin as a child process on the seeded store of
// helpers/recall-store.mjs. The text is the library's (what session_search and
// session_read give the model); --json is the tools' details, one JSON document; errors
// are one line on stderr with the documented exit status. search --json and grep --json
// carry the tools' fields too: search's sessions are recallSearch's, grep's lines the
// hits recallSearch gives for the same entries (and grepSessions' own exact fields).
//
//   node __test__/run.mjs __test__/recall-cli.test.mjs      SEED=... reproduces a failure
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { makeWorld, runCli } from "./helpers/cli.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";
import { QUERIES, SEARCH_FIELDS, WORDS, writeRecallStore } from "./helpers/recall-store.mjs";

const require = createRequire(import.meta.url);
const { recallSearch, recallRead, grepSessions, searchSessions } = require(path.join(REPO_ROOT, "index.js"));

const SEED = baseSeed();
console.log(`# recall cli seed ${SEED} (SEED=${SEED} node __test__/run.mjs __test__/recall-cli.test.mjs)`);
process.env.PI_SESSION_NATIVE_CACHE_DIR = "";

const world = makeWorld("pi-recall-cli-");
after(() => world.cleanup());
const store = writeRecallStore(reference.SessionManager, world.root, new Rng(SEED));
const [alpha] = store.projects;
const cli = (args) => runCli(world, args, { cwd: alpha, env: { PI_CODING_AGENT_DIR: store.agentDir } });
const idOf = (file) => path.basename(file).split("_")[1].replace(/\.jsonl$/, "");
/** What JSON.stringify keeps of a value: the CLI's --json side of a comparison. */
const asJson = (value) => JSON.parse(JSON.stringify(value));

test("read prints recallRead's text, and with --json its details as one document", async () => {
	const r = new Rng(SEED ^ 0xc11);
	for (let i = 0; i < 8; i++) {
		const file = r.pick(store.files);
		const ids = reference.SessionManager.open(file).getEntries().map((e) => e.id);
		const [flags, options] = r.pick([
			[[], {}],
			[["--from", "start", "--limit", "3"], { from: "start", limit: 3 }],
			[["--around", ids[Math.floor(ids.length / 2)], "--limit", "5"], { around: ids[Math.floor(ids.length / 2)], limit: 5 }],
			[["--last", "4", "--thinking"], { last: 4, thinking: true }],
			[["--leaf", ids[1]], { leaf: ids[1] }],
		]);
		const session = r.bool() ? idOf(file) : idOf(file).slice(0, 13);
		const where = `read ${session} ${flags.join(" ")}`;
		const expected = await recallRead({ session, cwd: alpha, ...options });
		const text = cli(["read", session, ...flags]);
		assert.equal(text.status, 0, `${where}: ${text.stderr}`);
		assert.equal(text.stdout, `${expected.text}\n`, where);
		const json = cli(["read", session, ...flags, "--json"]);
		assert.equal(json.status, 0, where);
		const { text: _text, ...details } = expected;
		assert.deepEqual(JSON.parse(json.stdout), asJson(details), where);
		assert.deepEqual(Object.keys(JSON.parse(json.stdout)), ["sessionId", "sessionFile", "entries", "truncated", "next"], where);
	}
});

test("recall prints recallSearch's text, and with --json its hits (or sessions) and truncated", async () => {
	const cases = [
		[["deploy"], { query: "deploy" }],
		[["login", "timeout", "--all", "--limit", "3"], { query: "login timeout", scope: "all", limit: 3 }],
		[["migration", "--role", "toolResult"], { query: "migration", role: "toolResult" }],
		[["a.b", "--file", "app.ts"], { query: "a.b", file: "app.ts" }],
		[["e", "--session", idOf(store.files[0])], { query: "e", session: idOf(store.files[0]) }],
		[["e", "--before", "2"], { query: "e", before: "2" }],
		[["--all"], { scope: "all" }],
		[[], {}],
	];
	for (const [flags, options] of cases) {
		const where = `recall ${flags.join(" ")}`;
		const expected = await recallSearch({ cwd: alpha, ...options });
		const found = (expected.sessions ?? expected.hits).length;
		const text = cli(["recall", ...flags]);
		assert.equal(text.status, found > 0 ? 0 : 1, `${where}: ${text.stderr}`);
		assert.equal(text.stdout, `${expected.text}\n`, where);
		const json = cli(["recall", ...flags, "--json"]);
		assert.equal(json.status, text.status, where);
		const { text: _text, ...details } = expected;
		assert.deepEqual(JSON.parse(json.stdout), asJson(details), where);
		assert.deepEqual(Object.keys(JSON.parse(json.stdout)), options.query ? ["hits", "truncated"] : ["hits", "sessions", "truncated"], where);
	}
});

test("exit status: 1 nothing found, no such session or entry, an id prefix of several; 2 bad usage or not a session", () => {
	const fail = (args, status, message) => {
		const r = cli(args);
		assert.equal(r.status, status, `${args.join(" ")}: ${r.stderr}`);
		assert.equal(r.stdout, "", args.join(" "));
		assert.match(r.stderr, message, args.join(" "));
		assert.equal(r.stderr.split("\n").filter(Boolean).length, 1, `${args.join(" ")}: one line`);
	};
	assert.equal(cli(["recall", "zzz-none"]).status, 1);
	fail(["read", "zzzz"], 1, /^pi-sessions: No session found with the id or id prefix 'zzzz'/);
	fail(["read", "0198"], 1, /^pi-sessions: '0198' matches \d+ sessions in this project: .*; give more of the id\n$/);
	fail(["read", idOf(store.files[0]), "--around", "nope1234"], 1, /No entry 'nope1234' in session/);
	fail(["read", path.join(path.dirname(store.files[0]), "notes.jsonl")], 2, /is not a pi session file/);
	fail(["read", idOf(store.files[0]), "--last", "0"], 2, /^pi-sessions: read: last must be a whole number from 1 to 500\n$/);
	fail(["read", idOf(store.files[0]), "--around", "a", "--from", "b"], 2, /^pi-sessions: read: Give at most one of around, from and last\n$/);
	fail(["read"], 2, /^pi-sessions: read: missing <session>/);
	fail(["recall", "x", "--role", "system"], 2, /^pi-sessions: recall: role must be one of/);
	fail(["recall", "x", "--after", "someday"], 2, /^pi-sessions: recall: after must be a date/);
	fail(["recall", "x", "--session", "0198"], 1, /matches \d+ sessions/);
});

test("search --json: each session as recallSearch lists it (no query, every project), in searchSessions' order", async () => {
	const listed = await recallSearch({ cwd: alpha, scope: "all", limit: 500 });
	assert.equal(listed.truncated, false);
	const byFile = new Map(listed.sessions.map((s) => [s.sessionFile, s]));
	let compared = 0;
	for (const query of ["e", "deploy", "0198", "migration"]) {
		for (const [flags, options] of [
			[["--all"], {}],
			[[], { cwd: alpha }],
			[["--all", "--sort", "recent"], { sort: "recent" }],
		]) {
			const where = `search ${query} ${flags.join(" ")}`;
			const r = cli(["search", query, "--json", ...flags]);
			const printed = JSON.parse(r.stdout);
			const order = (await searchSessions(query, options)).map((s) => s.path);
			assert.deepEqual(printed.sessions.map((s) => s.sessionFile), order, where);
			assert.equal(r.status, printed.sessions.length > 0 ? 0 : 1, `${where}: ${r.stderr}`);
			assert.deepEqual(Object.keys(printed), ["sessions", "truncated"], where);
			for (const s of printed.sessions) {
				assert.deepEqual(s, byFile.get(s.sessionFile), where);
				compared++;
			}
		}
	}
	assert.ok(compared > 10, `compared ${compared} sessions`);
	const none = cli(["search", "zzz-none", "--all", "--json"]);
	assert.equal(none.status, 1, none.stderr);
	assert.deepEqual(JSON.parse(none.stdout), { sessions: [], truncated: false });
});

test("grep --json: a line per block in every fork, whose tool fields are recallSearch's hit for its entry and role", async () => {
	const TOOL_FIELDS = ["sessionId", "sessionFile", "cwd", "sessionName", "entryId", "role", "toolName", "timestamp", "snippet"];
	const pick = (line, keys) => Object.fromEntries(keys.map((k) => [k, line[k]]));
	const keyOf = (h) => `${h.sessionFile}\0${h.entryId}\0${h.role}\0${h.toolName}`;
	let compared = 0;
	let toolCalls = 0;
	let forked = 0;
	for (const query of [...QUERIES, ...WORDS.slice(0, 6)]) {
		if (query.startsWith("re:")) continue;
		const where = `grep ${query}`;
		const r = cli(["grep", query, "--all", "--in", SEARCH_FIELDS.join(","), "--json"]);
		const matches = await grepSessions(query, { fields: SEARCH_FIELDS });
		assert.equal(r.status, matches.length > 0 ? 0 : 1, `${where}: ${r.stderr}`);
		const lines = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
		assert.equal(lines.length, matches.length, where);
		lines.forEach((line, i) => {
			const { path: sessionFile, entryId, field, blockIndex, text, ranges } = matches[i];
			assert.deepEqual(
				{ sessionFile: line.sessionFile, entryId: line.entryId, field: line.field, blockIndex: line.blockIndex, text: line.text, ranges: line.ranges },
				asJson({ sessionFile, entryId, field, blockIndex, text, ranges }),
				where,
			);
			assert.deepEqual(Object.keys(line), [...TOOL_FIELDS, "field", "blockIndex", "text", "ranges"], where);
			assert.ok(!("forks" in line), where);
		});
		// recallSearch gives the first matching block of an entry and role, in the session it was first written in.
		const { hits, truncated } = await recallSearch({ query, scope: "all", cwd: alpha, limit: 500 });
		assert.equal(truncated, false, where);
		const first = new Map();
		for (const line of lines) if (!first.has(keyOf(line))) first.set(keyOf(line), line);
		for (const hit of hits) {
			const line = first.get(keyOf(hit));
			assert.ok(line, `${where}: grep has recallSearch's hit ${keyOf(hit)}`);
			const { forks: _forks, ...fields } = hit;
			assert.deepEqual(pick(line, TOOL_FIELDS), fields, where);
			compared++;
			if (hit.role === "toolCall") {
				assert.equal(line.field, "toolCall", where);
				assert.equal(typeof line.toolName, "string", where);
				assert.ok(line.text.startsWith(`${line.toolName} `), `${where}: a tool call's text is its name and arguments`);
				toolCalls++;
			}
		}
		// Every copy is a line of its own, in its own session: a hit's forks each have one.
		for (const hit of hits.filter((h) => h.forks > 0)) {
			const carriers = new Set(lines.filter((l) => l.entryId === hit.entryId && l.role === hit.role && l.toolName === hit.toolName).map((l) => l.sessionFile));
			assert.ok(carriers.size >= hit.forks + 1, `${where}: ${hit.entryId} in ${carriers.size} sessions, ${hit.forks} forks`);
			forked++;
		}
	}
	assert.ok(compared > 20, `compared ${compared} hits`);
	assert.ok(toolCalls > 0, "a tool call hit was compared");
	assert.ok(forked > 0, "a hit copied into forks was compared");
	const none = cli(["grep", "zzz-none", "--all", "--json"]);
	assert.equal(none.status, 1, none.stderr);
	assert.equal(none.stdout, "");
});
