// pi-sessions recall and read: the real bin as a child process on the seeded store of
// helpers/recall-store.mjs. The text is the library's (what session_search and
// session_read give the model); --json is the tools' details, one JSON document; errors
// are one line on stderr with the documented exit status.
//
//   node __test__/run.mjs __test__/recall-cli.test.mjs      SEED=... reproduces a failure
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import path from "node:path";
import { after, test } from "node:test";
import { makeWorld, runCli } from "./helpers/cli.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";
import { writeRecallStore } from "./helpers/recall-store.mjs";

const require = createRequire(import.meta.url);
const { recallSearch, recallRead } = require(path.join(REPO_ROOT, "index.js"));

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
