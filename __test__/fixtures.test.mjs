// Real pi v1 sessions (../shared/fixtures beside the repository, or PI_FIXTURES_DIR): opening
// migrates them to v3 and rewrites the file; listing and discovery read them as they are.
// Both implementations work on copies. Without the fixtures every test here is skipped, saying why.
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { assistant, user } from "./helpers/data.mjs";
import { differential, setMtime } from "./helpers/harness.mjs";
import { tokensIn } from "./helpers/normalize.mjs";
import { REPO_ROOT } from "./helpers/reference.mjs";

const FIXTURES_DIR = process.env.PI_FIXTURES_DIR
	? path.resolve(process.env.PI_FIXTURES_DIR)
	: path.resolve(REPO_ROOT, "..", "shared", "fixtures");
const MISSING = fs.existsSync(FIXTURES_DIR)
	? undefined
	: `no fixtures at ${FIXTURES_DIR} (put pi's v1 sessions in ../shared/fixtures beside the repository, or set PI_FIXTURES_DIR)`;
const FIXTURES = MISSING
	? []
	: fs
			.readdirSync(FIXTURES_DIR)
			.filter((f) => f.endsWith(".jsonl"))
			.sort()
			.map((name) => ({ name, text: fs.readFileSync(path.join(FIXTURES_DIR, name), "utf8") }));

const headerOf = (text) => JSON.parse(text.slice(0, text.indexOf("\n")));
const KEEP = FIXTURES.flatMap((f) => [...tokensIn(f.text)]);

test("fixtures are present", { skip: MISSING }, () => {
	if (FIXTURES.length < 2) throw new Error(`expected the v1 fixtures in ${FIXTURES_DIR}, found ${FIXTURES.length}`);
});

for (const { name, text } of FIXTURES) {
	test(`open fixture ${name}: migration, entries, tree, context`, async () => {
		await differential(`fixture ${name}`, async (d) => {
			const file = (s) => s.p("files", name);
			await d.setup((s) => fs.writeFileSync(file(s), text));
			await d.step("open (migrates and rewrites)", (s) => s.SM.open(file(s)));
			await d.step("append to migrated session", (s) => s.sm.appendMessage(user("after migration")));
			await d.step("reopen the migrated file", (s) => s.SM.open(file(s)));
			await d.step("branch to the middle and append", (s) => {
				s.sm.branch(s.idAt(0.5));
				return s.sm.appendMessage(assistant("branched"));
			});
			await d.step("createBranchedSession from a late entry", (s) => s.sm.createBranchedSession(s.idAt(0.9)));
			await d.step("forkFrom the original copy", (s) => s.SM.forkFrom(file(s), s.p("fork-target"), s.sessionDir));
		}, { keep: KEEP });
	});

	test(`free functions on fixture ${name}`, async () => {
		await differential(`fixture ${name} (free functions)`, async (d) => {
			await d.step("parseSessionEntries + migrateSessionEntries + buildSessionContext", (s) => {
				const entries = s.impl.parseSessionEntries(text);
				s.impl.migrateSessionEntries(entries);
				const body = entries.filter((e) => e.type !== "session");
				return {
					entries,
					context: s.impl.buildSessionContext(body),
					contextEntries: s.impl.buildContextEntries(body),
					latestCompaction: s.impl.getLatestCompactionEntry(body),
				};
			}, { files: false });
		}, { keep: KEEP });
	});
}

/** A session folder with copies of the fixtures, a non-session .jsonl and a directory named x.jsonl. */
async function populate(d) {
	await d.setup((s) => {
		const projectDir = path.join(s.agentDir, "sessions", "--Users-badlogic-workspaces-pi-mono--");
		for (const dir of [s.sessionDir, projectDir]) {
			fs.mkdirSync(dir, { recursive: true });
			FIXTURES.forEach(({ name, text }, i) => {
				fs.writeFileSync(path.join(dir, name), text);
				setMtime(path.join(dir, name), Date.UTC(2025, 0, 1 + i));
			});
			fs.writeFileSync(path.join(dir, "not-a-session.jsonl"), '{"type":"message","id":"x"}\nhello\n');
			setMtime(path.join(dir, "not-a-session.jsonl"), Date.UTC(2025, 5, 1));
			fs.mkdirSync(path.join(dir, "x.jsonl"));
		}
	});
}

test("list, listAll, findById, continueRecent over fixture copies", { skip: MISSING }, async () => {
	const cwd = headerOf(FIXTURES[0].text).cwd;
	await differential("fixture discovery", async (d) => {
		await populate(d);
		await d.step("list(cwd, dir)", (s) => s.SM.list(cwd, s.sessionDir));
		await d.step("list(other cwd, dir)", (s) => s.SM.list(s.cwd, s.sessionDir));
		await d.step("listAll(dir)", (s) => s.SM.listAll(s.sessionDir));
		await d.step("listAll()", (s) => s.SM.listAll());
		for (const { text } of FIXTURES) {
			const id = headerOf(text).id;
			await d.step(`findById(cwd, ${id}, dir)`, (s) => s.SM.findById(cwd, id, s.sessionDir));
			await d.step(`findById(other cwd, ${id}, dir)`, (s) => s.SM.findById(s.cwd, id, s.sessionDir));
		}
		await d.step("findById(unknown)", (s) => s.SM.findById(cwd, "unknown", s.sessionDir));
		await d.step("continueRecent(cwd, dir): newest fixture, migrated", (s) => s.SM.continueRecent(cwd, s.sessionDir));
		await d.step("continueRecent(other cwd, dir): new session", (s) => s.SM.continueRecent(s.cwd, s.sessionDir));
	}, { keep: KEEP });
});
