// Session search compared with pi's own: searchSessions and SessionSearch against the
// reference's filterAndSortSessions / matchSession (modes/interactive/components/
// session-selector-search.js, with pi-tui's fuzzyMatch) applied to the reference's
// SessionManager.listAll / list of the same folder. Seeded random corpora (names, ids,
// cwds and message texts with characters that lowercase unusually: İ, ẞ, final sigma,
// surrogate pairs and lone surrogates, combining marks, every JavaScript whitespace) and
// seeded random queries (words, phrases, id prefixes, names, cwd parts, subsequences,
// letter/digit swaps, unbalanced quotes, regexes with lookbehind, backreferences, Unicode
// escapes), files appended, added and deleted between refreshes, non-string ids, invalid
// modified dates, and V8's toLowerCase on every code point.
//
//   node --test __test__/search.test.mjs        SEED=... reproduces a failure
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { tempDir } from "./helpers/harness.mjs";
import { ours } from "./helpers/ours.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { REPO_ROOT, reference } from "./helpers/reference.mjs";

const require = createRequire(import.meta.url);
const oursIndex = require(path.join(REPO_ROOT, "index.js"));
const { SCORES } = require(path.join(REPO_ROOT, "lib", "search.js"));
const binding = require(path.join(REPO_ROOT, "binding.js"));
const SEARCH_FILE = path.join(
	REPO_ROOT,
	"node_modules/@earendil-works/pi-coding-agent/dist/modes/interactive/components/session-selector-search.js",
);
const oracle = await import(pathToFileURL(SEARCH_FILE).href);
const { listSessions, searchSessions, SessionSearch } = oursIndex;

const SEED = baseSeed();
console.log(`# search seed ${SEED} (SEED=${SEED} node __test__/run.mjs __test__/search.test.mjs)`);

const CWD = "/fixed/search-project";
const SORTS = ["threaded", "recent", "relevance"];
const FILTERS = ["all", "named"];
const WHITESPACE = [" ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028", "\u2029", "\u202f", "\ufeff", "\u1680", "\u2005", "\v", "\f"];
// Look like whitespace and are not (to JavaScript's \s): U+0085, U+180E, U+200B.
const NOT_WHITESPACE = ["\u0085", "\u180e", "\u200b"];
const WORDS = (
	"session entry branch leaf parent tree index context message tool result assistant user model thinking " +
	"compaction summary label token cache read write edit bash grep find file path line deploy config response " +
	"error warning timeout render column editor import update async stream keybinding terminal value check"
).split(" ");
const ODD = [
	"İstanbul", "İ", "i̇", "STRASSE", "straße", "ẞ", "ß", "ΟΔΥΣΣΕΥΣ", "ΣΊΣΥΦΟΣ", "σοφία", "ΑΣ.Β", "Α.Σ", "Σ", "ς", "σ",
	"naïve", "nai\u0308ve", "e\u0301", "É", "😀", "𐐀𐐁", "𐐨", "ǅ", "ǆ", "Ǆ", "K", "k", "Å", "ﬀ", "ı", "I", "ᾈ", "ΐ",
	"Ω", "ω", "Ω", "\ud800", "\udc00", "\ud83d", "ab12", "12ab", "v2", "CAFÉ", "日本語", "한국어", "Ⅻ", "ⅻ",
	...NOT_WHITESPACE,
];
const CWDS = [CWD, "/home/ÜSER/Proj ΣΑΣ", "/w/deploy-tools", "/srv/a_b/c.d:e", "C:\\Users\\İ", "/tmp/x\u00a0y", "/p/😀/Σ"];

const J = (v) => JSON.stringify(v);

/** A random text: words, odd characters and whitespace of every kind. */
function randomText(rng, words) {
	const parts = [];
	for (let i = 0; i < words; i++) {
		const w = rng.bool(0.25) ? rng.pick(ODD) : rng.pick(WORDS);
		parts.push(rng.bool(0.2) ? w.toUpperCase() : rng.bool(0.1) ? w[0].toUpperCase() + w.slice(1) : w);
		parts.push(rng.bool(0.8) ? " " : rng.bool(0.3) ? "" : rng.pick(WHITESPACE).repeat(1 + rng.int(2)));
	}
	return parts.join("");
}

function randomId(rng) {
	const hex = () => rng.int(16).toString(16);
	let id = Array.from({ length: 32 }, hex).join("");
	id = `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
	return rng.bool(0.2) ? id.toUpperCase() : id;
}

const BASE = Date.UTC(2024, 4, 1);

/** One session file's lines; `time` picks its last activity (few values: ties of modified). */
function randomSession(rng, { id, cwd, nanTime = false }) {
	const ts = (k) => new Date(BASE + k * 60_000).toISOString();
	const lines = [J({ type: "session", version: 3, id, timestamp: ts(0), cwd })];
	const messages = rng.int(5);
	for (let m = 0; m < messages; m++) {
		const role = rng.bool() ? "user" : "assistant";
		const text = randomText(rng, 1 + rng.int(30));
		const time = nanTime && m === messages - 1 ? 1e300 : BASE + rng.int(6) * 3_600_000;
		const content = role === "user" && rng.bool() ? text : [{ type: "text", text }, ...(rng.bool(0.3) ? [{ type: "text", text: rng.pick(ODD) }] : [])];
		lines.push(J({ type: "message", id: `m${m}`, parentId: null, timestamp: ts(m + 1), message: { role, content, timestamp: time } }));
	}
	if (rng.bool(0.5)) {
		const name = rng.bool(0.1) ? rng.pick(WHITESPACE) : randomText(rng, 1 + rng.int(4));
		lines.push(J({ type: "session_info", id: "n", parentId: null, timestamp: ts(9), name }));
	}
	return `${lines.join("\n")}\n`;
}

/** A folder of `count` random sessions; returns the sessions' ids, names and cwds for queries. */
function writeCorpus(rng, dir, count, { nanTimes = 0, prefix = "2024-05-01T00-00-00" } = {}) {
	fs.mkdirSync(dir, { recursive: true });
	const facts = [];
	for (let i = 0; i < count; i++) {
		const id = randomId(rng);
		const cwd = rng.bool(0.6) ? CWD : rng.pick(CWDS);
		const file = path.join(dir, `${prefix}-${String(i).padStart(3, "0")}Z_${id}.jsonl`);
		const data = randomSession(rng, { id, cwd, nanTime: i < nanTimes });
		fs.writeFileSync(file, data);
		const t = new Date(BASE + rng.int(4) * 1000);
		fs.utimesSync(file, t, t);
		const texts = data
			.trim()
			.split("\n")
			.map((l) => JSON.parse(l))
			.flatMap((e) => (e.type === "session_info" ? [e.name] : typeof e.message?.content === "string" ? [e.message.content] : (e.message?.content ?? []).map((b) => b.text)));
		facts.push({ id, cwd, texts, file });
	}
	return facts;
}

/** Random whitespace: one kind, or a run of several. */
const someSpace = (rng) => (rng.bool(0.6) ? " " : Array.from({ length: 1 + rng.int(3) }, () => rng.pick(WHITESPACE)).join(""));

const REGEXES = [
	"foo.*bar", "(?<=ab)c", "(?<!e)rror", "(\\w)\\1", "(?<n>s)\\k<n>", "\\bdeploy\\b", "^\\s*$", "ς", "Σ", "σ", "İ", "ß",
	"\\u{1F600}", "\\uD83D", "[α-ω]{3}", "\\p{L}", "p{L}", "[^\\x00-\\x7f]", "e\\u0301", ".{0,3}ß", "session|tool", "^",
	"(", "[", "a{2,1}", "(?<=", "\\", "*", "re:", "K", "k",
];

/** A random query about the corpus. */
function randomQuery(rng, facts) {
	const f = rng.pick(facts);
	const texts = f.texts.length ? f.texts : WORDS;
	const slice = (s, max) => {
		const start = rng.int(Math.max(1, s.length));
		return s.slice(start, start + 1 + rng.int(max));
	};
	const caseOf = (s) => (rng.bool(0.3) ? s.toUpperCase() : rng.bool(0.2) ? s.toLowerCase() : s);
	const subsequence = (s) => [...s].filter(() => rng.bool(0.4)).join("");
	const token = () =>
		rng.weighted([
			[5, () => caseOf(rng.pick(WORDS))],
			[3, () => caseOf(rng.pick(ODD))],
			[3, () => slice(rng.pick(texts), 12)],
			[2, () => caseOf(f.id.slice(0, 1 + rng.int(12)))],
			[2, () => caseOf(slice(f.cwd, 8))],
			[2, () => subsequence(f.cwd) || "x"],
			[2, () => subsequence(rng.pick(WORDS))],
			[1, () => rng.pick(["ab12", "12ab", "v2", "2v", "abc123", "123abc", "a1b"])],
			[1, () => `${rng.pick(WORDS)}${rng.int(100)}`],
		])();
	const asText = (t) => (typeof t === "string" ? t : rng.pick(WORDS));
	return rng.weighted([
		[6, () => Array.from({ length: 1 + rng.int(3) }, () => asText(token())).join(someSpace(rng))],
		[3, () => `"${Array.from({ length: 1 + rng.int(3) }, () => asText(token())).join(someSpace(rng))}"${rng.bool(0.5) ? ` ${asText(token())}` : ""}`],
		[2, () => `re:${rng.bool(0.2) ? " " : ""}${rng.pick(REGEXES)}`],
		[1, () => rng.pick(['foo "bar', '"', '""', '" "', 'a"b"c', '"unclosed phrase', "  ", "", "re:", "re:   ", ' "" x'])],
		[1, () => `${someSpace(rng)}${asText(token())}${someSpace(rng)}`],
	])();
}

/** A SessionInfo as comparable data (dates as their times; NaN stays NaN). */
const render = (s) => ({ ...s, created: s.created.getTime(), modified: s.modified.getTime() });

/** What the reference gives (or throws) for one query. */
function referenceSearch(sessions, query, sort, nameFilter) {
	try {
		return { paths: oracle.filterAndSortSessions(sessions, query, sort, nameFilter).map((s) => s.path) };
	} catch (error) {
		return { thrown: `${error.constructor.name}: ${error.message}` };
	}
}

function oursSearch(run) {
	try {
		return { paths: run().map((s) => s.path) };
	} catch (error) {
		return { thrown: `${error.constructor.name}: ${error.message}` };
	}
}

const describe = (q) => JSON.stringify(q);

/** Compares a query on both sides, with its scores (matchSession) too. */
function compareQuery(search, refSessions, query, sort, nameFilter, seedNote) {
	const expected = referenceSearch(refSessions, query, sort, nameFilter);
	const got = oursSearch(() => search.search(query, sort, nameFilter));
	assert.deepEqual(got, expected, `${seedNote}: query ${describe(query)} sort ${sort} nameFilter ${nameFilter}`);
	const parsed = oracle.parseSearchQuery(query);
	if (parsed.mode === "tokens" && query.trim() && expected.paths) {
		const scored = search[SCORES](query, nameFilter);
		const byPath = new Map(refSessions.map((s) => [s.path, s]));
		const want = [];
		for (const s of refSessions) {
			if (nameFilter === "named" && !oracle.hasSessionName(s)) continue;
			const m = oracle.matchSession(s, parsed);
			if (m.matches) want.push([s.path, m.score]);
		}
		const have = scored.sessions.map((s, k) => [s.path, scored.scores[k]]);
		assert.deepEqual(have, want, `${seedNote}: scores of ${describe(query)}`);
		assert.ok(have.every(([p]) => byPath.has(p)));
	}
}

test("V8's toLowerCase and whitespace collapsing on every code point, both text paths", () => {
	const points = [];
	for (let cp = 0; cp <= 0x10ffff; cp++) points.push(cp);
	for (const wtf8 of [false, true]) {
		// Each character alone (spaces between), then each next to sigmas in every position.
		for (let start = 0; start < points.length; start += 8192) {
			const chunk = points.slice(start, start + 8192).map((cp) => String.fromCodePoint(cp));
			const alone = chunk.join(" ");
			assert.equal(binding.searchLowercaseForTest(alone, wtf8, false), alone.toLowerCase(), `alone from U+${start.toString(16)}`);
			const sigmas = chunk.map((c) => `A${c}Σ Σ${c}A AΣ${c}B ${c}Σ${c} Α${c}${c}ΣΒ`).join(" ");
			assert.equal(binding.searchLowercaseForTest(sigmas, wtf8, false), sigmas.toLowerCase(), `sigmas from U+${start.toString(16)}`);
			const glued = chunk.join("");
			assert.equal(binding.searchLowercaseForTest(glued, wtf8, false), glued.toLowerCase(), `glued from U+${start.toString(16)}`);
			const spaced = chunk.map((c, k) => (k % 3 ? c : WHITESPACE[k % WHITESPACE.length])).join("");
			const collapsed = spaced.toLowerCase().replace(/\s+/g, " ").trim();
			assert.equal(binding.searchLowercaseForTest(spaced, wtf8, true), collapsed, `collapse from U+${start.toString(16)}`);
		}
	}
	// Lone surrogates, alone and next to sigmas.
	for (const s of ["A\ud800Σ", "AΣ\ud800", "\udc00Σ", "Σ\ud83d", "\ud83d\ude00Σ", "A\u0301Σ\udfff x", "\ud800\udc00\ud800"]) {
		for (const wtf8 of [false, true]) assert.equal(binding.searchLowercaseForTest(s, wtf8, false), s.toLowerCase(), J(s));
	}
});

test("searchSessions and SessionSearch give filterAndSortSessions over the reference's listing (seeded)", async () => {
	const rng = new Rng(SEED);
	const root = tempDir("search");
	try {
		for (let corpus = 0; corpus < 4; corpus++) {
			const dir = path.join(root, `c${corpus}`);
			const facts = writeCorpus(rng, dir, 20 + rng.int(40), { nanTimes: corpus === 3 ? 3 : 0 });
			const refSessions = await reference.SessionManager.listAll(dir);
			const search = await SessionSearch.open({ sessionDir: dir });
			assert.deepEqual(search.sessions.map(render), refSessions.map(render), `seed ${SEED} corpus ${corpus}: listing`);
			for (let q = 0; q < 250; q++) {
				const query = randomQuery(rng, facts);
				compareQuery(search, refSessions, query, rng.pick(SORTS), rng.pick(FILTERS), `seed ${SEED} corpus ${corpus} #${q}`);
			}
			// One-shot, with a cwd (list) and without (listAll); results are SessionInfos like the listing's.
			for (let q = 0; q < 6; q++) {
				const query = randomQuery(rng, facts);
				const sort = rng.pick(SORTS);
				const nameFilter = rng.pick(FILTERS);
				const got = await searchSessions(query, { sessionDir: dir, sort, nameFilter });
				assert.deepEqual(got.map(render), oracle.filterAndSortSessions(refSessions, query, sort, nameFilter).map(render), `seed ${SEED}: one-shot ${describe(query)}`);
				const listed = await reference.SessionManager.list(CWD, dir);
				const inCwd = await searchSessions(query, { cwd: CWD, sessionDir: dir, sort, nameFilter });
				assert.deepEqual(inCwd.map(render), oracle.filterAndSortSessions(listed, query, sort, nameFilter).map(render), `seed ${SEED}: one-shot in cwd ${describe(query)}`);
			}
			search.close();
			assert.throws(() => search.search("x"), /closed/);
		}
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});

test("listSessions: the reference's list(cwd, dir) or listAll(dir), from options; allMessagesText: false leaves only that field out", async () => {
	const rng = new Rng(SEED);
	const root = tempDir("list-sessions");
	const withoutText = ({ allMessagesText, ...rest }) => rest;
	try {
		const dir = path.join(root, "c");
		const facts = writeCorpus(rng, dir, 20 + rng.int(20), {});
		void facts;
		for (const [options, ref] of [
			[{ sessionDir: dir }, () => reference.SessionManager.listAll(dir)],
			[{ cwd: CWD, sessionDir: dir }, () => reference.SessionManager.list(CWD, dir)],
		]) {
			const expected = await ref();
			const where = `seed ${SEED} ${options.cwd ? "list" : "listAll"}`;
			assert.deepEqual((await listSessions(options)).map(render), expected.map(render), where);
			const partials = [];
			const textless = await listSessions({ ...options, allMessagesText: false, onProgress: (_l, _t, partial) => partial && partials.push(...partial) });
			assert.deepEqual(textless, expected.map(withoutText), `${where}: without texts`);
			assert.ok(textless.every((info) => !("allMessagesText" in info)), `${where}: no allMessagesText key`);
			assert.ok(partials.length > 0 && partials.every((info) => !("allMessagesText" in info)), `${where}: progress lists without texts`);
			const found = await searchSessions("", { ...options, sort: "recent", allMessagesText: false });
			assert.ok(found.length > 0 && found.every((info) => !("allMessagesText" in info)), `${where}: search without texts`);
		}
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
	await assert.rejects(listSessions({ allMessagesText: "no" }), /allMessagesText must be a boolean/);
	await assert.rejects(listSessions({ cwd: 3 }), /cwd must be a string/);
	await assert.rejects(listSessions(null), /options must be an object/);
});

test("typing a query a key at a time, and deleting back, gives the reference's results at every key (seeded)", async () => {
	// Each search goes on from what the keystrokes before it found (the
	// first occurrence of a word's prefix and the bytes after it).
	const rng = new Rng(SEED ^ 0x7e75);
	const root = tempDir("search-keys");
	try {
		const facts = writeCorpus(rng, root, 40 + rng.int(30));
		const refSessions = await reference.SessionManager.listAll(root);
		const search = await SessionSearch.open({ sessionDir: root });
		for (let q = 0; q < 40; q++) {
			const sort = rng.pick(SORTS);
			const nameFilter = rng.pick(FILTERS);
			const full = rng.bool(0.3) ? `${randomQuery(rng, facts)} ${randomQuery(rng, facts)}` : randomQuery(rng, facts);
			const keys = [...full];
			let typed = "";
			for (let k = 0; k < keys.length; k++) {
				typed += keys[k];
				compareQuery(search, refSessions, typed, sort, nameFilter, `seed ${SEED} keys #${q} at ${k}`);
				if (rng.bool(0.1)) {
					// Backspace a few keys (UTF-16 units: halves of pairs too), then type on.
					for (let b = 1 + rng.int(3); b > 0 && typed; b--) {
						typed = typed.slice(0, -1);
						compareQuery(search, refSessions, typed, sort, nameFilter, `seed ${SEED} keys #${q} back at ${k}`);
					}
				}
			}
		}
		search.close();
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});

test("SessionSearch.refresh picks up appended, new and deleted files (seeded)", async () => {
	const rng = new Rng(SEED ^ 0x5eed);
	const root = tempDir("search-refresh");
	try {
		const facts = writeCorpus(rng, root, 30);
		const search = await SessionSearch.open({ sessionDir: root });
		for (let round = 0; round < 6; round++) {
			// Append to some files (whole lines, and once a cut line finished later), add and delete some.
			for (const f of facts.filter(() => rng.bool(0.3))) {
				if (!fs.existsSync(f.file)) continue;
				const text = randomText(rng, 1 + rng.int(10));
				const line = J({ type: "message", id: `x${round}`, parentId: null, timestamp: new Date(BASE + 7_200_000 * (round + 1)).toISOString(), message: { role: "user", content: text, timestamp: BASE + round } });
				fs.appendFileSync(f.file, `${line}\n`);
				f.texts.push(text);
				if (rng.bool(0.3)) fs.appendFileSync(f.file, J({ type: "session_info", id: "r", parentId: null, timestamp: "2024-05-01T00:00:00.000Z", name: `renamed ${round} ${rng.pick(ODD)}` }) + "\n");
			}
			if (rng.bool(0.5)) fs.rmSync(rng.pick(facts).file, { force: true });
			facts.push(...writeCorpus(rng, root, 1 + rng.int(2), { prefix: `2024-06-0${round}` }));
			// Before the refresh the search still answers for what it listed.
			assert.ok(search.sessions.length > 0);
			await search.refresh();
			const refSessions = await reference.SessionManager.listAll(root);
			assert.deepEqual(search.sessions.map(render), refSessions.map(render), `seed ${SEED}: round ${round}`);
				for (let q = 0; q < 60; q++) {
				compareQuery(search, refSessions, randomQuery(rng, facts.filter((f) => fs.existsSync(f.file))), rng.pick(SORTS), rng.pick(FILTERS), `seed ${SEED} refresh ${round} #${q}`);
			}
		}
		search.close();
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});

test("texts the listing cache does not hold go over as strings and search the same (seeded)", async () => {
	const rng = new Rng(SEED ^ 0xfa11);
	const root = tempDir("search-strings");
	try {
		const facts = writeCorpus(rng, root, 40);
		const refSessions = await reference.SessionManager.listAll(root);
		// Token 0 names no version: every text comes from the reference's own strings.
		const index = new binding.SessionSearchIndex(true);
		const tokens = new Float64Array(refSessions.length);
		const unheld = index.unheld(tokens);
		assert.equal(unheld.length, refSessions.length);
		const missing = index.setSessions(
			Array.from(unheld, (i) => refSessions[i].path),
			unheld,
			tokens,
			Float64Array.from(refSessions, (s) => s.modified.getTime()),
		);
		assert.equal(missing.length, refSessions.length);
		for (const i of missing) {
			const s = refSessions[i];
			index.setSessionText(i, s.name, s.id, s.cwd, s.allMessagesText);
		}
		let compared = 0;
		for (let q = 0; q < 300; q++) {
			const query = randomQuery(rng, facts);
			const sort = rng.pick(SORTS);
			const nameFilter = rng.pick(FILTERS);
			const result = index.search(query, sort === "recent", nameFilter === "named", false);
			if (result.regex || result.scores) continue;
			const expected = oracle.filterAndSortSessions(refSessions, query, sort, nameFilter).map((s) => s.path);
			assert.deepEqual(Array.from(result.indices, (i) => refSessions[i].path), expected, `seed ${SEED}: strings #${q} ${describe(query)}`);
			compared++;
		}
		assert.ok(compared > 100);
		index.close();
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});

test("a search knows each session's file version by the info object its listing handed out", async () => {
	const { listingTokens } = require(path.join(REPO_ROOT, "lib", "listing.js"));
	const rng = new Rng(SEED ^ 0x70c3);
	const root = tempDir("search-tokens");
	try {
		const [a, b] = ["a", "b"].map((sub) => path.join(root, sub));
		writeCorpus(rng, a, 12);
		writeCorpus(rng, b, 12);
		const olderA = await oursIndex.SessionManager.listAll(a);
		const infosA = await oursIndex.SessionManager.listAll(a);
		const infosB = await oursIndex.SessionManager.listAll(b);
		const copy = { ...infosA[0] };
		// The folders alternate, so that each lookup after the first switches listing.
		const mixed = infosA.flatMap((info, i) => [info, infosB[i]]);
		const tokens = Array.from(listingTokens([...mixed, olderA[0], copy, {}, null]));
		const handed = tokens.slice(0, mixed.length);
		assert.ok(handed.every((t) => t > 0), "every info of the last listings has its token");
		assert.equal(new Set(handed).size, handed.length, "one version each");
		// An earlier listing's info and a copy hand over their own texts instead.
		assert.deepEqual(tokens.slice(mixed.length), [0, 0, 0, 0]);
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});

test("ids that are not strings throw the reference's TypeError; regexes test them as strings", async () => {
	const root = tempDir("search-ids");
	try {
		const ids = [42, null, undefined, { a: 1 }, [1, 2], true, "Plain-ID"];
		ids.forEach((id, i) => {
			const header = { type: "session", version: 3, timestamp: new Date(BASE + i).toISOString(), cwd: CWD };
			if (id !== undefined) header.id = id;
			const lines = [J(header), J({ type: "message", id: "m", parentId: null, timestamp: new Date(BASE + i * 1000).toISOString(), message: { role: "user", content: `text ${i} shared`, timestamp: BASE + i * 1000 } })];
			if (i % 2) lines.push(J({ type: "session_info", id: "n", parentId: null, timestamp: new Date(BASE).toISOString(), name: `name ${i}` }));
			fs.writeFileSync(path.join(root, `s${i}.jsonl`), `${lines.join("\n")}\n`);
		});
		const refSessions = await reference.SessionManager.listAll(root);
		const search = await SessionSearch.open({ sessionDir: root });
		const queries = ["shared", "name", "name 1", '"text 3"', "zzz", "re:42", "re:null", "re:undefined", "re:object", "re:1,2", "re:true", "re:plain", "", "named"];
		for (const query of queries) {
			for (const sort of SORTS) for (const nameFilter of FILTERS) compareQuery(search, refSessions, query, sort, nameFilter, "ids");
		}
		// At least one of them throws as the reference does.
		assert.match(oursSearch(() => search.search("shared")).thrown ?? "", /^TypeError: /);
		search.close();
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
});

test("bad arguments get clear errors", async () => {
	await assert.rejects(searchSessions(5), /query must be a string/);
	await assert.rejects(searchSessions("x", { sort: "fuzzy" }), /sort must be one of/);
	await assert.rejects(searchSessions("x", { nameFilter: "some" }), /nameFilter must be one of/);
	await assert.rejects(searchSessions("x", { cwd: 3 }), /cwd must be a string/);
	await assert.rejects(searchSessions("x", { allMessagesText: 0 }), /allMessagesText must be a boolean/);
	assert.throws(() => new SessionSearch(), /SessionSearch.open/);
	const root = tempDir("search-args");
	try {
		const search = await SessionSearch.open({ sessionDir: root });
		assert.deepEqual(search.search("anything"), []);
		assert.throws(() => search.search(null), /query must be a string/);
		search.close();
		const controller = new AbortController();
		controller.abort(new Error("stop"));
		await assert.rejects(searchSessions("x", { sessionDir: root, signal: controller.signal }), /stop/);
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
	assert.equal(typeof ours.SessionManager, "function");
});
