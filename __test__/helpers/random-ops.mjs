// Seeded random operation sequences over the whole SessionManager API.
//
// An op is generated once, as plain data, from the PRNG; then applied to each side with its
// own deep copy of every argument. Ops that need an entry id pick it by position in
// getEntries() (`at` in [0, 1)), which is the same entry on both sides.
import fs from "node:fs";
import path from "node:path";
import { CONTEXT_EDIT_REPLACEMENTS, randomMessage, randomText, SESSION_NAMES, usage } from "./data.mjs";

const MISSING = "no-such-id";

/** An entry by position: anywhere in getEntries(), on the active branch (getBranch()), or missing.
 * (contextEdit also uses { editableAt }: among the branch's editable entries.) */
function target(rng, onBranch = 0.3) {
	if (rng.bool(0.08)) return { missing: true };
	return rng.bool(onBranch) ? { branchAt: rng.float() } : { at: rng.float() };
}

function resolve(s, t) {
	if (t === null || t === undefined) return t;
	if (t.missing) return MISSING;
	if (t.editableAt !== undefined) {
		const editable = s.sm
			.getBranch()
			.filter((e) => e.type === "custom_message" || (e.type === "message" && ["user", "assistant", "toolResult"].includes(e.message.role)));
		return editable.length ? editable[Math.floor(t.editableAt * editable.length)].id : undefined;
	}
	if (t.branchAt !== undefined) {
		const branch = s.sm.getBranch();
		return branch.length ? branch[Math.floor(t.branchAt * branch.length)].id : undefined;
	}
	return s.idAt(t.at);
}

const COMMON_OPS = [
	[16, "message"],
	[2, "thinking"],
	[2, "model"],
	[2, "usage"],
	[2, "compaction"],
	[2, "customEntry"],
	[2, "sessionInfo"],
	[2, "customMessage"],
	[3, "contextEdit"],
	[3, "label"],
	[3, "branch"],
	[1, "resetLeaf"],
	[2, "branchWithSummary"],
	[1, "createBranchedSession"],
	[1, "reopen"],
	[0.7, "setSessionFile"],
	[0.5, "newSession"],
];
const PERSISTED_OPS = [
	[0.5, "forkFrom"],
	[0.5, "continueRecent"],
	[0.5, "list"],
];

/** A random op for the given mode ("persisted" | "memory"); k is the op's index. */
export function generateOp(rng, mode, k) {
	const kind = rng.weighted(mode === "persisted" ? [...COMMON_OPS, ...PERSISTED_OPS] : COMMON_OPS);
	const op = { kind, k };
	switch (kind) {
		case "message":
			op.message = randomMessage(rng, k);
			op.label = `appendMessage(${op.message.role})`;
			break;
		case "thinking":
			op.level = rng.pick(["off", "low", "medium", "high", "xhigh"]);
			break;
		case "model":
			op.provider = rng.pick(["anthropic", "openai", "google"]);
			op.modelId = rng.pick(["m-one", "m-two", "m-three"]);
			break;
		case "usage":
			op.kindName = rng.pick(["cache_warm", "other"]);
			op.usage = usage(1 + rng.int(5));
			op.note = rng.pick([undefined, "a note", ""]);
			break;
		case "compaction":
			op.summary = randomText(rng);
			op.firstKept = rng.bool(0.4) ? null : target(rng);
			op.tokensBefore = rng.int(100000);
			op.details = rng.bool(0.5) ? { readFiles: [randomText(rng)], modifiedFiles: [] } : undefined;
			op.fromHook = rng.pick([undefined, true, false]);
			op.usage = rng.bool(0.3) ? usage(2) : undefined;
			break;
		case "customEntry":
			op.customType = rng.pick(["ext-a", "ext-b"]);
			op.data = rng.pick([undefined, { n: rng.int(10) }, [randomText(rng)], "text", 0, null]);
			break;
		case "sessionInfo":
			op.name = rng.bool(0.7) ? rng.pick(SESSION_NAMES) : randomText(rng);
			break;
		case "customMessage":
			op.customType = rng.pick(["ext-a", "ext-b"]);
			op.content = rng.bool(0.5) ? randomText(rng) : [{ type: "text", text: randomText(rng) }];
			op.display = rng.bool();
			op.details = rng.bool(0.5) ? { k: rng.int(10) } : undefined;
			break;
		case "contextEdit": {
			op.target = rng.bool(0.6) ? { editableAt: rng.float() } : target(rng, 0.6);
			const [replLabel, replacement] = rng.bool(0.7) ? rng.pick(CONTEXT_EDIT_REPLACEMENTS.slice(0, 4)) : rng.pick(CONTEXT_EDIT_REPLACEMENTS);
			op.replacement = replacement;
			op.label = `appendContextEdit(${replLabel})`;
			break;
		}
		case "label":
			op.target = target(rng);
			op.value = rng.pick(["bookmark", "important ⭐", "", undefined, "x"]);
			break;
		case "branch":
			op.target = target(rng);
			break;
		case "branchWithSummary":
			op.target = rng.bool(0.2) ? null : target(rng);
			op.summary = rng.bool(0.1) ? "" : randomText(rng);
			op.details = rng.bool(0.3) ? { files: [randomText(rng)] } : undefined;
			op.fromHook = rng.pick([undefined, true, false]);
			op.usage = rng.bool(0.2) ? usage(1) : undefined;
			break;
		case "createBranchedSession":
			op.target = rng.bool(0.2) ? "leaf" : target(rng);
			break;
		case "reopen":
			op.withSessionDir = rng.bool(0.2);
			op.cwdOverride = rng.bool(0.2);
			break;
		case "setSessionFile":
			op.which = rng.pick(["existing", "existing", "current", "new", "empty", "garbage"]);
			op.at = rng.float();
			break;
		case "newSession":
			op.options = rng.pick([undefined, {}, { id: `sess-${k}` }, { parentSession: "/parent/session.jsonl" }, { id: "bad id" }]);
			break;
		case "forkFrom":
			op.source = rng.pick(["current", "existing"]);
			op.at = rng.float();
			op.defaultDir = rng.bool(0.3);
			op.options = rng.pick([undefined, { id: `fork-${k}` }]);
			break;
	}
	op.label ??= kind;
	return op;
}

/** Session files of a side, sorted by name (the same order on both sides). */
function sessionFiles(s) {
	const out = [];
	const visit = (dir) => {
		if (!fs.existsSync(dir)) return;
		for (const name of fs.readdirSync(dir).sort()) {
			const full = path.join(dir, name);
			if (fs.statSync(full).isDirectory()) visit(full);
			else if (name.endsWith(".jsonl")) out.push(full);
		}
	};
	visit(s.root);
	return out;
}

/** Give every session file a distinct, deterministic mtime (name order), so "most recent" is the same on both sides. */
function fixMtimes(s) {
	sessionFiles(s).forEach((file, i) => {
		const t = new Date(Date.UTC(2024, 0, 1) + i * 60000);
		fs.utimesSync(file, t, t);
	});
}

/** The file a setSessionFile op targets on side s (nothing written). */
export function setSessionFileTarget(s, op) {
	if (op.which === "existing") {
		const files = sessionFiles(s);
		return files.length ? files[Math.floor(op.at * files.length)] : s.p("files", `none-${op.k}.jsonl`);
	}
	if (op.which === "current") return s.sm.getSessionFile() ?? s.p("files", `current-${op.k}.jsonl`);
	return s.p("files", `${op.which}-${op.k}.jsonl`);
}

/** Write the file a setSessionFile op creates ("empty", "garbage"), if any; returns its target. */
export function prepareSetSessionFile(s, op) {
	const file = setSessionFileTarget(s, op);
	if (op.which === "empty") fs.writeFileSync(file, "");
	if (op.which === "garbage") fs.writeFileSync(file, "garbage line\n{\n");
	return file;
}

/**
 * Whether the reference rejects this setSessionFile op's file ("Session file is not a valid
 * pi session"): the garbage files, whether just written or picked later as "existing" (they
 * are never modified: a rejected setSessionFile is always followed by a resync).
 * Decided from the op and the (identical) files of side s, before anything runs.
 */
export function isRejectedSetSessionFile(s, op) {
	return op.kind === "setSessionFile" && path.basename(setSessionFileTarget(s, op)).startsWith("garbage-");
}

/** Apply op to side s; returns the op's result (a new SessionManager replaces s.sm). */
export function applyOp(s, op) {
	const c = (v) => (v === undefined ? undefined : s.track({ v: structuredClone(v) }).v);
	const sm = s.sm;
	switch (op.kind) {
		case "message":
			return sm.appendMessage(c(op.message));
		case "thinking":
			return sm.appendThinkingLevelChange(op.level);
		case "model":
			return sm.appendModelChange(op.provider, op.modelId);
		case "usage":
			return sm.appendUsage(op.kindName, "anthropic", "m-one", c(op.usage), op.note);
		case "compaction":
			return sm.appendCompaction(op.summary, resolve(s, op.firstKept), op.tokensBefore, c(op.details), op.fromHook, c(op.usage));
		case "customEntry":
			return sm.appendCustomEntry(op.customType, c(op.data));
		case "sessionInfo":
			return [sm.appendSessionInfo(op.name), sm.getSessionName()];
		case "customMessage":
			return sm.appendCustomMessageEntry(op.customType, c(op.content), op.display, c(op.details));
		case "contextEdit":
			return sm.appendContextEdit(resolve(s, op.target), op.replacement === null ? null : c(op.replacement));
		case "label":
			return [sm.appendLabelChange(resolve(s, op.target), op.value), sm.getLabel(resolve(s, op.target))];
		case "branch":
			return sm.branch(resolve(s, op.target));
		case "resetLeaf":
			return sm.resetLeaf();
		case "branchWithSummary":
			return sm.branchWithSummary(resolve(s, op.target), op.summary, c(op.details), op.fromHook, c(op.usage));
		case "createBranchedSession":
			return sm.createBranchedSession(op.target === "leaf" ? sm.getLeafId() : resolve(s, op.target));
		case "reopen": {
			if (!sm.isPersisted()) {
				// In memory there is no file: rebuild from the entries a caller holds.
				return s.SM.inMemory(sm.getCwd(), undefined, [sm.getHeader(), ...sm.getEntries()]);
			}
			const file = sm.getSessionFile();
			return s.SM.open(file, op.withSessionDir ? s.p("reopen-dir") : undefined, op.cwdOverride ? s.p("override") : undefined);
		}
		case "setSessionFile":
			return sm.setSessionFile(prepareSetSessionFile(s, op));
		case "newSession":
			return sm.newSession(c(op.options));
		case "forkFrom": {
			const files = sessionFiles(s);
			const source =
				op.source === "current" || files.length === 0 ? sm.getSessionFile() : files[Math.floor(op.at * files.length)];
			return s.SM.forkFrom(source, s.p("fork-target"), op.defaultDir ? undefined : s.sessionDir, c(op.options));
		}
		case "continueRecent":
			fixMtimes(s);
			return s.SM.continueRecent(sm.getCwd(), s.sessionDir);
		case "list":
			return s.SM.list(sm.getCwd(), s.sessionDir);
		default:
			throw new Error(`unknown op ${op.kind}`);
	}
}

/** One-line description of an op for failure messages. */
export function describeOp(op) {
	const { kind, k, label, message, ...rest } = op;
	const args = JSON.stringify(rest, (key, v) => (v === undefined ? "<undefined>" : v));
	return `#${k} ${label} ${args.length > 160 ? `${args.slice(0, 160)}...` : args}`;
}
