// One differential test per public method of SessionManager and per free function:
// every step runs on the reference and on ours (separate temp dirs) and compares the
// result or error, the manager's whole state, object identity and the files on disk.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import {
	assistant,
	bashExecution,
	buildRichSession,
	CONTEXT_EDIT_REPLACEMENTS,
	customRole,
	SESSION_NAMES,
	system,
	tool,
	toolResult,
	usage,
	user,
} from "./helpers/data.mjs";
import { waitForNextMs } from "./helpers/clock.mjs";
import { apart, differential, setMtime } from "./helpers/harness.mjs";
import { encodeCwdForSessionDir } from "./helpers/normalize.mjs";
import { FIXED_KEEP, toJsonl, v1Entries, v2Entries, v3Entries } from "./helpers/sessions.mjs";

const MODES = ["persisted", "memory"];
const clone = (v) => structuredClone(v);

function start(mode) {
	return (s) => (mode === "persisted" ? s.SM.create(s.cwd, s.sessionDir) : s.SM.inMemory(s.cwd));
}

/** A differential over a fresh session (rich unless rich: false) in the given mode. */
async function withSession(title, mode, body, { rich = true } = {}) {
	await differential(`${title} (${mode})`, async (d) => {
		await d.step(mode === "persisted" ? "create" : "inMemory", start(mode));
		if (rich) await d.step("build rich session", (s) => void buildRichSession(s));
		await body(d);
	});
}

/** Write the same file on both sides. */
function writeBoth(d, rel, content) {
	return d.setup((s) => {
		fs.mkdirSync(path.dirname(s.p(rel)), { recursive: true });
		fs.writeFileSync(s.p(rel), content);
	});
}

// --- appends ---------------------------------------------------------------------------

for (const mode of MODES) {
	test(`appendMessage (${mode}): every role, lazy flush, caller's objects kept`, async () => {
		await withSession(
			"appendMessage",
			mode,
			async (d) => {
				// Setup entries alone never create a file.
				await d.step("system message", (s) => s.sm.appendMessage(s.track(system({ toolsAdded: [tool("read")] }))));
				await d.step("custom role", (s) => s.sm.appendMessage(s.track(customRole())));
				await d.step("bashExecution", (s) => s.sm.appendMessage(s.track(bashExecution())));
				// The first user message writes everything so far.
				await d.step("user (string content)", (s) => s.sm.appendMessage(s.track(user("hello"))));
				await d.step("assistant", (s) => s.sm.appendMessage(s.track(assistant("hi"))));
				await d.step("toolResult", (s) => s.sm.appendMessage(s.track(toolResult())));
				await d.step("user (blocks)", (s) =>
					s.sm.appendMessage(s.track(user([{ type: "text", text: "look" }, { type: "image", data: "aGk=", mimeType: "image/png" }]))),
				);
				await d.step("user with null content", (s) => s.sm.appendMessage(s.track({ ...user(), content: null })));
				await d.step("system with null content", (s) => s.sm.appendMessage(s.track({ ...system(), content: null })));
				await d.step("undefined and NaN fields", (s) =>
					s.sm.appendMessage(s.track({ ...user("odd"), maybe: undefined, nan: Number.NaN, neg: -0, big: 1e21 })),
				);
				await d.step("unicode and escapes", (s) =>
					s.sm.appendMessage(s.track(user("é 😀 \u0000 \ud800 \u2028 \"q\" \\ \t\r\n"))),
				);
				await d.step("unknown role", (s) => s.sm.appendMessage(s.track({ role: "weird", content: "x", timestamp: 1 })));
				await d.step("identity: entry.message is the caller's object", (s) => {
					const message = user("mine");
					const id = s.sm.appendMessage(message);
					return [s.sm.getEntry(id).message === message, s.sm.getLeafEntry() === s.sm.getEntry(id)];
				});
			},
			{ rich: false },
		);
	});

	test(`appendMessage (${mode}): assistant first also flushes`, async () => {
		await withSession(
			"appendMessage assistant-first",
			mode,
			async (d) => {
				await d.step("thinking level", (s) => s.sm.appendThinkingLevelChange("low"));
				await d.step("assistant", (s) => s.sm.appendMessage(assistant("unprompted")));
				await d.step("model change", (s) => s.sm.appendModelChange("openai", "gpt-5.1"));
			},
			{ rich: false },
		);
	});

	test(`appendThinkingLevelChange (${mode})`, async () => {
		await withSession("appendThinkingLevelChange", mode, async (d) => {
			for (const level of ["off", "minimal", "xhigh", ""]) {
				await d.step(`level ${JSON.stringify(level)}`, (s) => s.sm.appendThinkingLevelChange(level));
			}
		});
	});

	test(`appendModelChange (${mode})`, async () => {
		await withSession("appendModelChange", mode, async (d) => {
			await d.step("model change", (s) => s.sm.appendModelChange("google", "gemini-2.5-pro"));
			await d.step("model change with odd names", (s) => s.sm.appendModelChange("prov/ider ✓", "model:1\n2"));
			await d.step("assistant overrides model", (s) => s.sm.appendMessage(assistant("x", { provider: "p2", model: "m2" })));
		});
	});

	test(`appendUsage (${mode}): returns the entry getEntry returns`, async () => {
		await withSession("appendUsage", mode, async (d) => {
			await d.step("without note", (s) => s.sm.appendUsage("cache_warm", "anthropic", "m-one", s.track(usage(2))));
			await d.step("with note", (s) => s.sm.appendUsage("cache_warm", "anthropic", "m-one", s.track(usage(3)), "warming"));
			await d.step("empty note is omitted", (s) => s.sm.appendUsage("other", "openai", "m-two", s.track(usage(4)), ""));
			await d.step("identity", (s) => {
				const u = usage(5);
				const entry = s.sm.appendUsage("k", "p", "m", u, "n");
				return [entry === s.sm.getEntry(entry.id), entry.usage === u, s.sm.getEntries().at(-1) === entry];
			});
		});
	});

	test(`appendCompaction (${mode})`, async () => {
		await withSession(
			"appendCompaction",
			mode,
			async (d) => {
				await d.step("user", (s) => s.sm.appendMessage(user("q")));
				await d.step("no system message: no checkpoint, null firstKept", (s) => s.sm.appendCompaction("sum 1", null, 10));
				await d.step("system messages", (s) =>
					apart(
						() => s.sm.appendMessage(system({ sections: { a: "A", b: "B" }, toolsAdded: [tool("read"), tool("edit")] })),
						() => s.sm.appendMessage(system({ content: "", sections: { a: null }, toolsRemoved: [{ name: "read" }], i: 2 })),
						() => s.sm.appendMessage(assistant("a")),
					),
				);
				await d.step("checkpoint, firstKept = a real id", (s) =>
					s.sm.appendCompaction("sum 2", s.idAt(0), 20, s.track({ readFiles: ["x"] }), true, s.track(usage(1))),
				);
				await d.step("firstKept = missing id", (s) => s.sm.appendCompaction("sum 3", "no-such-id", 30, undefined, false));
				await d.step("after compaction", (s) => s.sm.appendMessage(user("after")));
				await d.step("compaction with every optional arg undefined", (s) =>
					s.sm.appendCompaction("", null, 0, undefined, undefined, undefined),
				);
			},
			{ rich: false },
		);
	});

	test(`appendCustomEntry (${mode})`, async () => {
		await withSession("appendCustomEntry", mode, async (d) => {
			for (const [label, data] of [
				["no data", undefined],
				["object", { a: 1, nested: { b: [1, 2] } }],
				["array", [1, "two", null]],
				["string", "text"],
				["number", 0],
				["null", null],
			]) {
				await d.step(`data: ${label}`, (s) => s.sm.appendCustomEntry("ext-state", s.track({ v: clone(data) }).v));
			}
			await d.step("identity of data", (s) => {
				const data = { mine: true };
				const id = s.sm.appendCustomEntry("t", data);
				return s.sm.getEntry(id).data === data;
			});
		});
	});

	test(`appendSessionInfo and getSessionName (${mode})`, async () => {
		await withSession("appendSessionInfo", mode, async (d) => {
			for (const name of SESSION_NAMES) {
				await d.step(`name ${JSON.stringify(name)}`, (s) => [s.sm.appendSessionInfo(name), s.sm.getSessionName()]);
			}
			await d.step("getSessionName after branching before the name", (s) => {
				s.sm.branch(s.idAt(0));
				return s.sm.getSessionName();
			});
		});
	});

	test(`appendCustomMessageEntry (${mode})`, async () => {
		await withSession("appendCustomMessageEntry", mode, async (d) => {
			await d.step("string content, display", (s) => s.sm.appendCustomMessageEntry("ext", "text", true));
			await d.step("blocks, hidden, details", (s) =>
				s.sm.appendCustomMessageEntry("ext", s.track([{ type: "text", text: "b" }]), false, s.track({ d: 1 })),
			);
			await d.step("null content", (s) => s.sm.appendCustomMessageEntry("ext", null, true));
		});
	});

	test(`appendContextEdit (${mode}): valid and invalid targets and replacements`, async () => {
		await withSession("appendContextEdit", mode, async (d) => {
			// Rich session positions: 0 system, 3 user, 4 assistant(tool), 5 toolResult, 6 assistant,
			// 9 custom_message, 1 thinking, 2 model change; entries 11..13 are on the abandoned branch.
			const targets = [
				["user", 3 / 17],
				["assistant", 4 / 17],
				["toolResult", 5 / 17],
				["custom_message", 9 / 17],
				["system (not editable)", 0],
				["model_change (not editable)", 2 / 17],
				["off the active branch", 11 / 17],
			];
			for (const [targetLabel, at] of targets) {
				for (const [replLabel, replacement] of CONTEXT_EDIT_REPLACEMENTS) {
					await d.step(`target ${targetLabel}, replacement ${replLabel}`, (s) =>
						s.sm.appendContextEdit(s.idAt(at), s.track({ r: clone(replacement) }).r),
					);
				}
			}
			await d.step("missing target", (s) => s.sm.appendContextEdit("no-such-id", null));
			await d.step("missing target, invalid replacement", (s) => s.sm.appendContextEdit("no-such-id", 5));
			await d.step("replacement object kept", (s) => {
				const replacement = { content: [{ type: "text", text: "mine" }] };
				const id = s.sm.appendContextEdit(s.idAt(3 / 17), replacement);
				return s.sm.getEntry(id).replacement === replacement;
			});
		});
	});

	test(`appendLabelChange and getLabel (${mode})`, async () => {
		await withSession("appendLabelChange", mode, async (d) => {
			await d.step("set", (s) => [s.sm.appendLabelChange(s.idAt(0.5), "mark"), s.sm.getLabel(s.idAt(0.5))]);
			await d.step("overwrite", (s) => [s.sm.appendLabelChange(s.idAt(0.5), "mark 2"), s.sm.getLabel(s.idAt(0.5))]);
			await d.step("clear with undefined", (s) => [s.sm.appendLabelChange(s.idAt(0.5), undefined), s.sm.getLabel(s.idAt(0.5))]);
			await d.step("set again", (s) => s.sm.appendLabelChange(s.idAt(0.5), "again"));
			await d.step("clear with empty string", (s) => s.sm.appendLabelChange(s.idAt(0.5), ""));
			await d.step("label a label entry", (s) => s.sm.appendLabelChange(s.idAt(1), "meta"));
			await d.step("missing target", (s) => s.sm.appendLabelChange("no-such-id", "x"));
			await d.step("getLabel of missing id", (s) => s.sm.getLabel("no-such-id"));
		});
	});
}

// --- tree navigation ---------------------------------------------------------------------

for (const mode of MODES) {
	test(`getLeafId, getLeafEntry, getEntry (${mode})`, async () => {
		await withSession("leaf and entry lookups", mode, async (d) => {
			await d.step("lookups", (s) => {
				const ids = s.sm.getEntries().map((e) => e.id);
				return {
					leafId: s.sm.getLeafId(),
					leafEntry: s.sm.getLeafEntry(),
					byId: ids.map((id) => s.sm.getEntry(id)),
					again: ids.map((id) => s.sm.getEntry(id) === s.sm.getEntry(id)),
					missing: [s.sm.getEntry("no-such-id"), s.sm.getEntry(undefined), s.sm.getEntry("")],
				};
			});
			await d.step("resetLeaf then lookups", (s) => {
				s.sm.resetLeaf();
				return [s.sm.getLeafId(), s.sm.getLeafEntry()];
			});
		});
	});

	test(`getChildren (${mode})`, async () => {
		await withSession("getChildren", mode, async (d) => {
			await d.step("children of every entry, null and missing", (s) => {
				const ids = s.sm.getEntries().map((e) => e.id);
				return [...ids.map((id) => s.sm.getChildren(id)), s.sm.getChildren(null), s.sm.getChildren("no-such-id")];
			});
		});
	});

	test(`getBranch (${mode})`, async () => {
		await withSession("getBranch", mode, async (d) => {
			await d.step("branch from every entry, leaf and missing", (s) => {
				const ids = s.sm.getEntries().map((e) => e.id);
				return [s.sm.getBranch(), s.sm.getBranch(undefined), s.sm.getBranch("no-such-id"), ...ids.map((id) => s.sm.getBranch(id))];
			});
			await d.step("after resetLeaf", (s) => {
				s.sm.resetLeaf();
				return s.sm.getBranch();
			});
		});
	});

	test(`buildContextEntries, buildSessionProjection, buildSessionContext (${mode})`, async () => {
		await withSession("context building", mode, async (d) => {
			const build = (s) => ({
				entries: s.sm.buildContextEntries(),
				projection: s.sm.buildSessionProjection(),
				context: s.sm.buildSessionContext(),
			});
			await d.step("at leaf", build);
			const ids = Array.from({ length: 17 }, (_, i) => i / 17);
			for (const at of ids) await d.step(`branch to ${Math.round(at * 17)} and build`, (s) => (s.sm.branch(s.idAt(at)), build(s)));
			await d.step("context edit + compaction on branch", (s) => {
				s.sm.branch(s.idAt(16 / 17));
				apart(
					() => s.sm.appendContextEdit(s.idAt(15 / 17), null),
					() => s.sm.appendCompaction("second compaction", s.idAt(14 / 17), 7),
					() => s.sm.appendMessage(user("after second compaction")),
				);
				return build(s);
			});
			await d.step("empty (resetLeaf)", (s) => (s.sm.resetLeaf(), build(s)));
		});
	});

	test(`getHeader, getEntryCount, getEntries (${mode})`, async () => {
		await withSession("header, count, entries", mode, async (d) => {
			await d.step("values and identity", (s) => {
				const a = s.sm.getEntries();
				const b = s.sm.getEntries();
				return {
					header: s.sm.getHeader(),
					sameHeader: s.sm.getHeader() === s.sm.getHeader(),
					count: s.sm.getEntryCount(),
					entries: a,
					freshArray: a !== b,
					sameObjects: a.every((e, i) => e === b[i]),
				};
			});
			await d.step("mutating the returned array does not change the session", (s) => {
				s.sm.getEntries().length = 0;
				return s.sm.getEntryCount();
			});
		});
	});

	test(`getTree (${mode})`, async () => {
		await withSession("getTree", mode, async (d) => {
			await d.step("tree", (s) => s.sm.getTree());
			await d.step("several roots after resetLeaf", (s) => {
				apart(
					() => s.sm.resetLeaf(),
					() => s.sm.appendMessage(user("second root")),
					() => s.sm.resetLeaf(),
					() => s.sm.appendModelChange("p", "m"),
				);
				return s.sm.getTree();
			});
			await d.step("labels and label timestamps", (s) => {
				apart(
					() => s.sm.appendLabelChange(s.idAt(0), "root label"),
					() => s.sm.appendLabelChange(s.idAt(0), "newer root label"),
				);
				return s.sm.getTree();
			});
		});
	});

	test(`branch and resetLeaf (${mode})`, async () => {
		await withSession("branch", mode, async (d) => {
			await d.step("branch to first", (s) => s.sm.branch(s.idAt(0)));
			await d.step("append on branch", (s) => s.sm.appendMessage(user("branched")));
			await d.step("branch to missing", (s) => s.sm.branch("no-such-id"));
			await d.step("branch to undefined", (s) => s.sm.branch(undefined));
			await d.step("resetLeaf", (s) => s.sm.resetLeaf());
			await d.step("append new root", (s) => s.sm.appendMessage(user("new root")));
		});
	});

	test(`branchWithSummary (${mode})`, async () => {
		await withSession("branchWithSummary", mode, async (d) => {
			await d.step("to an entry", (s) => s.sm.branchWithSummary(s.idAt(0.3), "summary one"));
			await d.step("with details, fromHook, usage", (s) =>
				s.sm.branchWithSummary(s.idAt(0.5), "summary two", s.track({ files: ["a"] }), true, s.track(usage(2))),
			);
			await d.step("to null (new root)", (s) => s.sm.branchWithSummary(null, "from the top"));
			await d.step("missing id", (s) => s.sm.branchWithSummary("no-such-id", "nope"));
			await d.step("empty summary", (s) => s.sm.branchWithSummary(s.idAt(0), ""));
			await d.step("fromId is root when leaf is null", (s) => (s.sm.resetLeaf(), s.sm.branchWithSummary(s.idAt(0), "from root")));
		});
	});

	test(`createBranchedSession (${mode})`, async () => {
		await withSession("createBranchedSession", mode, async (d) => {
			await d.step("label, then label child, then compaction keeping from the label", (s) =>
				apart(
					() => s.sm.appendLabelChange(s.idAt(3 / 17), "kept label"),
					() => s.sm.appendCompaction("keeps from label", s.sm.getLeafId(), 99),
					() => s.sm.appendMessage(user("after")),
				),
			);
			await d.step("from the leaf", (s) => s.sm.createBranchedSession(s.sm.getLeafId()));
			await d.step("append to branched session", (s) => s.sm.appendMessage(assistant("in branch")));
			await d.step("from a middle entry", (s) => s.sm.createBranchedSession(s.idAt(0.5)));
			await d.step("from a setup-only prefix (no conversation yet)", (s) => s.sm.createBranchedSession(s.idAt(0)));
			await d.step("append setup entry", (s) => s.sm.appendThinkingLevelChange("low"));
			await d.step("append user (flush)", (s) => s.sm.appendMessage(user("now flushed")));
			await d.step("missing id", (s) => s.sm.createBranchedSession("no-such-id"));
			await d.step("undefined after resetLeaf", (s) => (s.sm.resetLeaf(), s.sm.createBranchedSession(undefined)));
		});
	});
}

// --- session lifecycle -------------------------------------------------------------------

for (const mode of MODES) {
	test(`newSession (${mode})`, async () => {
		await withSession("newSession", mode, async (d) => {
			await d.step("no options", (s) => s.sm.newSession());
			await d.step("append after newSession", (s) => s.sm.appendMessage(user("fresh")));
			await d.step("custom id", (s) => s.sm.newSession({ id: "my-session.1" }));
			await d.step("parentSession", (s) => s.sm.newSession({ parentSession: s.p("parent.jsonl") }));
			await d.step("append", (s) => s.sm.appendMessage(user("child")));
			for (const bad of ["", "-bad", "bad-", "has space", "a/b", "ü"]) {
				await d.step(`invalid id ${JSON.stringify(bad)}`, (s) => s.sm.newSession({ id: bad }));
			}
			await d.step("id undefined is random", (s) => s.sm.newSession({ id: undefined }));
		});
	});

	test(`setSessionFile (${mode})`, async () => {
		await differential(`setSessionFile (${mode})`, async (d) => {
			await writeBoth(d, "files/v3.jsonl", toJsonl(v3Entries()));
			await writeBoth(d, "files/v1.jsonl", toJsonl(v1Entries()));
			await writeBoth(d, "files/empty.jsonl", "");
			await writeBoth(d, "files/garbage.jsonl", "not json at all\n");
			await writeBoth(d, "files/headerless.jsonl", `${JSON.stringify(v3Entries()[2])}\n`);
			await d.step("start", start(mode));
			await d.step("existing v3 file", (s) => s.sm.setSessionFile(s.p("files/v3.jsonl")));
			await d.step("append", (s) => s.sm.appendMessage(user("appended")));
			await d.step("v1 file (migrated)", (s) => s.sm.setSessionFile(s.p("files/v1.jsonl")));
			await d.step("empty file", (s) => s.sm.setSessionFile(s.p("files/empty.jsonl")));
			// Rejected files: the deliberate difference (README "Differences from the reference"),
			// asserted by the helper; both sides then reload the session from before the call.
			await d.expectRejectedSetSessionFile("garbage file", (s) => s.p("files/garbage.jsonl"));
			await d.resyncAfterRejectedSetSessionFile();
			await d.step("append after the rejection", (s) => s.sm.appendMessage(user("after rejection")));
			await d.expectRejectedSetSessionFile("headerless file", (s) => s.p("files/headerless.jsonl"));
			await d.resyncAfterRejectedSetSessionFile();
			await d.step("nonexistent file", (s) => s.sm.setSessionFile(s.p("files/new.jsonl")));
			await d.step("append setup entry", (s) => s.sm.appendModelChange("p", "m"));
			await d.step("append user", (s) => s.sm.appendMessage(user("to new file")));
			await d.step("relative path", (s) => s.sm.setSessionFile("files/v3.jsonl"), { chdir: true });
		}, { keep: FIXED_KEEP });
	});
}

test("isPersisted, getCwd, getSessionDir, usesDefaultSessionDir, getSessionId, getSessionFile", async () => {
	await differential("session properties", async (d) => {
		const props = (s) => ({
			isPersisted: s.sm.isPersisted(),
			cwd: s.sm.getCwd(),
			dir: s.sm.getSessionDir(),
			usesDefault: s.sm.usesDefaultSessionDir(),
			id: s.sm.getSessionId(),
			file: s.sm.getSessionFile(),
		});
		await d.step("create in default dir", (s) => s.SM.create(s.cwd));
		await d.step("props", props);
		await d.step("create in custom dir", (s) => s.SM.create(s.cwd, s.sessionDir));
		await d.step("props", props);
		await d.step("create with default dir given explicitly", (s) =>
			s.SM.create(s.cwd, path.join(s.agentDir, "sessions", `--${encodeCwdForSessionDir(s.cwd)}--`)),
		);
		await d.step("props", props);
		await d.step("inMemory", (s) => s.SM.inMemory(s.cwd));
		await d.step("props", props);
		await d.step("inMemory without cwd", (s) => s.SM.inMemory());
		await d.step("props", props);
		await d.step("inMemory with relative cwd", (s) => s.SM.inMemory("sub/dir/.."), { chdir: true });
		await d.step("props", props);
	});
});

test("_persist (public in the .d.ts)", async () => {
	await differential("_persist", async (d) => {
		await d.step("create", (s) => s.SM.create(s.cwd, s.sessionDir));
		await d.step("_persist before any conversation writes nothing", (s) => s.sm._persist(s.sm.getHeader()));
		await d.step("user", (s) => s.sm.appendMessage(user("hi")));
		await d.step("_persist after flush appends the line", (s) =>
			s.sm._persist({ type: "custom", id: "cafe0001", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", customType: "x" }),
		);
		await d.step("inMemory _persist is a no-op", (s) => {
			const sm = s.SM.inMemory(s.cwd);
			sm.appendMessage(user("x"));
			return sm._persist({ type: "custom", id: "cafe0002", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", customType: "x" });
		});
	}, { keep: ["cafe0001", "cafe0002"] });
});

test("a failed write rolls memory back (EEXIST on first flush, EISDIR on append)", async () => {
	await differential("write failures", async (d) => {
		await d.step("create", (s) => s.SM.create(s.cwd, s.sessionDir));
		await d.step("setup entry (no file yet)", (s) => s.sm.appendModelChange("p", "m"));
		await d.setup((s) => fs.writeFileSync(s.sm.getSessionFile(), "someone else's file\n"));
		await d.step("first user message: file exists, write refused", (s) => s.sm.appendMessage(user("refused")));
		await d.step("memory unchanged: next append is a child of the setup entry", (s) => s.sm.appendThinkingLevelChange("low"));
		await d.setup((s) => fs.rmSync(s.sm.getSessionFile()));
		await d.step("first user message after the file is gone", (s) => s.sm.appendMessage(user("accepted")));
		await d.setup((s) => {
			fs.rmSync(s.sm.getSessionFile());
			fs.mkdirSync(s.sm.getSessionFile());
		});
		await d.step("append to a path that became a directory", (s) => s.sm.appendMessage(assistant("refused")));
		await d.step("label after failure", (s) => s.sm.appendLabelChange(s.idAt(0), "still consistent"));
	});
});

// --- statics -----------------------------------------------------------------------------

test("SessionManager.create", async () => {
	await differential("create", async (d) => {
		await d.step("default session dir (PI_CODING_AGENT_DIR)", (s) => s.SM.create(s.cwd));
		await d.step("append", (s) => s.sm.appendMessage(user("in default dir")));
		await d.step("custom, nonexistent nested dir", (s) => s.SM.create(s.cwd, s.p("deep", "er", "sessions")));
		await d.step("custom id", (s) => s.SM.create(s.cwd, s.sessionDir, { id: "custom-id" }));
		await d.step("append", (s) => s.sm.appendMessage(user("custom id")));
		await d.step("parentSession option", (s) => s.SM.create(s.cwd, s.sessionDir, { parentSession: "/some/parent.jsonl" }));
		await d.step("invalid id", (s) => s.SM.create(s.cwd, s.p("invalid-dir"), { id: "../escape" }));
		await d.step("relative cwd and sessionDir", (s) => s.SM.create("rel-project", "rel-sessions"), { chdir: true });
		await d.step("append", (s) => s.sm.appendMessage(user("relative")));
		await d.step("sessionDir with trailing slash", (s) => s.SM.create(s.cwd, `${s.sessionDir}/`));
		await d.step("empty sessionDir means default", (s) => s.SM.create(s.cwd, ""));
	});
});

test("SessionManager.open", async () => {
	await differential("open", async (d) => {
		await writeBoth(d, "files/v3.jsonl", toJsonl(v3Entries()));
		await writeBoth(d, "files/v2.jsonl", toJsonl(v2Entries()));
		await writeBoth(d, "files/v1.jsonl", toJsonl(v1Entries()));
		await writeBoth(d, "files/no-cwd.jsonl", toJsonl([{ ...v3Entries()[0], cwd: 42 }, ...v3Entries().slice(1, 4)]));
		await d.step("v3 file", (s) => s.SM.open(s.p("files/v3.jsonl")));
		await d.step("append to opened", (s) => s.sm.appendMessage(user("appended")));
		await d.step("v2 file (migrated, rewritten)", (s) => s.SM.open(s.p("files/v2.jsonl")));
		await d.step("v1 file (migrated, rewritten)", (s) => s.SM.open(s.p("files/v1.jsonl")));
		await d.step("reopen migrated v1", (s) => s.SM.open(s.p("files/v1.jsonl")));
		await d.step("with sessionDir", (s) => s.SM.open(s.p("files/v3.jsonl"), s.sessionDir));
		await d.step("newSession goes to sessionDir", (s) => s.sm.newSession());
		await d.step("with cwdOverride", (s) => s.SM.open(s.p("files/v3.jsonl"), undefined, s.p("elsewhere")));
		await d.step("header cwd not a string", (s) => s.SM.open(s.p("files/no-cwd.jsonl")));
		await d.step("nonexistent file: new session at that path", (s) => s.SM.open(s.p("files/later.jsonl")));
		await d.step("nothing written before a message", (s) => s.sm.appendThinkingLevelChange("low"));
		await d.step("written on first user message", (s) => s.sm.appendMessage(user("now")));
		await d.step("file:// URL", (s) => s.SM.open(pathToFileURL(s.p("files/v3.jsonl")).href));
		await d.step("relative path", (s) => s.SM.open("files/v2.jsonl"), { chdir: true });
		await d.step("directory instead of file", (s) => s.SM.open(s.p("files")));
	}, { keep: FIXED_KEEP });
});

test("SessionManager.continueRecent", async () => {
	await differential("continueRecent", async (d) => {
		const other = (s) => ({ ...v3Entries()[0], id: "other-cwd-session", cwd: s.p("other") });
		const mine = (s, id) => ({ ...v3Entries()[0], id, cwd: s.cwd });
		await d.step("empty default dir: new session", (s) => s.SM.continueRecent(s.cwd));
		await d.step("nonexistent custom dir: new session", (s) => s.SM.continueRecent(s.cwd, s.p("nowhere")));
		await d.setup((s) => {
			fs.mkdirSync(s.sessionDir, { recursive: true });
			const write = (name, entries, mtime) => {
				fs.writeFileSync(path.join(s.sessionDir, name), toJsonl(entries));
				setMtime(path.join(s.sessionDir, name), mtime);
			};
			write("a.jsonl", [mine(s, "mine-old"), ...v3Entries().slice(1, 3)], Date.UTC(2024, 0, 1));
			write("b.jsonl", [mine(s, "mine-new"), ...v3Entries().slice(1, 5)], Date.UTC(2024, 0, 2));
			write("c.jsonl", [other(s), ...v3Entries().slice(1, 3)], Date.UTC(2024, 0, 3));
			fs.writeFileSync(path.join(s.sessionDir, "d.jsonl"), "garbage\n");
			setMtime(path.join(s.sessionDir, "d.jsonl"), Date.UTC(2024, 0, 4));
			fs.writeFileSync(path.join(s.sessionDir, "notes.txt"), "not a session");
			setMtime(path.join(s.sessionDir, "notes.txt"), Date.UTC(2024, 0, 5));
		});
		await d.step("custom dir filters by cwd: newest of mine", (s) => s.SM.continueRecent(s.cwd, s.sessionDir));
		await d.step("custom dir, other cwd", (s) => s.SM.continueRecent(s.p("other"), s.sessionDir));
		await d.step("custom dir, cwd with no session", (s) => s.SM.continueRecent(s.p("nobody"), s.sessionDir));
		await d.setup((s) => {
			const dir = path.join(s.agentDir, "sessions", `--${encodeCwdForSessionDir(s.cwd)}--`);
			fs.writeFileSync(path.join(dir, "x.jsonl"), toJsonl([other(s), ...v3Entries().slice(1, 3)]));
			setMtime(path.join(dir, "x.jsonl"), Date.UTC(2024, 0, 9));
		});
		await d.step("default dir does not filter by cwd", (s) => s.SM.continueRecent(s.cwd));
	}, { keep: FIXED_KEEP });
});

test("SessionManager.inMemory", async () => {
	await differential("inMemory", async (d) => {
		await d.step("no arguments", (s) => s.SM.inMemory());
		await d.step("cwd and options", (s) => s.SM.inMemory(s.cwd, { id: "mem-id", parentSession: "/p.jsonl" }));
		await d.step("invalid id", (s) => s.SM.inMemory(s.cwd, { id: "bad id" }));
		await d.step("entries with header: caller's array and objects are used", (s) => {
			const entries = s.watch(v3Entries());
			return s.SM.inMemory(s.cwd, undefined, entries);
		});
		await d.step("append grows the caller's array", (s) => s.sm.appendMessage(user("appended")));
		await d.step("identity with caller's entries", (s) => {
			const entries = v3Entries();
			const sm = s.SM.inMemory(s.cwd, undefined, entries);
			return [sm.getHeader() === entries[0], sm.getEntries().every((e, i) => e === entries[i + 1]), sm.getEntry(entries[3].id) === entries[3]];
		});
		await d.step("entries without header: new session, options used", (s) =>
			s.SM.inMemory(s.cwd, { id: "no-header" }, s.watch(v3Entries().slice(1))),
		);
		await d.step("append", (s) => s.sm.appendMessage(user("appended 2")));
		await d.step("v1 entries are migrated in place", (s) => s.SM.inMemory(s.cwd, undefined, s.watch(v1Entries())));
		await d.step("v2 entries are migrated in place", (s) => s.SM.inMemory(s.cwd, undefined, s.watch(v2Entries())));
		await d.step("empty entries array", (s) => s.SM.inMemory(s.cwd, { id: "empty-array" }, []));
	}, { keep: FIXED_KEEP });
});

test("SessionManager.forkFrom", async () => {
	await differential("forkFrom", async (d) => {
		await writeBoth(d, "files/v3.jsonl", toJsonl(v3Entries()));
		await writeBoth(d, "files/v1.jsonl", toJsonl(v1Entries()));
		await writeBoth(d, "files/empty.jsonl", "");
		await writeBoth(d, "files/headerless.jsonl", `${JSON.stringify(v3Entries()[2])}\n`);
		await d.step("fork v3 into custom dir", (s) => s.SM.forkFrom(s.p("files/v3.jsonl"), s.p("target"), s.sessionDir));
		await d.step("append to fork", (s) => s.sm.appendMessage(user("in fork")));
		await d.step("fork into default dir of target cwd", (s) => s.SM.forkFrom(s.p("files/v3.jsonl"), s.p("target")));
		await d.step("fork with custom id", (s) => s.SM.forkFrom(s.p("files/v3.jsonl"), s.cwd, s.sessionDir, { id: "forked" }));
		await d.step("fork with the same custom id again (same file name? no: new timestamp)", (s) =>
			s.SM.forkFrom(s.p("files/v3.jsonl"), s.cwd, s.sessionDir, { id: "forked" }),
		);
		await d.step("fork with invalid id", (s) => s.SM.forkFrom(s.p("files/v3.jsonl"), s.cwd, s.p("fork-invalid"), { id: "." }));
		await d.step("fork a v1 file (not migrated on disk, migrated on open)", (s) =>
			s.SM.forkFrom(s.p("files/v1.jsonl"), s.cwd, s.sessionDir),
		);
		await d.step("empty source", (s) => s.SM.forkFrom(s.p("files/empty.jsonl"), s.cwd, s.sessionDir));
		await d.step("headerless source", (s) => s.SM.forkFrom(s.p("files/headerless.jsonl"), s.cwd, s.sessionDir));
		await d.step("missing source", (s) => s.SM.forkFrom(s.p("files/missing.jsonl"), s.cwd, s.sessionDir));
	}, { keep: FIXED_KEEP });
});

// Lines pi itself would not write: branching and forking copy the lines already in
// JSON.stringify form as they are and rewrite the others, which must come out the same.
test("createBranchedSession and forkFrom over lines copied as they are and rewritten", async () => {
	const t = (n) => `"2024-01-01T00:00:0${n}.000Z"`;
	const lines = [
		`{"type":"session","version":3,"id":"mixed","timestamp":${t(0)},"cwd":"/home/user/mixed"}`,
		`{"type":"message","id":"a1","parentId":null,"timestamp":${t(1)},"message":{"role":"user","content":"hi","timestamp":1}}`,
		`{ "type": "message", "id": "a2", "parentId": "a1", "timestamp": ${t(2)}, "message": {"role":"assistant","content":[{"type":"text","text":"caf\\u00e9 \\/"}]} }`,
		`{"type":"label","id":"l1","parentId":"a2","timestamp":${t(3)},"targetId":"a1","label":"start"}`,
		`{"type":"message","id":"a3","parentId":"l1","timestamp":${t(4)},"message":{"role":"user","content":"after the label","timestamp":3}}`,
		`{"type":"compaction","id":"c1","parentId":"a3","timestamp":${t(5)},"summary":"so far","firstKeptEntryId":"l1","tokensBefore":10}`,
		`{"type":"message","id":"a4","parentId":"c1","timestamp":${t(6)},"message":{"role":"user","content":"x","timestamp":1.0,"2":"b","1":"a"}}`,
		`{"type":"message","id":"a5","parentId":"a4","timestamp":${t(7)},"message":{"role":"user","content":"crlf","timestamp":5}}\r`,
		`{"type":"message","id":"a6","parentId":"a5","parentId":"a5","timestamp":${t(8)},"message":{"role":"user","content":"twice","timestamp":6}}`,
		`{"type":"message","id":"a7","parentId":"a6","timestamp":${t(9)},"message":{"role":"user","content":"last \\"quoted\\" \\n","timestamp":7}}`,
	];
	await differential("mixed lines", async (d) => {
		await writeBoth(d, "files/mixed.jsonl", `${lines.join("\n")}\n`);
		await d.step("open", (s) => s.SM.open(s.p("files/mixed.jsonl"), s.sessionDir));
		await d.step("createBranchedSession from the leaf", (s) => s.sm.createBranchedSession(s.sm.getLeafId()));
		await d.step("entries of the branched session", (s) => s.sm.getEntries());
		await d.step("forkFrom the file", (s) => s.SM.forkFrom(s.p("files/mixed.jsonl"), s.cwd, s.sessionDir));
		await d.step("entries of the fork", (s) => s.sm.getEntries());
	}, { keep: FIXED_KEEP });
});

/** Sessions in the default dir, a custom dir, and other project dirs under the agent dir, with fixed mtimes. */
async function populateSessionDirs(d) {
	await d.setup((s) => {
		const defaultDir = path.join(s.agentDir, "sessions", `--${encodeCwdForSessionDir(s.cwd)}--`);
		const otherDir = path.join(s.agentDir, "sessions", "--other-project--");
		const write = (dir, name, entries, mtime) => {
			fs.mkdirSync(dir, { recursive: true });
			fs.writeFileSync(path.join(dir, name), typeof entries === "string" ? entries : toJsonl(entries));
			setMtime(path.join(dir, name), mtime);
		};
		const h = (id, cwd, extra = {}) => ({ ...v3Entries()[0], id, cwd, ...extra });
		const body = v3Entries().slice(1);
		write(defaultDir, "2024-01-01T00-00-00-000Z_def-one.jsonl", [h("def-one", s.cwd), ...body], Date.UTC(2024, 0, 1));
		write(defaultDir, "2024-01-02T00-00-00-000Z_def-two.jsonl", [h("def-two", s.cwd, { parentSession: "/parent.jsonl" }), ...body.slice(0, 3)], Date.UTC(2024, 0, 2));
		write(defaultDir, "junk.jsonl", "junk\n", Date.UTC(2024, 0, 3));
		write(otherDir, "2024-01-03T00-00-00-000Z_other-one.jsonl", [h("other-one", "/other/project"), ...body.slice(0, 2)], Date.UTC(2024, 0, 5));
		write(s.sessionDir, "c-mine.jsonl", [h("c-mine", s.cwd), ...body.slice(0, 6)], Date.UTC(2024, 0, 6));
		write(s.sessionDir, "c-other.jsonl", [h("c-other", s.p("other")), ...body.slice(0, 4)], Date.UTC(2024, 0, 7));
		write(s.sessionDir, "c-no-messages.jsonl", [h("c-no-messages", s.cwd)], Date.UTC(2024, 0, 8));
		write(s.sessionDir, "c-no-timestamp.jsonl", [{ type: "session", id: "c-no-timestamp", cwd: s.cwd }], Date.UTC(2024, 0, 9));
		write(
			s.sessionDir,
			"c-named.jsonl",
			[h("c-named", s.cwd), ...body.slice(0, 2), { type: "session_info", id: "ab000001", parentId: null, timestamp: body[0].timestamp, name: "  named \n" }],
			Date.UTC(2024, 0, 10),
		);
		write(s.sessionDir, "c-v1.jsonl", v1Entries().map((e) => (e.type === "session" ? { ...e, cwd: s.cwd } : e)), Date.UTC(2024, 0, 11));
		write(s.sessionDir, "c-empty.jsonl", "", Date.UTC(2024, 0, 12));
		fs.mkdirSync(path.join(s.sessionDir, "dir.jsonl"));
		fs.writeFileSync(path.join(s.agentDir, "sessions", "stray.jsonl"), "not in a project dir");
	});
}

test("SessionManager.findById", async () => {
	await differential("findById", async (d) => {
		await d.step("nonexistent default dir", (s) => s.SM.findById(s.cwd, "def-one"));
		await populateSessionDirs(d);
		for (const id of ["def-one", "def-two", "other-one", "c-mine", "c-other", "c-v1", "nope", ""]) {
			await d.step(`default dir, id ${id}`, (s) => s.SM.findById(s.cwd, id), { state: "none" });
			await d.step(`custom dir, id ${id}`, (s) => s.SM.findById(s.cwd, id, s.sessionDir), { state: "none" });
		}
		await d.step("custom dir, other cwd", (s) => s.SM.findById(s.p("other"), "c-other", s.sessionDir), { state: "none" });
		await d.step("missing dir", (s) => s.SM.findById(s.cwd, "c-mine", s.p("missing")), { state: "none" });
	}, { keep: [...FIXED_KEEP, "ab000001"] });
});

test("SessionManager.list", async () => {
	await differential("list", async (d) => {
		await d.step("nonexistent dir", (s) => s.SM.list(s.cwd, s.p("missing")));
		await populateSessionDirs(d);
		await d.step("default dir", (s) => s.SM.list(s.cwd), { state: "none" });
		await d.step("custom dir, filtered by cwd", (s) => s.SM.list(s.cwd, s.sessionDir), { state: "none" });
		await d.step("custom dir, other cwd", (s) => s.SM.list(s.p("other"), s.sessionDir), { state: "none" });
		await d.step("with onProgress", async (s) => {
			const calls = [];
			const sessions = await s.SM.list(s.cwd, s.sessionDir, (loaded, total, partial) => calls.push({ loaded, total, partial: partial !== undefined }));
			return { sessions, calls };
		}, { state: "none" });
		await d.step("already aborted signal", (s) => {
			const ac = new AbortController();
			ac.abort();
			return s.SM.list(s.cwd, s.sessionDir, undefined, ac.signal);
		}, { state: "none" });
		await d.step("sessions created through the API", async (s) => {
			const sm = s.SM.create(s.cwd, s.p("api-sessions"));
			// The header's and the first entry's timestamps must not share a
			// millisecond on one side only.
			waitForNextMs();
			apart(
				() => sm.appendMessage(user("first api message", 1)),
				() => sm.appendSessionInfo("api name"),
				() => sm.appendMessage(assistant("answer", { i: 2 })),
			);
			return s.SM.list(s.cwd, s.p("api-sessions"));
		}, { state: "none" });
		await d.step("lone surrogates and escapes in names and texts", async (s) => {
			const sm = s.SM.create(s.cwd, s.p("odd-sessions"));
			waitForNextMs();
			apart(
				() => sm.appendMessage(user("lone \ud800 high, \udc00 low, pair 😀, nul \u0000, sep \u2028", 1)),
				() => sm.appendSessionInfo("name \udfff end"),
				() => sm.appendMessage(assistant("answer \ud83d", { i: 2 })),
			);
			return s.SM.list(s.cwd, s.p("odd-sessions"));
		}, { state: "none" });
	}, { keep: [...FIXED_KEEP, "ab000001"] });
});

test("SessionManager.listAll", async () => {
	await differential("listAll", async (d) => {
		await d.step("no sessions dir", (s) => s.SM.listAll(), { state: "none" });
		await populateSessionDirs(d);
		await d.step("all project dirs under the agent dir", (s) => s.SM.listAll(), { state: "none" });
		await d.step("custom dir (not filtered by cwd)", (s) => s.SM.listAll(s.sessionDir), { state: "none" });
		await d.step("onProgress as first argument", async (s) => {
			const calls = [];
			const sessions = await s.SM.listAll((loaded, total) => calls.push([loaded, total]));
			return { sessions, calls };
		}, { state: "none" });
		await d.step("dir, onProgress", async (s) => {
			const calls = [];
			const sessions = await s.SM.listAll(s.sessionDir, (loaded, total) => calls.push([loaded, total]));
			return { sessions, calls };
		}, { state: "none" });
		await d.step("aborted signal as second argument", (s) => {
			const ac = new AbortController();
			ac.abort();
			return s.SM.listAll(undefined, ac.signal);
		}, { state: "none" });
		await d.step("aborted signal as third argument", (s) => {
			const ac = new AbortController();
			ac.abort();
			return s.SM.listAll(s.sessionDir, undefined, ac.signal);
		}, { state: "none" });
	}, { keep: [...FIXED_KEEP, "ab000001"] });
});

// --- free functions ----------------------------------------------------------------------

test("CURRENT_SESSION_VERSION", async () => {
	await differential("CURRENT_SESSION_VERSION", async (d) => {
		await d.step("value", (s) => s.impl.CURRENT_SESSION_VERSION);
	});
	const { ours } = await import("./helpers/ours.mjs");
	assert.equal(ours.CURRENT_SESSION_VERSION, 3);
});

test("parseSessionEntries", async () => {
	await differential("parseSessionEntries", async (d) => {
		const inputs = [
			["v3 file", toJsonl(v3Entries())],
			["empty", ""],
			["whitespace", "  \n\t\n"],
			["garbage and blank lines", `\n${JSON.stringify(v3Entries()[0])}\nnot json\n\n   \n{"type":"x"}\n{broken\n`],
			["CRLF", toJsonl(v3Entries().slice(0, 3)).replace(/\n/g, "\r\n")],
			["non-object JSON lines", "1\n\"s\"\n[1]\ntrue\nnull\n0\nfalse\n{}\n"],
			["no trailing newline, leading spaces", `   ${JSON.stringify(v3Entries()[1])}`],
			["unicode separators", `${JSON.stringify({ type: "x", t: "a\u2028b" })}\n`],
		];
		for (const [label, text] of inputs) await d.step(label, (s) => s.impl.parseSessionEntries(text));
	}, { keep: FIXED_KEEP });
});

test("migrateSessionEntries", async () => {
	await differential("migrateSessionEntries", async (d) => {
		for (const [label, make] of [
			["v1", v1Entries],
			["v2", v2Entries],
			["v3 (unchanged)", v3Entries],
			["no header (treated as v1)", () => v1Entries().slice(1)],
			["empty", () => []],
			["header version 5", () => [{ ...v3Entries()[0], version: 5 }, ...v1Entries().slice(1)]],
		]) {
			await d.step(label, (s) => {
				const entries = make();
				const result = s.impl.migrateSessionEntries(entries);
				return { result, entries };
			});
		}
	}, { keep: FIXED_KEEP });
});

test("getLatestCompactionEntry", async () => {
	await differential("getLatestCompactionEntry", async (d) => {
		await d.step("v3 entries", (s) => {
			const entries = v3Entries().slice(1);
			const latest = s.impl.getLatestCompactionEntry(entries);
			return [latest, latest === entries[6]];
		});
		await d.step("two compactions", (s) => {
			const entries = v2Entries();
			s.impl.migrateSessionEntries(entries);
			entries.push({ ...entries[4], id: "6b0000ff", summary: "later" });
			return s.impl.getLatestCompactionEntry(entries);
		});
		await d.step("none", (s) => s.impl.getLatestCompactionEntry(v3Entries().filter((e) => e.type !== "compaction")));
		await d.step("empty", (s) => s.impl.getLatestCompactionEntry([]));
	}, { keep: [...FIXED_KEEP, "6b0000ff"] });
});

test("sessionEntryToContextMessages", async () => {
	await differential("sessionEntryToContextMessages", async (d) => {
		await d.step("every v3 entry", (s) => v3Entries().slice(1).map((e) => ({ e, out: s.impl.sessionEntryToContextMessages(e) })));
		await d.step("identity: message entries return the message itself", (s) => {
			const e = v3Entries()[2];
			return s.impl.sessionEntryToContextMessages(e)[0] === e.message;
		});
		const odd = [
			{ type: "message", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", message: { role: "system", content: null } },
			{ type: "message", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", message: { role: "user" } },
			{ type: "message", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", message: { role: "assistant", content: undefined } },
			{ type: "message", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", message: { role: "toolResult", content: null } },
			{ type: "message", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", message: { role: "custom", content: null } },
			{ type: "custom_message", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", customType: "c" },
			{ type: "custom_message", id: "x", parentId: null, timestamp: "not a date", customType: "c", content: "s", display: true },
			{ type: "branch_summary", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", fromId: "y", summary: "" },
			{ type: "branch_summary", id: "x", parentId: null, timestamp: 5, fromId: "y", summary: "s" },
			{ type: "compaction", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", summary: "s", tokensBefore: 1 },
			{ type: "compaction", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", summary: "s", systemMessage: { role: "system", content: "c" } },
			{ type: "custom", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", customType: "c", data: 1 },
			{ type: "label", id: "x", parentId: null, timestamp: "2024-01-01T00:00:00.000Z", targetId: "y", label: "l" },
			{ type: "unknown_type", id: "x" },
		];
		for (let i = 0; i < odd.length; i++) await d.step(`odd entry ${i} (${odd[i].type})`, (s) => s.impl.sessionEntryToContextMessages(clone(odd[i])));
		await d.step("compaction systemMessage identity", (s) => {
			const e = clone(odd[10]);
			return s.impl.sessionEntryToContextMessages(e)[0] === e.systemMessage;
		});
	}, { keep: FIXED_KEEP });
});

for (const fn of ["buildContextEntries", "buildSessionProjection", "buildSessionContext"]) {
	test(`${fn} (free function)`, async () => {
		await differential(fn, async (d) => {
			const entriesOf = (make) => make().filter((e) => e.type !== "session");
			const migratedV2 = (s) => {
				const e = v2Entries();
				s.impl.migrateSessionEntries(e);
				return e.filter((x) => x.type !== "session");
			};
			const leafs = [
				["no leafId (last entry)", () => undefined],
				["null leafId", () => null],
				["leaf at a2", () => "5a000005"],
				["leaf at a3 (after compaction and edit)", () => "5a00000a"],
				["leaf at u3 (branch summary path)", () => "5a00000d"],
				["leaf at first entry", () => "5a000001"],
				["missing leaf (falls back to last)", () => "no-such-id"],
				["empty-string leaf", () => ""],
			];
			for (const [label, leaf] of leafs) {
				await d.step(`v3, ${label}`, (s) => s.impl[fn](entriesOf(v3Entries), leaf()));
				await d.step(`v3 with byId, ${label}`, (s) => {
					const entries = entriesOf(v3Entries);
					return s.impl[fn](entries, leaf(), new Map(entries.map((e) => [e.id, e])));
				});
			}
			await d.step("byId that disagrees with entries", (s) => {
				const entries = entriesOf(v3Entries);
				const byId = new Map(entries.slice(0, 5).map((e) => [e.id, e]));
				return s.impl[fn](entries, "5a000005", byId);
			});
			await d.step("migrated v2", (s) => s.impl[fn](migratedV2(s)));
			await d.step("empty", (s) => s.impl[fn]([]));
			await d.step("empty with leaf", (s) => s.impl[fn]([], "x"));
			await d.step("identity of returned entries/messages", (s) => {
				const entries = entriesOf(v3Entries);
				const out = s.impl[fn](entries, "5a00000d");
				const list = Array.isArray(out) ? out : out.entries ? out.entries.map((p) => p.sourceEntry) : out.messages;
				return list.map((x) => entries.includes(x) || entries.some((e) => e.message === x));
			});
		}, { keep: FIXED_KEEP });
	});
}

// --- object identity, asserted directly on each implementation -------------------------

test("object identity (asserted on both implementations)", async () => {
	await differential("object identity", async (d) => {
		for (const mode of MODES) {
			await d.step(`${mode}: identity rules`, (s) => {
				const sm = start(mode)(s);
				buildRichSession({ sm });
				const message = user("mine");
				// Each append a millisecond after the one before, on both sides: slow runs (under
				// qemu, say) otherwise cross a millisecond where the other side did not.
				waitForNextMs();
				const id = sm.appendMessage(message);
				waitForNextMs();
				const u = usage(7);
				const usageEntry = sm.appendUsage("k", "p", "m", u);
				const entries = sm.getEntries();
				assert.equal(sm.getEntry(id), sm.getEntry(id), "getEntry returns the same object");
				assert.equal(sm.getEntry(id).message, message, "appended message is the caller's object");
				assert.equal(sm.getEntry(usageEntry.id), usageEntry, "appendUsage returns the stored entry");
				assert.equal(usageEntry.usage, u, "usage object is the caller's");
				assert.notEqual(sm.getEntries(), entries, "getEntries returns a fresh array");
				assert.ok(sm.getEntries().every((e, i) => e === entries[i]), "getEntries returns the same objects");
				assert.equal(sm.getHeader(), sm.getHeader(), "getHeader returns the same object");
				assert.ok(sm.getBranch().every((e) => e === sm.getEntry(e.id)), "getBranch returns the stored entries");
				const walk = (nodes) => nodes.every((n) => n.entry === sm.getEntry(n.entry.id) && walk(n.children));
				assert.ok(walk(sm.getTree()), "getTree nodes hold the stored entries");
				const ctx = sm.buildSessionContext();
				assert.ok(ctx.messages.includes(message), "context messages include the caller's message object");
				return true;
			});
		}
		await d.step("persisted: entries loaded from disk keep identity across calls", (s) => {
			const sm = s.SM.create(s.cwd, s.sessionDir);
			buildRichSession({ sm });
			const reopened = s.SM.open(sm.getSessionFile());
			const a = reopened.getEntries();
			const leaf = reopened.getLeafEntry();
			assert.equal(reopened.getEntry(leaf.id), leaf);
			assert.ok(reopened.getEntries().every((e, i) => e === a[i]));
			assert.ok(reopened.getChildren(a[0].id).every((c) => c === reopened.getEntry(c.id)));
			return reopened;
		});
	});
});
