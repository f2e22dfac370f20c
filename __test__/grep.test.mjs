// grepSessions against a JavaScript oracle (helpers/grep-oracle.mjs: JSON.parse of each
// line, the field rules, text.matchAll) over seeded random corpora: every entry kind and
// field, texts with ", \, newlines, \u-escapes of ordinary letters (and of keys), surrogate
// pairs and lone surrogates, İ, ẞ, final sigma, combining marks, a 1 MB line, duplicate
// keys, invalid UTF-8, torn and non-session files; seeded random literal patterns and
// regexes (lookbehind, backreferences, classes, anchors, alternatives, quantifiers); limit,
// since/until, onMatch order, abort, and bad options as TypeErrors naming the option.
//
//   node __test__/run.mjs __test__/grep.test.mjs        SEED=... reproduces a failure
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { ALL_FIELDS, DEFAULT_FIELDS, oracleGrep } from "./helpers/grep-oracle.mjs";
import { tempDir } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";

const require = createRequire(import.meta.url);
const { grepSessions, SessionManager } = require(path.join(REPO_ROOT, "index.js"));

const SEED = baseSeed();
console.log(`# grep seed ${SEED} (SEED=${SEED} node __test__/run.mjs __test__/grep.test.mjs)`);

const WORDS = (
	"session entry branch leaf parent tree index context message tool result assistant user model thinking " +
	"compaction summary label token cache read write edit bash grep find file path line deploy config response " +
	"error ECONNREFUSED auth service timeout render column editor import update async stream value check"
).split(" ");
const ODD = [
	"İstanbul", "İ", "i̇", "STRASSE", "straße", "ẞ", "ß", "ΟΔΥΣΣΕΥΣ", "σοφία", "Σ", "ς", "σ", "naïve", "nai\u0308ve", "e\u0301",
	"É", "😀", "𐐀𐐁", "𐐨", "ǅ", "K", "k", "ſ", "Å", "ﬀ", "ı", "\ud800", "\udc00", "\ud83d", "CAFÉ", "日本語", "\"quoted\"",
	"back\\slash", "a/b", "line\nbreak", "tab\there", "\u0000nul", "\u2028", "{\"json\":1}", "`tick`", "50%", "a+b", "(x)", "[y]",
];

/** A random text of words, odd characters and punctuation. */
function randomText(rng, words) {
	const parts = [];
	for (let i = 0; i < words; i++) {
		const w = rng.bool(0.3) ? rng.pick(ODD) : rng.pick(WORDS);
		parts.push(rng.bool(0.2) ? w.toUpperCase() : rng.bool(0.1) ? w[0].toUpperCase() + w.slice(1) : w);
		parts.push(rng.pick([" ", " ", " ", "", "\n", ". ", ", "]));
	}
	return parts.join("");
}

/**
 * JSON text with some characters of its strings written as \u escapes (keys too:
 * JSON.parse decodes them, and so must the scan).
 */
function escapeSome(rng, json, p) {
	let out = "";
	let inString = false;
	for (let i = 0; i < json.length; i++) {
		const c = json[i];
		if (inString && c === "\\") {
			out += c + json[i + 1];
			i++;
			continue;
		}
		if (c === '"') inString = !inString;
		else if (inString && rng.bool(p)) {
			out += `\\u${c.charCodeAt(0).toString(16).padStart(4, rng.bool() ? "0" : "0").toUpperCase()}`;
			continue;
		}
		out += c;
	}
	return out;
}

const BASE = Date.UTC(2024, 4, 1);
const ts = (k) => new Date(BASE + k * 60_000).toISOString();

/** One random entry (any kind the fields read, and some they do not). */
function randomEntry(rng, k) {
	const text = () => randomText(rng, 1 + rng.int(12));
	const id = rng.bool(0.9) ? `e${k}` : rng.pick([undefined, 7, null]);
	const timestamp = rng.bool(0.9) ? ts(k) : rng.pick([undefined, BASE + k * 60_000, "not a date", null]);
	const block = () =>
		rng.weighted([
			[4, { type: "text", text: text() }],
			[2, { type: "thinking", thinking: text() }],
			[2, { type: "toolCall", id: "c", name: rng.pick(["bash", "read", "edit"]), arguments: rng.bool(0.9) ? { command: text(), n: rng.int(100), "10": "ten", path: "/a/b" } : undefined }],
			[1, { type: "image", data: "aGVsbG8=" }],
			[1, { type: "text", text: 5 }],
			[1, null],
		]);
	const content = (withBlocks = true) => (rng.bool(0.3) ? text() : withBlocks ? Array.from({ length: 1 + rng.int(4) }, block) : [{ type: "text", text: text() }]);
	const message = (m) => ({ type: "message", id, parentId: null, timestamp, message: m });
	return rng.weighted([
		[5, message({ role: "user", content: content(false), timestamp: 1 })],
		[5, message({ role: "assistant", content: content(), provider: "p", model: "m" })],
		[4, message({ role: "toolResult", toolCallId: "c", toolName: "bash", content: content(false), isError: false })],
		[1, message({ role: "bashExecution", command: "ls", output: text(), exitCode: 0 })],
		[1, message({ role: "custom", customType: "x", content: content(false), display: true })],
		[1, message({ role: "hookMessage", customType: "x", content: text(), display: true })],
		[1, { type: "compaction", id, parentId: null, timestamp, summary: text(), firstKeptEntryId: "e0", tokensBefore: 9 }],
		[1, { type: "branch_summary", id, parentId: null, timestamp, fromId: "e0", summary: text() }],
		[1, { type: "custom_message", id, parentId: null, timestamp, customType: "x", content: content(false), display: true }],
		[1, { type: "custom", id, parentId: null, timestamp, customType: "x", data: { text: text() } }],
		[1, { type: "session_info", id, parentId: null, timestamp, name: text() }],
		[1, message({ role: 7, content: text() })],
		[1, { type: "message", id, timestamp, message: [text()] }],
	]);
}

/** Lines no JSON.parse accepts, or that hold odd but valid JSON. */
function oddLine(rng, k) {
	return rng.pick([
		`{"type":"message","id":"d${k}","timestamp":"${ts(k)}","message":{"role":"user","content":"first deploy"},"message":{"role":"user","content":"second deploy"}}`,
		`{"type":"message","id":"w${k}","timestamp":"${ts(k)}","message":{"role":"user","content":"spaced deploy"}}   \r`,
		`{"type":"message","message":{"role":"user","content":"torn deploy`,
		`{"type":"message","message":{"role":"user","content":"trailing deploy"}} x`,
		`[{"type":"message"}]`,
		`"deploy"`,
		`{"type":"message","id":"b${k}","message":{"role":"user","content":"bad @@BAD@@ bytes deploy"}}`,
		`{"type":"message","id":"s${k}","message":{"role":"user","content":"lone \\ud800 and pair \\ud83d\\ude00 deploy"}}`,
		"",
	]);
}

/** The text as UTF-8, each @@BAD@@ made two bytes that are not UTF-8. */
function withBadBytes(text) {
	const parts = text.split("@@BAD@@").map((p) => Buffer.from(p, "utf8"));
	return Buffer.concat(parts.flatMap((p, i) => (i === 0 ? [p] : [Buffer.from([0xff, 0xfe]), p])));
}

/** A folder of random sessions, plus a torn one and files that are not sessions. */
function writeCorpus(rng, dir, count) {
	fs.mkdirSync(dir, { recursive: true });
	const texts = [];
	for (let i = 0; i < count; i++) {
		const id = `0000000${i}-aaaa-4bbb-8ccc-${String(i).padStart(12, "0")}`;
		const lines = [JSON.stringify({ type: "session", version: 3, id, timestamp: ts(0), cwd: rng.pick(["/p/a", "/p/ÜΣ"]) })];
		const n = rng.int(14);
		for (let k = 0; k < n; k++) {
			if (rng.bool(0.12)) {
				lines.push(oddLine(rng, k));
				continue;
			}
			const entry = randomEntry(rng, k);
			const json = JSON.stringify(entry);
			lines.push(rng.bool(0.25) ? escapeSome(rng, json, 0.2) : json);
			const t = entry?.message?.content ?? entry?.summary ?? entry?.message?.output ?? entry?.content;
			if (typeof t === "string") texts.push(t);
			else if (Array.isArray(t)) for (const b of t) if (typeof b?.text === "string") texts.push(b.text);
		}
		if (i === 0) {
			// One big line: 1 MB of text with a match near its end.
			const big = `${"lorem ipsum ".repeat(90_000)}needle in the haystack ẞ`;
			lines.push(JSON.stringify({ type: "message", id: "big", timestamp: ts(50), message: { role: "user", content: big } }));
		}
		let data = `${lines.join("\n")}\n`;
		if (i === 1) data = data.slice(0, data.length - 7); // torn last line
		const file = path.join(dir, `2024-05-01T00-00-${String(i).padStart(2, "0")}-000Z_${id}.jsonl`);
		fs.writeFileSync(file, withBadBytes(data));
		const t = new Date(BASE + (i % 7) * 1000);
		fs.utimesSync(file, t, t);
	}
	fs.writeFileSync(path.join(dir, "not-a-session.jsonl"), '{"type":"message","message":{"role":"user","content":"deploy"}}\n');
	fs.writeFileSync(path.join(dir, "garbage.jsonl"), "\x00\x01 deploy error\n");
	return texts;
}

const REGEXES = [
	"foo.*bar", "(?<=de)ploy", "(?<!e)rror", "(\\w)\\1", "(?<n>s)\\k<n>", "\\bdeploy\\b", "^\\s*$", "ς", "Σ", "σ", "İ", "ß", "ẞ",
	"\\u{1F600}", "\\uD83D", "\\ud800", "[α-ω]{3}", "\\p{L}", "p{L}", "[^\\x00-\\x7f]", "e\\u0301", ".{0,3}ß", "session|tool",
	"^", "$", "a*", "dep\\x6coy", "de\\u0070loy", "deplo?y", "depl{1,2}oy", "de[p]loy", "\"", "\\\\", "\\n", "/a", "err(or)+",
	"ECONN\\w+", "(?:e|E)rror", "d.e.p", "K", "k", "\\d+", "stra(ss|ß)e", "[\\s\\S]{20}x", "need(?=le)", "needle in the hay",
];

/** A random pattern: a piece of a real text, a word, an odd character, or a regex. */
function randomPattern(rng, texts) {
	const piece = () => {
		const t = rng.pick(texts) ?? "deploy";
		const start = rng.int(Math.max(1, t.length));
		return t.slice(start, start + 1 + rng.int(12));
	};
	const caseOf = (s) => (rng.bool(0.3) ? s.toUpperCase() : rng.bool(0.2) ? s.toLowerCase() : s);
	return rng.weighted([
		[4, () => caseOf(piece())],
		[3, () => caseOf(rng.pick(WORDS))],
		[2, () => rng.pick(ODD)],
		[1, () => `${rng.pick(WORDS)} ${rng.pick(WORDS)}`],
		[1, () => rng.pick(["\"", "\\", "\n", "/", "\ud800", "\udc00", "😀", "ſ", "needle in the haystack", "deploy"])],
		[4, () => `re:${rng.pick(REGEXES)}`],
	])();
}

function randomFields(rng) {
	if (rng.bool(0.3)) return undefined;
	if (rng.bool(0.3)) return ALL_FIELDS;
	const some = ALL_FIELDS.filter(() => rng.bool(0.4));
	return some.length ? some : ["toolCall"];
}

const listed = (dir) => SessionManager.listAll(dir);

function describe(p) {
	return JSON.stringify(p);
}

// The first round lists the corpus with ours first, so that grepSessions finds every
// file in the listing's cache; the others take the oracle's sessions from the reference,
// so that ours greps files its listing has not read (read first for the pattern's words,
// and left out of the listing without them), and then lists them all.
test("grepSessions finds exactly what the JavaScript oracle finds", async () => {
	const rounds = 3;
	for (let r = 0; r < rounds; r++) {
		const rng = new Rng(SEED + r);
		const dir = tempDir("grep-diff");
		const texts = writeCorpus(rng, dir, 14);
		const sessions = r === 0 ? await listed(dir) : await reference.SessionManager.listAll(dir);
		for (let q = 0; q < 60; q++) {
			const pattern = randomPattern(rng, texts);
			const fields = randomFields(rng);
			const caseSensitive = rng.bool(0.2);
			const options = { sessionDir: dir, fields, caseSensitive };
			const oracleOptions = { fields: fields ?? DEFAULT_FIELDS, caseSensitive };
			const where = `seed ${SEED + r}, pattern ${describe(pattern)}, options ${JSON.stringify(oracleOptions)}`;
			let expected;
			try {
				expected = oracleGrep(sessions, pattern, oracleOptions);
			} catch (error) {
				await assert.rejects(grepSessions(pattern, options), (e) => e instanceof SyntaxError && e.message === error.message, where);
				continue;
			}
			const seen = [];
			const got = await grepSessions(pattern, { ...options, onMatch: (m) => seen.push(m) });
			assert.deepStrictEqual(got, expected, where);
			assert.deepStrictEqual(seen, expected, `onMatch, ${where}`);
			if (q % 5 === 0) {
				// collect: false keeps nothing; onMatch sees the same, and limit counts what it saw.
				const streamed = [];
				const limit = expected.length > 1 ? 1 + rng.int(expected.length) : undefined;
				const none = await grepSessions(pattern, { ...options, limit, collect: false, onMatch: (m) => streamed.push(m) });
				assert.deepStrictEqual(none, [], `collect: false, ${where}`);
				assert.deepStrictEqual(streamed, expected.slice(0, limit), `collect: false, limit ${limit}, ${where}`);
			}
			if (expected.length > 1) {
				const limit = 1 + rng.int(expected.length - 1);
				assert.deepStrictEqual(await grepSessions(pattern, { ...options, limit }), expected.slice(0, limit), `limit ${limit}, ${where}`);
			}
		}
		// What the greps left out of their listings is listed all the same afterwards.
		const paths = (list) => list.map((s) => s.path);
		assert.deepStrictEqual(paths(await listed(dir)), paths(sessions), `listAll after grepping, seed ${SEED + r}`);
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

test("since and until select entries by their timestamp", async () => {
	const rng = new Rng(SEED + 100);
	const dir = tempDir("grep-time");
	writeCorpus(rng, dir, 10);
	const sessions = await listed(dir);
	// The three ranges hold matches for any seed; the single instant may hold none (for
	// some seeds no entry at that minute has searched text), so only the answers are compared.
	for (const [since, until, holdsMatches] of [
		[ts(3), undefined, true],
		[undefined, ts(5), true],
		[new Date(BASE + 2 * 60_000), BASE + 8 * 60_000, true],
		[ts(4), ts(4), false],
	]) {
		const where = `seed ${SEED + 100}, since ${since}, until ${until}`;
		const expected = oracleGrep(sessions, "re:[a-z]", { fields: ALL_FIELDS, since, until });
		const got = await grepSessions("re:[a-z]", { sessionDir: dir, fields: ALL_FIELDS, since, until });
		assert.deepStrictEqual(got, expected, where);
		assert.ok(expected.length < oracleGrep(sessions, "re:[a-z]", { fields: ALL_FIELDS }).length, where);
		if (holdsMatches) assert.ok(expected.length > 0, where);
	}
	fs.rmSync(dir, { recursive: true, force: true });
});

test("cwd lists one project as list() does; matches carry the session's id and cwd", async () => {
	const dir = tempDir("grep-cwd");
	const header = (id, cwd) => JSON.stringify({ type: "session", version: 3, id, timestamp: ts(0), cwd });
	const user = (id, text) => JSON.stringify({ type: "message", id, parentId: null, timestamp: ts(1), message: { role: "user", content: text } });
	fs.writeFileSync(path.join(dir, "2024-05-01T00-00-00-000Z_a.jsonl"), `${header("a", "/w/one")}\n${user("u1", "Find the ECONNREFUSED")}\n`);
	fs.writeFileSync(path.join(dir, "2024-05-01T00-00-01-000Z_b.jsonl"), `${header("b", "/w/two")}\n${user("u2", "econnrefused again")}\n`);
	const got = await grepSessions("econnrefused", { cwd: "/w/one", sessionDir: dir });
	assert.deepStrictEqual(
		got.map((m) => [m.sessionId, m.cwd, m.entryId, m.role, m.field, m.blockIndex, m.ranges]),
		[["a", "/w/one", "u1", "user", "text", 0, [[9, 21]]]],
	);
	assert.equal((await grepSessions("econnrefused", { sessionDir: dir })).length, 2);
	assert.equal((await grepSessions("econnrefused", { sessionDir: dir, caseSensitive: true })).length, 1);
	fs.rmSync(dir, { recursive: true, force: true });
});

test("abort rejects with the signal's reason; progress counts files", async () => {
	const rng = new Rng(SEED + 200);
	const dir = tempDir("grep-abort");
	writeCorpus(rng, dir, 12);
	const before = new AbortController();
	before.abort(new Error("stop before"));
	await assert.rejects(grepSessions("deploy", { sessionDir: dir, signal: before.signal }), /stop before/);
	const during = new AbortController();
	let calls = 0;
	await assert.rejects(
		grepSessions("re:[a-z]", {
			sessionDir: dir,
			signal: during.signal,
			onMatch: () => {
				calls++;
				during.abort(new Error("stop during"));
			},
		}),
		/stop during/,
	);
	assert.equal(calls, 1);
	// What onMatch throws rejects the promise, and the scan stops.
	const thrown = new Error("from onMatch");
	await assert.rejects(grepSessions("re:[a-z]", { sessionDir: dir, onMatch: () => { throw thrown; } }), (e) => e === thrown);
	// An onMatch that returns a promise holds the next match back until it settles; its
	// rejection rejects grepSessions.
	let pending = 0;
	let overlapped = false;
	const waited = [];
	const all = await grepSessions("re:[a-z]", { sessionDir: dir });
	await grepSessions("re:[a-z]", {
		sessionDir: dir,
		collect: false,
		onMatch: async (m) => {
			overlapped ||= pending > 0;
			pending++;
			await new Promise((r) => setTimeout(r, 1));
			waited.push(m);
			pending--;
		},
	});
	assert.ok(!overlapped, "one onMatch at a time");
	assert.deepStrictEqual(waited, all);
	const refused = new Error("async refusal");
	await assert.rejects(grepSessions("re:[a-z]", { sessionDir: dir, onMatch: async () => { throw refused; } }), (e) => e === refused);
	const total = (await listed(dir)).length;
	const progress = [];
	await grepSessions("deploy", { sessionDir: dir, onProgress: (done, total) => progress.push([done, total]) });
	assert.ok(progress.length > 0);
	assert.deepStrictEqual(progress.at(-1), [total, total]);
	fs.rmSync(dir, { recursive: true, force: true });
});

test("bad options are TypeErrors naming the option; a bad regex is V8's SyntaxError", async () => {
	const cases = [
		[[5], /pattern must be a string/],
		[[""], /must not be empty/],
		[["x", null], /options must be an object/],
		[["x", { fields: ["text", "nope"] }], /options\.fields/],
		[["x", { fields: [] }], /options\.fields/],
		[["x", { caseSensitive: "yes" }], /options\.caseSensitive/],
		[["x", { limit: 0 }], /options\.limit/],
		[["x", { collect: "no" }], /options\.collect/],
		[["x", { limit: 1.5 }], /options\.limit/],
		[["x", { since: "not a date" }], /options\.since/],
		[["x", { until: {} }], /options\.until/],
		[["x", { onMatch: 1 }], /options\.onMatch/],
		[["x", { onProgress: "f" }], /options\.onProgress/],
		[["x", { signal: {} }], /options\.signal/],
		[["x", { cwd: 1 }], /options\.cwd/],
		[["x", { sessionDir: 1 }], /options\.sessionDir/],
	];
	for (const [args, message] of cases) {
		await assert.rejects(grepSessions(...args), (e) => e instanceof TypeError && message.test(e.message), JSON.stringify(args));
	}
	let v8;
	try {
		new RegExp("(?<=", "gi");
	} catch (e) {
		v8 = e.message;
	}
	await assert.rejects(grepSessions("re:(?<=", { sessionDir: tempDir("grep-bad") }), (e) => e instanceof SyntaxError && e.message === v8);
});
