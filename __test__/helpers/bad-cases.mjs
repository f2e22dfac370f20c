// Bad and unusual session files. Each case: name, bytes (Buffer), and what the reference
// does with it is the expected behaviour. (Parent cycles and self-parents are left out on
// purpose: the reference loops forever on them in getBranch/buildSessionContext.)
import { T0 } from "./data.mjs";
import { header, toJsonl, v1Entries, v2Entries, v3Entries } from "./sessions.mjs";

const iso = (i) => new Date(T0 + i * 1000).toISOString();
const line = (v) => `${JSON.stringify(v)}\n`;
const v3 = () => toJsonl(v3Entries());
const msg = (id, parentId, i, text, extra = {}) => ({
	type: "message",
	id,
	parentId,
	timestamp: iso(i),
	message: { role: "user", content: text, timestamp: T0 + i * 1000 },
	...extra,
});
const buf = (...parts) => Buffer.concat(parts.map((p) => (Buffer.isBuffer(p) ? p : Buffer.from(p, "utf8"))));

export const BAD_CASES = [
	["truncated last line", buf(v3(), '{"type":"message","id":"5a0000ff","parentId":"5a000012","timestamp":"2024-')],
	["complete last line without newline", buf(v3().slice(0, -1))],
	[
		"last line cut inside a UTF-8 multibyte character",
		buf(v3(), '{"type":"message","id":"5a0000ff","parentId":"5a000012","message":{"role":"user","content":"caf', Buffer.from([0xc3])),
	],
	[
		"invalid UTF-8 bytes inside a valid line",
		buf(line(header()), '{"type":"message","id":"5a000001","parentId":null,"timestamp":"', iso(1), '","message":{"role":"user","content":"bad ', Buffer.from([0xff, 0xfe, 0xc0, 0xaf]), ' bytes","timestamp":1}}\n'),
	],
	[
		"invalid UTF-8 in a v1 file (rewritten by migration)",
		buf(line(v1Entries()[0]), '{"type":"message","timestamp":"', iso(1), '","message":{"role":"user","content":"bad ', Buffer.from([0xed, 0xa0, 0x80]), '","timestamp":1}}\n'),
	],
	[
		"blank, whitespace-only and garbage lines",
		buf("\n   \n", line(header()), "\t \n", "garbage\n{broken\n}\n", line(msg("5a000001", null, 1, "one")), "\n\n", line(msg("5a000002", "5a000001", 2, "two")), "   "),
	],
	["CRLF line endings", buf(v3().replace(/\n/g, "\r\n"))],
	["CR-only line endings", buf(v3().replace(/\n/g, "\r"))],
	[
		"JSON lines that are not objects",
		buf(line(header()), line(msg("5a000001", null, 1, "one")), "5\n", '"a string"\n', "[1,2]\n", "true\n", "null\n", "0\n", "false\n", '""\n', "{}\n", line(msg("5a000002", "5a000001", 2, "two"))),
	],
	["non-object JSON line as the first line", buf("5\n", v3())],
	["no header", buf(toJsonl(v3Entries().slice(1)))],
	["header not first", buf(line(v3Entries()[1]), line(header()), toJsonl(v3Entries().slice(2)))],
	["garbage before the header", buf("garbage\n\n{\n", v3())],
	["byte order mark before the header", buf("\ufeff", v3())],
	["empty file", buf("")],
	["whitespace-only file", buf("  \n\t\n \r\n")],
	["header only", buf(line(header()))],
	["header only, no newline", buf(JSON.stringify(header()))],
	["header with a numeric id", buf(line({ ...header(), id: 5 }), toJsonl(v3Entries().slice(1)))],
	["header without cwd", buf(line((({ cwd, ...h }) => h)(header())), toJsonl(v3Entries().slice(1, 4)))],
	["header without version (v1) but entries with ids", buf(line((({ version, ...h }) => h)(header())), toJsonl(v3Entries().slice(1, 6)))],
	["v1 file", buf(toJsonl(v1Entries()))],
	["v2 file with hookMessage role", buf(toJsonl(v2Entries()))],
	["future version 99", buf(line({ ...header(), version: 99 }), toJsonl(v2Entries().slice(1)))],
	["second header in the middle", buf(v3(), line({ ...header(), id: "second-header", version: 1 }), line(msg("5a0000f0", "5a000012", 30, "after")))],
	[
		"duplicate ids",
		buf(line(header()), line(msg("5a000001", null, 1, "one")), line(msg("5a000002", "5a000001", 2, "first copy")), line(msg("5a000002", "5a000001", 3, "second copy")), line(msg("5a000003", "5a000002", 4, "child"))),
	],
	[
		"orphans (parentId pointing nowhere)",
		buf(line(header()), line(msg("5a000001", null, 1, "root")), line(msg("5a000002", "5a00dead", 2, "orphan")), line(msg("5a000003", "5a000002", 3, "orphan child")), line(msg("5a000004", "5a000001", 4, "leaf"))),
	],
	[
		"entries without id or parentId",
		buf(line(header()), line({ type: "message", timestamp: iso(1), message: { role: "user", content: "no id" } }), line(msg("5a000001", undefined, 2, "no parentId"))),
	],
	[
		"unknown entry types and roles",
		buf(
			line(header()),
			line(msg("5a000001", null, 1, "one")),
			line({ type: "mystery", id: "5a000002", parentId: "5a000001", timestamp: iso(2), payload: { x: 1 } }),
			line({ type: "message", id: "5a000003", parentId: "5a000002", timestamp: iso(3), message: { role: "alien", content: "?" } }),
			line({ type: "message", id: "5a000004", parentId: "5a000003", timestamp: iso(4), message: { role: "assistant", content: null, provider: "p", model: "m" } }),
			line(msg("5a000005", "5a000004", 5, "last")),
		),
	],
	[
		"message entry without a message",
		buf(line(header()), line(msg("5a000001", null, 1, "one")), line({ type: "message", id: "5a000002", parentId: "5a000001", timestamp: iso(2) })),
	],
	[
		"timestamps that are not ISO strings (getTree order)",
		buf(
			line(header()),
			line(msg("5a000001", null, 1, "root")),
			...[5, "yesterday", null, undefined, "2024-01-01", iso(9), iso(3), "", { t: 1 }, 1e15, iso(3)].map((ts, i) =>
				line({ ...msg(`5a0000${(16 + i).toString(16)}`, "5a000001", 0, `child ${i}`), timestamp: ts }),
			),
		),
	],
	[
		"label entries with non-string labels",
		buf(
			line(header()),
			line(msg("5a000001", null, 1, "one")),
			line(msg("5a000002", "5a000001", 2, "two")),
			...[5, { x: 1 }, true, 0, "", null, [], "ok", false, [1]].map((label, i) =>
				line({ type: "label", id: `5a0000${(16 + i).toString(16)}`, parentId: "5a000002", timestamp: iso(3 + i), targetId: i % 2 ? "5a000001" : "5a000002", label }),
			),
			line({ type: "label", id: "5a0000f1", parentId: "5a000002", timestamp: iso(20), targetId: "5a00dead", label: "dangling" }),
		),
	],
	[
		"header after more than 1 MiB of blank lines (header scan limit)",
		buf("\n".repeat(1024 * 1024 + 10), v3()),
	],
	["header larger than 1 MiB", buf(line({ ...header(), cwd: `/big/${"x".repeat(1024 * 1024)}` }), toJsonl(v3Entries().slice(1, 4)))],
	["compaction pointing at a missing entry", buf(line(header()), line(msg("5a000001", null, 1, "one")), line({ type: "compaction", id: "5a000002", parentId: "5a000001", timestamp: iso(2), summary: "s", firstKeptEntryId: "5a00dead", tokensBefore: 1 }), line(msg("5a000003", "5a000002", 3, "after")))],
];

/**
 * Cases the reference's setSessionFile rejects with "Session file is not a valid pi session:
 * <path>" (a non-empty file whose first parsed line is not a header with a string id). There
 * ours deliberately differs (README.md, "Differences from the reference"): badfiles.test.mjs
 * asserts that with Differential#expectRejectedSetSessionFile, which also checks that the
 * reference really rejects the file.
 */
export const REJECTED_BY_SET_SESSION_FILE = new Set([
	"CR-only line endings",
	"non-object JSON line as the first line",
	"no header",
	"header not first",
	"byte order mark before the header",
	"whitespace-only file",
	"header with a numeric id",
]);
for (const name of REJECTED_BY_SET_SESSION_FILE) {
	if (!BAD_CASES.some(([n]) => n === name)) throw new Error(`REJECTED_BY_SET_SESSION_FILE: no bad case ${JSON.stringify(name)}`);
}

/** Cases whose text a caller could hold as entries: every line that JSON-parses to something non-null. */
export function entriesOf(bytes) {
	return bytes
		.toString("utf8")
		.split("\n")
		.flatMap((l) => {
			if (!l.trim()) return [];
			try {
				const v = JSON.parse(l);
				return v === null ? [] : [v];
			} catch {
				return [];
			}
		});
}
