// Session folders for the listing tests (__test__/listing.test.mjs): odd files, generated
// folders, and the comparison helpers that look at a listing as a whole (progress calls,
// results by path).
//
// Instants in the data are fixed (2024) and file modification times are set explicitly
// (2023), both far outside the normalizer's "now" window, so they are compared verbatim.
// Nothing here looks like an 8-hex id or a UUID.
import fs from "node:fs";
import path from "node:path";

export const MiB = 1024 * 1024;
const J = (v) => JSON.stringify(v);

const BASE_MS = Date.UTC(2024, 4, 1, 10, 0, 0); // 2024-05-01T10:00:00.000Z
/** The i-th fixed instant, as epoch milliseconds and as an ISO string. */
export const MS = (i) => BASE_MS + i * 60_000;
export const ISO = (i) => new Date(MS(i)).toISOString();
/** A file modification time in seconds (2023), distinct per index; frac adds sub-second digits. */
export const MTIME = (i, frac = 0) => 1_680_000_000 + i * 37 + frac;

export const headerLine = (id, extra = {}) => J({ type: "session", version: 3, id, timestamp: ISO(0), ...extra });
/** A message entry whose `message` is the given JSON text. */
export const messageLinePrefix = (i = 1) => `{"type":"message","id":"e${i}","parentId":null,"timestamp":"${ISO(i)}","message":`;
export const rawMessageLine = (messageJson, i = 1) => `${messageLinePrefix(i)}${messageJson}}`;
export const userLine = (text, i = 1) =>
	J({ type: "message", id: `u${i}`, parentId: null, timestamp: ISO(i), message: { role: "user", content: text, timestamp: MS(i) } });
export const assistantLine = (text, i = 2) =>
	J({
		type: "message",
		id: `a${i}`,
		parentId: null,
		timestamp: ISO(i),
		message: { role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m", timestamp: MS(i) },
	});
/** A session_info entry; `name` undefined leaves the field out. */
export const infoLine = (name, i = 3) => J({ type: "session_info", id: `n${i}`, parentId: null, timestamp: ISO(i), name });
export const rawInfoLine = (nameJson, i = 3) =>
	`{"type":"session_info","id":"n${i}","parentId":null,"timestamp":"${ISO(i)}","name":${nameJson}}`;
export const lines = (...ls) => ls.map((l) => `${l}\n`).join("");
export const buf = (...parts) => Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p, "utf8"))));
const bytes = (...b) => Buffer.from(b);

/** A header line of exactly `length` bytes (without its newline). */
export function headerOfLength(length, id, cwd) {
	const base = J({ type: "session", version: 3, id, timestamp: ISO(0), cwd, pad: "" });
	const pad = length - Buffer.byteLength(base);
	if (pad < 0) throw new Error(`header of ${length} bytes is too short for its fields`);
	return J({ type: "session", version: 3, id, timestamp: ISO(0), cwd, pad: "p".repeat(pad) });
}

/** A simple valid session: header, a user and an assistant message, optional name. */
export function simpleSession(id, cwd, { i = 1, text = `question of ${id}`, name } = {}) {
	const ls = [headerLine(id, { cwd, timestamp: ISO(i) }), userLine(text, i + 1), assistantLine(`answer of ${id}`, i + 2)];
	if (name !== undefined) ls.push(infoLine(name, i + 3));
	return lines(...ls);
}

/**
 * The odd session folder. Each case: { name, data?, kind?, target?, mtime?, ids? }
 *   kind: "file" (default), "dir", "symlink" (to `target`, a file written to the external
 *   folder), "dangling" (symlink to nothing), "unreadable" (file, then chmod 000);
 *   mtime: seconds (every file gets a distinct one; a few carry sub-millisecond digits);
 *   ids: ids that findById should be asked for (the case's header id, if it has one).
 * `cwd` is the side's project dir: most headers carry it so that list(cwd, dir) keeps them.
 */
export function oddCases(cwd) {
	const cases = [];
	const add = (name, data, extra = {}) => cases.push({ name, data, ...extra });
	const H = (id, extra = {}) => headerLine(id, { cwd, ...extra });
	const um = (text, i = 1) => userLine(text, i);

	// --- plain sessions -------------------------------------------------------------------
	add("2024-05-01T10-00-00-000Z_good.jsonl", simpleSession("good-one", cwd, { name: "  Named session  " }), { ids: ["good-one"] });
	add("good-two.jsonl", simpleSession("good-two", cwd, { i: 5 }), { ids: ["good-two"] });
	add("other-cwd.jsonl", simpleSession("other-cwd", "/somewhere/else", { i: 6 }), { ids: ["other-cwd"] });
	add("parent-string.jsonl", lines(H("parent-string", { parentSession: "/some/parent.jsonl" }), um("child")), { ids: ["parent-string"] });
	add("parent-object.jsonl", lines(H("parent-object", { parentSession: { path: "/p", n: 1 } }), um("child")), { ids: ["parent-object"] });
	add("parent-number.jsonl", lines(H("parent-number", { parentSession: 42 }), um("child")));
	add("parent-null.jsonl", lines(H("parent-null", { parentSession: null }), um("child")));
	add("no-final-newline.jsonl", lines(H("no-final-newline"), um("one")) + um("last line without newline", 2), { ids: ["no-final-newline"] });
	add("second-header.jsonl", lines(H("second-header"), um("one"), headerLine("another-header", { cwd }), um("two", 2)), { ids: ["second-header", "another-header"] });
	add("v1-header.jsonl", lines(J({ type: "session", id: "v1-header", timestamp: ISO(2), cwd, provider: "p", modelId: "m" }), J({ type: "message", timestamp: ISO(3), message: { role: "user", content: "v1 question", timestamp: MS(3) } })));

	// --- names ----------------------------------------------------------------------------
	add("name-clear-empty.jsonl", lines(H("name-clear-empty"), infoLine("First"), infoLine("", 4)));
	add("name-clear-missing.jsonl", lines(H("name-clear-missing"), infoLine("First"), infoLine(undefined, 4)));
	add("name-clear-null.jsonl", lines(H("name-clear-null"), infoLine("First"), rawInfoLine("null", 4)));
	add("name-latest.jsonl", lines(H("name-latest"), infoLine("A"), infoLine("B", 4), infoLine("  C  ", 5)));
	add("name-cleared-then-set.jsonl", lines(H("name-cleared-then-set"), infoLine("A"), infoLine("   ", 4), infoLine("again", 5)));
	add("name-js-whitespace.jsonl", lines(H("name-js-whitespace"), infoLine("First"), infoLine(" \t\n\u000b\f\r\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000\ufeff ", 4)));
	add("name-nel.jsonl", lines(H("name-nel"), infoLine("\u0085 next line \u0085")));
	add("name-not-whitespace.jsonl", lines(H("name-not-whitespace"), infoLine("\u200b zero width \u180e\u001c")));
	add("name-bom.jsonl", lines(H("name-bom"), infoLine("\ufeffbom\ufeff")));
	add("name-escaped-whitespace.jsonl", lines(H("name-escaped-whitespace"), infoLine("First"), rawInfoLine('"\\u00a0\\u3000\\t"', 4)));
	add("name-lone-surrogates.jsonl", lines(H("name-lone-surrogates"), rawInfoLine('"  \\ud800 lone \\udc00  "')));
	add("name-surrogate-at-edges.jsonl", lines(H("name-surrogate-at-edges"), rawInfoLine('"\\u3000\\udbff\\u3000"')));
	add("name-number.jsonl", lines(H("name-number"), um("kept?"), rawInfoLine("42", 4)), { ids: ["name-number"] });
	add("name-zero.jsonl", lines(H("name-zero"), rawInfoLine("0")));
	add("name-false.jsonl", lines(H("name-false"), rawInfoLine("false")));
	add("name-object.jsonl", lines(H("name-object"), rawInfoLine('{"text":"x"}')));
	add("name-array.jsonl", lines(H("name-array"), rawInfoLine('["x"]')));
	add("info-before-header.jsonl", lines(infoLine("early"), H("info-before-header")), { ids: ["info-before-header"] });

	// --- message entries ------------------------------------------------------------------
	add("msg-null.jsonl", lines(H("msg-null"), um("before"), rawMessageLine("null", 2)), { ids: ["msg-null"] });
	add("msg-missing.jsonl", lines(H("msg-missing"), um("before"), `{"type":"message","id":"e2","parentId":null,"timestamp":"${ISO(2)}"}`));
	add("msg-string.jsonl", lines(H("msg-string"), rawMessageLine('"just a string"'), um("after", 2)));
	add("msg-number.jsonl", lines(H("msg-number"), rawMessageLine("5"), rawMessageLine("0", 2), rawMessageLine("false", 3)));
	add("msg-array.jsonl", lines(H("msg-array"), rawMessageLine('[{"role":"user","content":"in array"}]')));
	add("msg-null-in-custom-entry.jsonl", lines(H("msg-null-in-custom-entry"), `{"type":"custom","id":"c1","parentId":null,"message":null}`, um("fine", 2)));
	add("content-null.jsonl", lines(H("content-null"), rawMessageLine('{"role":"user","content":null}')));
	add("content-object.jsonl", lines(H("content-object"), rawMessageLine('{"role":"assistant","content":{"type":"text","text":"obj"}}')));
	add("content-number.jsonl", lines(H("content-number"), rawMessageLine('{"role":"user","content":7}')));
	add("content-true.jsonl", lines(H("content-true"), rawMessageLine('{"role":"user","content":true}')));
	add("content-missing.jsonl", lines(H("content-missing"), rawMessageLine('{"role":"user"}'), um("after", 2)));
	add("content-null-toolresult.jsonl", lines(H("content-null-toolresult"), rawMessageLine('{"role":"toolResult","content":null}'), rawMessageLine('{"role":"system","content":[null]}', 2), um("fine", 3)));
	add("content-null-block.jsonl", lines(H("content-null-block"), rawMessageLine('{"role":"user","content":[{"type":"text","text":"a"},null]}')));
	add(
		"content-odd-blocks.jsonl",
		lines(
			H("content-odd-blocks"),
			rawMessageLine(
				'{"role":"user","content":["text",5,true,[1],{"type":"image","text":"no"},{"type":"text","text":1e21},{"type":"text","text":1e-7},{"type":"text","text":-0},{"type":"text","text":0.1},{"type":"text","text":123456789012345680000},{"type":"text","text":5e-324},{"type":"text","text":1.7976931348623157e308},{"type":"text","text":-1.5e-10}]}',
			),
			rawMessageLine(
				'{"role":"assistant","content":[{"type":"text","text":null},{"type":"text"},{"type":"text","text":{"a":1}},{"type":"text","text":[1,[2,null,[true,false]],"x",{},[]]},{"type":"text","text":true},{"type":"text","text":""},{"type":"TEXT","text":"case"},{"type":"image","type":"text","text":"dup type, last wins"},{"type":"text","type":"image","text":"dup type, not text"},{"type":"text","text":"first","text":"second text wins"}]}',
				2,
			),
		),
	);
	add("content-empty.jsonl", lines(H("content-empty"), rawMessageLine('{"role":"user","content":""}'), rawMessageLine('{"role":"user","content":[]}', 2), rawMessageLine('{"role":"assistant","content":[{"type":"image"}]}', 3)));
	add("content-two-null-texts.jsonl", lines(H("content-two-null-texts"), rawMessageLine('{"role":"user","content":[{"type":"text","text":null},{"type":"text","text":null}]}'), um("second", 2)));
	add("content-assistant-first.jsonl", lines(H("content-assistant-first"), assistantLine("assistant speaks first", 1), um("then the user", 2)));
	add(
		"role-odd.jsonl",
		lines(
			H("role-odd"),
			rawMessageLine('{"role":"toolResult","content":"tool text"}'),
			rawMessageLine('{"role":"system","content":"system text"}', 2),
			rawMessageLine('{"role":5,"content":"numeric role"}', 3),
			rawMessageLine('{"role":"User","content":"capital role"}', 4),
			rawMessageLine('{"content":"no role"}', 5),
			rawMessageLine('{"role":null,"content":"null role"}', 6),
			rawMessageLine('{"role":"custom","content":[null]}', 7),
		),
	);
	add(
		"dup-keys.jsonl",
		lines(
			H("dup-keys"),
			rawMessageLine('{"role":"user","content":null,"content":"content fixed by a later key"}'),
			`{"type":"message","id":"e2","message":null,"message":{"role":"assistant","content":"message fixed by a later key"}}`,
			`{"type":"message","type":"custom","id":"e3","message":null}`,
			`{"type":"custom","type":"message","id":"e4","message":{"role":"assistant","role":"user","content":"role user wins"}}`,
			`{"type":"message","id":"e5","message":{"role":"user","role":5,"content":"role number wins"}}`,
		),
	);
	add(
		"escaped-keys.jsonl",
		lines(
			`{"typ\\u0065":"sess\\u0069on","\\u0069d":"escaped-keys","cwd":${J(cwd)},"timestamp":"${ISO(0)}"}`,
			`{"typ\\u0065":"m\\u0065ssage","m\\u0065ssage":{"r\\u006fle":"\\u0075ser","c\\u006fntent":"escaped keys and values"}}`,
			`{"type":"session_info","n\\u0061me":"escaped name key"}`,
		),
		{ ids: ["escaped-keys"] },
	);

	// --- timestamps -----------------------------------------------------------------------
	const msgTs = (label, tsJson) => add(`ts-msg-${label}.jsonl`, lines(H(`ts-msg-${label}`), rawMessageLine(`{"role":"user","content":"m","timestamp":${tsJson}}`)));
	msgTs("number", String(MS(30)));
	msgTs("float", `${MS(31)}.7`);
	msgTs("huge", "1e300");
	msgTs("overflow", "1e400");
	msgTs("negative", "-1000");
	msgTs("zero", "0");
	msgTs("neg-zero", "-0");
	msgTs("max-date", "8640000000000000");
	msgTs("over-max-date", "8640000000000001");
	msgTs("exponent", "1.7145576e12");
	msgTs("string", `"${ISO(32)}"`);
	msgTs("null", "null");
	add("ts-msg-max-of-several.jsonl", lines(H("ts-msg-max-of-several"), rawMessageLine(`{"role":"user","content":"a","timestamp":${MS(40)}}`), rawMessageLine(`{"role":"assistant","content":"b","timestamp":${MS(35)}}`, 2), rawMessageLine(`{"role":"toolResult","content":"c","timestamp":${MS(50)}}`, 3)));
	const entryTs = (label, tsJson) =>
		add(`ts-entry-${label}.jsonl`, lines(H(`ts-entry-${label}`), `{"type":"message","id":"e1","timestamp":${tsJson},"message":{"role":"user","content":"m"}}`));
	entryTs("iso", `"${ISO(33)}"`);
	entryTs("space-separated", '"2024-01-02 03:04:05"');
	entryTs("rfc1123", '"Tue, 02 Jan 2024 03:04:05 GMT"');
	entryTs("date-only", '"2024-01-02"');
	entryTs("no-millis", '"2024-01-02T03:04:05Z"');
	entryTs("micros", '"2024-01-02T03:04:05.123456Z"');
	entryTs("one-fraction-digit", '"2024-01-02T03:04:05.1Z"');
	entryTs("offset", '"2024-01-02T03:04:05.000+05:30"');
	entryTs("local", '"2024-01-02T03:04:05.000"');
	entryTs("extended-year", '"+002024-01-02T03:04:05.000Z"');
	entryTs("feb-30", '"2024-02-30T00:00:00.000Z"');
	entryTs("feb-29-non-leap", '"2023-02-29T00:00:00.000Z"');
	entryTs("hour-24", '"2024-01-02T24:00:00.000Z"');
	entryTs("second-60", '"2024-01-02T03:04:60.000Z"');
	entryTs("year-zero", '"0000-01-01T00:00:00.000Z"');
	entryTs("before-epoch", '"1969-12-31T23:59:59.999Z"');
	entryTs("lowercase", '"2024-01-02t03:04:05.000z"');
	entryTs("garbage", '"not a date"');
	entryTs("empty", '""');
	entryTs("number", String(MS(34)));
	entryTs("null", "null");
	entryTs("true", "true");
	entryTs("array", "[2024]");
	entryTs("object", "{}");
	entryTs("escaped", '"2024\\u002d01-02T03:04:05.000Z"');
	const headerTs = (label, tsJson, frac) =>
		add(`ts-header-${label}.jsonl`, lines(`{"type":"session","version":3,"id":"ts-header-${label}","cwd":${J(cwd)},"timestamp":${tsJson}}`), { mtimeFrac: frac });
	headerTs("iso", `"${ISO(36)}"`);
	headerTs("number", String(MS(37)), 0.0004);
	headerTs("null", "null", 0.0006);
	headerTs("non-iso", '"May 1, 2024 10:00"');
	headerTs("date-only", '"2024-05-01"');
	headerTs("invalid", '"2024-13-45T99:00:00.000Z"', 0.9996);
	headerTs("garbage", '"yesterday"', 0.0005);
	headerTs("object", "{}", 0.25);
	add("ts-header-missing.jsonl", lines(`{"type":"session","version":3,"id":"ts-header-missing","cwd":${J(cwd)}}`), { mtimeFrac: 0.0006 });
	add("ts-header-missing-old-messages.jsonl", lines(`{"type":"session","id":"ts-header-missing-old-messages","cwd":${J(cwd)}}`, rawMessageLine('{"role":"user","content":"m","timestamp":-5}')), { mtimeFrac: 0.7 });

	// --- where the header is --------------------------------------------------------------
	add("header-second-line.jsonl", buf("\n   \nnot json\nnull\n0\nfalse\n\"\"\n\t\n", lines(H("header-second-line"), um("after a messy start"))), { ids: ["header-second-line"] });
	add("header-after-one.jsonl", lines("1", H("header-after-one"), um("x")), { ids: ["header-after-one"] });
	add("header-after-string.jsonl", lines('"str"', H("header-after-string"), um("x")), { ids: ["header-after-string"] });
	add("header-after-array.jsonl", lines("[]", H("header-after-array"), um("x")), { ids: ["header-after-array"] });
	add("header-after-object.jsonl", lines("{}", H("header-after-object"), um("x")), { ids: ["header-after-object"] });
	add("header-after-invalid.jsonl", lines(`{"type":"session","id":"tab\tinside","cwd":${J(cwd)}}`, `{"type":"session","id":"trailing-comma",}`, `{'type':'session'}`, `{"type":"session","id":"x"} trailing`, H("header-after-invalid"), um("x")), { ids: ["header-after-invalid", "tab\tinside", "trailing-comma"] });
	add("header-trailing-comma.jsonl", lines(`{"type":"session","id":"header-trailing-comma",}`, um("x")), { ids: ["header-trailing-comma"] });
	add("header-bom.jsonl", buf("\ufeff", lines(H("header-bom"), um("x"))), { ids: ["header-bom"] });
	add("header-bom-only.jsonl", buf("\ufeff", lines(H("header-bom-only"))), { ids: ["header-bom-only"] });
	add("header-id-number.jsonl", lines(`{"type":"session","id":5,"cwd":${J(cwd)},"timestamp":"${ISO(0)}"}`, um("x")));
	add("header-id-missing.jsonl", lines(`{"type":"session","cwd":${J(cwd)},"timestamp":"${ISO(0)}"}`, um("x")));
	add("header-id-object.jsonl", lines(`{"type":"session","id":{"k":"v"},"cwd":${J(cwd)},"timestamp":"${ISO(0)}"}`, um("x")));
	add("header-dup-type.jsonl", lines(`{"type":"message","type":"session","id":"header-dup-type","cwd":${J(cwd)}}`, um("x")), { ids: ["header-dup-type"] });
	add("header-dup-id.jsonl", lines(`{"type":"session","id":"first-id","id":"header-dup-id","cwd":${J(cwd)}}`, um("x")), { ids: ["header-dup-id", "first-id"] });
	add("header-proto.jsonl", lines(`{"__proto__":{"type":"session","id":"header-proto"},"cwd":${J(cwd)}}`, um("x")), { ids: ["header-proto"] });
	add("header-number-edges.jsonl", lines(`{"type":"session","id":"header-number-edges","cwd":${J(cwd)},"a":1e999,"b":-0,"c":1E+2,"d":0.5e-400}`, um("x")), { ids: ["header-number-edges"] });
	add("header-bad-numbers.jsonl", lines(`{"type":"session","id":"bad-01","cwd":${J(cwd)},"a":01}`, `{"type":"session","id":"bad-dot","a":.5}`, `{"type":"session","id":"bad-plus","a":+1}`, `{"type":"session","id":"bad-nan","a":NaN}`, H("header-bad-numbers"), um("x")), { ids: ["header-bad-numbers", "bad-01", "bad-dot", "bad-plus", "bad-nan"] });
	add("header-u2028.jsonl", lines(`{"type":"session","id":"u2028\u2028outside"}\u2028`, `{"type":"session","id":"header-u2028\u2028inside","cwd":${J(cwd)}}`, um("x")), { ids: ["header-u2028\u2028inside", "u2028\u2028outside"] });
	add("header-cwd-number.jsonl", lines(`{"type":"session","id":"header-cwd-number","cwd":5,"timestamp":"${ISO(0)}"}`, um("x")), { ids: ["header-cwd-number"] });
	add("header-cwd-empty.jsonl", lines(headerLine("header-cwd-empty", { cwd: "" }), um("x")), { ids: ["header-cwd-empty"] });
	add("header-cwd-relative.jsonl", lines(headerLine("header-cwd-relative", { cwd: "project" }), um("x")), { ids: ["header-cwd-relative"] });
	add("header-cwd-trailing-slash.jsonl", lines(headerLine("header-cwd-trailing-slash", { cwd: `${cwd}/` }), um("x")), { ids: ["header-cwd-trailing-slash"] });
	add("header-cwd-dotdot.jsonl", lines(headerLine("header-cwd-dotdot", { cwd: `${cwd}/sub/..` }), um("x")), { ids: ["header-cwd-dotdot"] });
	add("not-session.jsonl", lines(um("no header"), H("late-header")), { ids: ["late-header"] });

	// --- line breaks ----------------------------------------------------------------------
	add("crlf.jsonl", [H("crlf"), um("one"), assistantLine("two"), infoLine("crlf name")].map((l) => `${l}\r\n`).join(""), { ids: ["crlf"] });
	add("lone-cr.jsonl", buf(`${H("lone-cr")}\n`, `${um("one")}\r${assistantLine("two")}\r\r${infoLine("cr name")}\r`), { ids: ["lone-cr"] });
	add("lone-cr-header.jsonl", `${H("lone-cr-header")}\r${um("one")}\r${um("two", 2)}`, { ids: ["lone-cr-header"] });
	add("lf-cr.jsonl", `${H("lf-cr")}\n\r${um("one")}\n\r\n\r${um("two", 2)}\n\r`, { ids: ["lf-cr"] });
	add("cr-in-string.jsonl", buf(`${H("cr-in-string")}\n`, rawMessageLine('{"role":"user","content":"before\rafter"}'), "\n", um("clean", 2), "\n"));
	{
		// A CR as the last byte of the first 64 KiB read and its LF as the first of the next.
		const head = `${H("crlf-at-64k")}\r\n`;
		const fill = (n) => `${um("x".repeat(n - Buffer.byteLength(um(""))))}`;
		let first = head;
		const target = 65536 - 1; // the CR goes at offset 65535
		first += `${fill(target - Buffer.byteLength(first))}`;
		add("crlf-at-64k.jsonl", buf(first, "\r\n", um("after the boundary", 2), "\r\n"), { ids: ["crlf-at-64k"] });
	}

	// --- encoding -------------------------------------------------------------------------
	const withBytes = (label, raw) =>
		add(`utf8-${label}.jsonl`, buf(`${H(`utf8-${label}`)}\n`, messageLinePrefix(1), '{"role":"user","content":"<', raw, '>"}}\n', um("valid", 2), "\n"));
	withBytes("ff", bytes(0xff, 0xfe));
	withBytes("overlong", bytes(0xc0, 0xa0, 0x41, 0xe0, 0x80, 0xa0));
	withBytes("surrogate-bytes", bytes(0xed, 0xa0, 0x80, 0x41, 0xed, 0xbf, 0xbf));
	withBytes("surrogate-lead-cut", bytes(0xed, 0xa0, 0x41));
	withBytes("truncated", bytes(0xe2, 0x82));
	withBytes("beyond-max", bytes(0xf4, 0x90, 0x80, 0x80));
	withBytes("lone-continuation", bytes(0x80, 0xbf));
	withBytes("truncated-4", bytes(0xf0, 0x9f, 0x98));
	add("utf8-name-overlong-space.jsonl", buf(`${H("utf8-name-overlong-space")}\n`, `{"type":"session_info","name":"`, bytes(0xc0, 0xa0), "overlong", bytes(0xe0, 0x80, 0xa0), '"}\n'));
	add("utf8-name-only-overlong.jsonl", buf(`${H("utf8-name-only-overlong")}\n`, `{"type":"session_info","name":"`, bytes(0xc0, 0xa0, 0xc0, 0xa0), '"}\n'));
	add("utf8-name-surrogate-bytes.jsonl", buf(`${H("utf8-name-surrogate-bytes")}\n`, `{"type":"session_info","name":" `, bytes(0xed, 0xa0, 0x80), ' "}\n'));
	add("utf8-name-invalid-at-edge.jsonl", buf(`${H("utf8-name-invalid-at-edge")}\n`, `{"type":"session_info","name":"`, bytes(0xe3, 0x80), " x ", bytes(0xe3, 0x80), '"}\n'));
	add("utf8-outside-string.jsonl", buf(`${H("utf8-outside-string")}\n`, `{"type":"message","message":{"role":"user","content":"skipped"}}`, bytes(0xff), "\n", um("kept", 2), "\n"));
	add("utf8-in-header.jsonl", buf(`{"type":"session","id":"utf8-in-header","cwd":${J(cwd)},"note":"`, bytes(0xff, 0xed, 0xa0, 0x80), `"}\n`, um("x"), "\n"), { ids: ["utf8-in-header"] });
	{
		// A 4-byte character straddling the 64 KiB boundary of the stream (valid UTF-8).
		const head = `${H("utf8-split-at-64k")}\n`;
		const pre = `${messageLinePrefix(1)}{"role":"user","content":"`;
		const padLen = 65536 - 2 - Buffer.byteLength(head) - Buffer.byteLength(pre);
		add("utf8-split-at-64k.jsonl", buf(head, pre, "y".repeat(padLen), "😀 straddles", '"}}\n'));
	}
	add(
		"surrogates.jsonl",
		lines(
			H("surrogates"),
			rawMessageLine('{"role":"user","content":"lone \\ud800 high"}'),
			rawMessageLine('{"role":"assistant","content":[{"type":"text","text":"\\udc00 low first"},{"type":"text","text":"pair \\ud83d\\ude00 ok"},{"type":"text","text":"ends high \\ud83d"}]}', 2),
			rawMessageLine('{"role":"user","content":"\\ud800\\ud800 two highs, reversed pair \\ude00\\ud83d"}', 3),
			rawInfoLine('"name \\udfff end"', 4),
		),
	);

	// --- sizes ----------------------------------------------------------------------------
	add("big-header.jsonl", lines(H("big-header", { pad: "h".repeat(MiB + MiB / 5) }), um("after a big header")), { ids: ["big-header"] });
	add("big-prefix.jsonl", buf("   \n".repeat((MiB + MiB / 5) / 4), lines(H("big-prefix"), um("after a big prefix"))), { ids: ["big-prefix"] });
	add("hdr-1mib-minus1-nl.jsonl", `${headerOfLength(MiB - 1, "hdr-1mib-minus1-nl", cwd)}\n`, { ids: ["hdr-1mib-minus1-nl"] });
	add("hdr-1mib-no-nl.jsonl", headerOfLength(MiB, "hdr-1mib-no-nl", cwd), { ids: ["hdr-1mib-no-nl"] });
	add("hdr-1mib-nl.jsonl", `${headerOfLength(MiB, "hdr-1mib-nl", cwd)}\n`, { ids: ["hdr-1mib-nl"] });
	add("hdr-1mib-plus1-no-nl.jsonl", headerOfLength(MiB + 1, "hdr-1mib-plus1-no-nl", cwd), { ids: ["hdr-1mib-plus1-no-nl"] });
	add("long-message.jsonl", lines(H("long-message"), um(`long ${"é".repeat(300000)} end`)));
	// Texts from 1 KiB on cross to JavaScript as external strings, Latin-1 where
	// every character fits, else UTF-16: each form, and both sides of 1024 bytes.
	const longText = (label, unit, count) =>
		add(`long-text-${label}.jsonl`, lines(H(`long-text-${label}`), um(`${label} ${unit.repeat(count)}.`), assistantLine(`${unit.repeat(count)} reply`, 2)));
	longText("ascii", "plain text ", 120);
	longText("latin1", "café ÿ ", 200);
	longText("bmp", "→ arrow — ", 150);
	longText("astral", "🙂 smile ", 150);
	longText("mixed", "a é → 🙂 ", 200);
	// First messages of 1022 and 1023 characters, one of them 2 bytes in UTF-8:
	// 1023 and 1024 bytes.
	add("long-text-1023-bytes.jsonl", lines(H("long-text-1023-bytes"), um(`b${"é"}${"x".repeat(1019)}b`)));
	add("long-text-1024-bytes.jsonl", lines(H("long-text-1024-bytes"), um(`b${"é"}${"x".repeat(1020)}b`)));
	add("long-text-lone-surrogate.jsonl", lines(H("long-text-lone-surrogate"), rawMessageLine(`{"role":"user","content":"${"s".repeat(1500)} \\ud800 lone"}`)));

	// --- not sessions, or not files -------------------------------------------------------
	add("empty.jsonl", "");
	add("blank.jsonl", "\n \n\t\n\r\n");
	add("garbage.jsonl", "this is not json\n{also not\n");
	add("binary.jsonl", Buffer.from(Array.from({ length: 1024 }, (_, i) => (i * 7) % 256)));
	add("only-null.jsonl", "null\n0\nfalse\n");
	add("x.jsonl", undefined, { kind: "dir" });
	add("y.jsonl", undefined, { kind: "dangling" });
	add("link.jsonl", undefined, { kind: "symlink", target: "linked-target.jsonl", targetData: simpleSession("linked-target", cwd, { i: 9 }), ids: ["linked-target"] });
	add("link-to-dir.jsonl", undefined, { kind: "symlink-dir" });
	add("unreadable.jsonl", simpleSession("unreadable", cwd, { i: 10 }), { kind: "unreadable", ids: ["unreadable"] });
	add("notes.txt", simpleSession("txt-file", cwd), { ids: ["txt-file"] });
	add("session.json", simpleSession("json-file", cwd));
	add("good.jsonl.bak", simpleSession("bak-file", cwd));
	add("UPPER.JSONL", simpleSession("upper-file", cwd), { ids: ["upper-file"] });
	add(".jsonl", simpleSession("dot-jsonl", cwd, { i: 11 }), { ids: ["dot-jsonl"] });
	add("é-accent.jsonl", simpleSession("accent-name", cwd, { i: 12 }));
	add("日本.jsonl", simpleSession("cjk-name", cwd, { i: 13 }));

	// --- ties on `modified`: the order comes from the file names (localeCompare, descending)
	for (const t of ["a", "B", "_", "é", "e", "10", "9", "Z", "-x", "a b"]) {
		add(`tie-${t}.jsonl`, lines(headerLine(`tie-${t}`, { cwd, timestamp: ISO(100) })));
	}

	cases.forEach((c, i) => {
		c.mtime = MTIME(i, c.mtimeFrac ?? 0);
	});
	return cases;
}

/** Writes cases into dir; symlink targets go to externalDir. Returns { unreadableIsReadable }. */
export function writeCases(dir, cases, externalDir) {
	fs.mkdirSync(dir, { recursive: true });
	fs.mkdirSync(externalDir, { recursive: true });
	let unreadableIsReadable;
	for (const c of cases) {
		const file = path.join(dir, c.name);
		switch (c.kind ?? "file") {
			case "dir":
				fs.mkdirSync(file);
				fs.writeFileSync(path.join(file, "inside.jsonl"), "");
				break;
			case "dangling":
				fs.symlinkSync(path.join(externalDir, "does-not-exist.jsonl"), file);
				break;
			case "symlink": {
				const target = path.join(externalDir, c.target);
				fs.writeFileSync(target, c.targetData);
				fs.utimesSync(target, c.mtime, c.mtime);
				fs.symlinkSync(target, file);
				break;
			}
			case "symlink-dir": {
				const target = path.join(externalDir, "a-directory");
				fs.mkdirSync(target, { recursive: true });
				fs.symlinkSync(target, file);
				break;
			}
			case "unreadable":
				fs.writeFileSync(file, c.data);
				fs.utimesSync(file, c.mtime, c.mtime);
				fs.chmodSync(file, 0o000);
				unreadableIsReadable = canRead(file);
				break;
			default:
				fs.writeFileSync(file, c.data);
				fs.utimesSync(file, c.mtime, c.mtime);
		}
		if (c.kind === "dir" || c.kind === "symlink-dir") fs.utimesSync(c.kind === "dir" ? file : path.join(externalDir, "a-directory"), c.mtime, c.mtime);
	}
	return { unreadableIsReadable };
}

function canRead(file) {
	try {
		fs.closeSync(fs.openSync(file, "r"));
		return true;
	} catch {
		return false;
	}
}

/** The default session dir of cwd under agentDir (the reference's encoding). */
export function defaultSessionDir(agentDir, cwd) {
	return path.join(agentDir, "sessions", `--${path.resolve(cwd).replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
}

// --- progress calls -------------------------------------------------------------------------

/** Records onProgress calls: { loaded, total, partial, argCount } in call order; then calls onCall. */
export function progressRecorder(onCall) {
	const calls = [];
	const fn = (...args) => {
		calls.push({ loaded: args[0], total: args[1], partial: args[2], argCount: args.length });
		onCall?.(...args);
	};
	return { calls, fn };
}

const ranges = (nums) => {
	const out = [];
	for (let i = 0; i < nums.length; ) {
		let j = i;
		while (j + 1 < nums.length && nums[j + 1] === nums[j] + 1) j++;
		out.push(j > i ? `${nums[i]}..${nums[j]}` : `${nums[i]}`);
		i = j + 1;
	}
	return out.join(",");
};

/**
 * What can be compared of the progress calls of one listing, whatever the completion
 * order: the multiset of `loaded` values, the totals, which `loaded` values came with a
 * partial list, and the reference's publishing rule checked on this side.
 *   rule "dir": listSessionsFromDir: a partial list iff loaded === 1, loaded % 10 === 0 or loaded === total.
 *   rule "all": listAll() without a dir: a partial list once the first candidate (by mtime)
 *     has loaded, on that call, on loaded % 100 === 0 and on loaded === total.
 * `result` is the listing's result: every partial list must hold only sessions of the result
 * (the very objects), and the last partial list exactly the result's sessions.
 */
export function progressSummary(calls, result, rule) {
	const loaded = calls.map((c) => c.loaded);
	const sorted = [...loaded].sort((a, b) => a - b);
	const totals = [...new Set(calls.map((c) => c.total))];
	const total = totals.length === 1 ? totals[0] : undefined;
	const withPartial = calls.filter((c) => c.partial !== undefined).map((c) => c.loaded).sort((a, b) => a - b);
	const problems = [];
	for (let i = 1; i < loaded.length; i++) {
		if (!(loaded[i] > loaded[i - 1])) problems.push(`loaded not increasing in call order at call ${i + 1}: ${loaded[i - 1]} then ${loaded[i]}`);
	}
	if (calls.some((c) => c.argCount !== 3)) problems.push(`calls with ${[...new Set(calls.map((c) => c.argCount))]} arguments (expected 3)`);
	if (calls.some((c) => c.partial !== undefined && !Array.isArray(c.partial))) problems.push("a partial list that is not an array");
	if (rule === "dir") {
		for (const c of calls) {
			const expected = c.loaded === 1 || c.loaded % 10 === 0 || c.loaded === c.total;
			if (expected !== (c.partial !== undefined)) problems.push(`loaded ${c.loaded}: partial ${c.partial !== undefined ? "given" : "missing"}, rule says ${expected ? "given" : "missing"}`);
		}
	} else if (rule === "all") {
		let first = false;
		let extra = 0;
		for (const c of calls) {
			const has = c.partial !== undefined;
			const regular = c.loaded % 100 === 0 || c.loaded === c.total;
			if (has && !first) first = true;
			if (has && !regular) extra++;
			if (!has && first && regular) problems.push(`loaded ${c.loaded}: no partial list after the first candidate had loaded`);
		}
		if (extra > 1) problems.push(`${extra} partial lists outside loaded % 100 / loaded === total (at most the first candidate's call may add one)`);
		const last = calls.find((c) => c.loaded === c.total);
		if (last && last.partial === undefined) problems.push("no partial list on the last call");
	}
	const inResult = new Set(result ?? []);
	const everyPartialInResult = calls.every((c) => c.partial === undefined || c.partial.every((s) => inResult.has(s)));
	const last = calls.find((c) => c.loaded === c.total && c.partial !== undefined);
	const lastPartialIsResult = last === undefined ? null : last.partial.length === inResult.size && last.partial.every((s) => inResult.has(s));
	const validDates = (list) => list.every((s) => !Number.isNaN(s.modified?.getTime?.()));
	const sortedByModified = (list) => list.every((s, i) => i === 0 || list[i - 1].modified.getTime() >= s.modified.getTime());
	const partialsSorted = calls.every((c) => c.partial === undefined || !validDates(c.partial) || sortedByModified(c.partial));
	return {
		calls: calls.length,
		loaded: ranges(sorted),
		totals,
		// Under rule "all" the calls that carry a partial list depend on when the first
		// candidate finished, which is up to scheduling on either side: only the rule is compared.
		partialAt: rule === "all" ? "(see ruleProblems)" : ranges(withPartial),
		ruleProblems: problems,
		everyPartialInResult,
		lastPartialIsResult,
		partialsSorted,
		total,
	};
}

// --- generated folders ----------------------------------------------------------------------

/** `count` small sessions in dir (distinct ids, modified and mtimes). */
export function writeManySessions(dir, count, cwd, { prefix = "many", textBytes = 200 } = {}) {
	fs.mkdirSync(dir, { recursive: true });
	for (let i = 0; i < count; i++) {
		const id = `${prefix}-${String(i).padStart(5, "0")}`;
		const text = `${id} `.padEnd(textBytes, "abcdefghij");
		const file = path.join(dir, `${id}.jsonl`);
		fs.writeFileSync(file, simpleSession(id, cwd, { i: (i % 5000) + 1, text }));
		const t = MTIME(i);
		fs.utimesSync(file, t, t);
	}
}
