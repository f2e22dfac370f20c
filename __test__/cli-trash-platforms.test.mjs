// pi-sessions rm's trash step on each OS's rules: the `trash` command where there is
// one; without it the freedesktop.org trash folder on Linux, and on macOS and Windows
// (whose bins are elsewhere) one clear line that names --force, the file left as it was.
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import test from "node:test";

const require = createRequire(import.meta.url);
const { trashFile } = require("../bin/cli/commands/rm.js");

function withPath(dir, fn) {
	const saved = { PATH: process.env.PATH, XDG_DATA_HOME: process.env.XDG_DATA_HOME };
	process.env.PATH = dir;
	process.env.XDG_DATA_HOME = path.join(dir, "data");
	try {
		return fn();
	} finally {
		for (const [k, v] of Object.entries(saved)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	}
}

test("without a trash command: the trash folder on Linux, a clear refusal on macOS and Windows", { skip: process.platform === "win32" && "runs the Unix side of each rule" }, () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-trash-"));
	const file = path.join(dir, "2024-01-01T00-00-00-000Z_a.jsonl");
	fs.writeFileSync(file, '{"type":"session"}\n');
	for (const platform of ["darwin", "win32"]) {
		// win32's cmd.exe is not here either: both report a missing command.
		assert.throws(
			() => withPath(dir, () => trashFile(file, platform)),
			(e) => e.message.includes("no `trash` command") && e.message.includes("--force") && !e.message.includes("\n"),
		);
		assert.equal(fs.readFileSync(file, "utf8"), '{"type":"session"}\n');
	}
	assert.equal(
		withPath(dir, () => trashFile(file, "linux")),
		"trash folder",
	);
	assert.equal(fs.existsSync(file), false);
	assert.deepEqual(fs.readdirSync(path.join(dir, "data", "Trash", "files")), [path.basename(file)]);
	fs.rmSync(dir, { recursive: true, force: true });
});

test("with a trash command, every platform uses it", { skip: process.platform === "win32" && "a shell script stands in for trash" }, () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pisn-trash-"));
	const bin = path.join(dir, "bin");
	fs.mkdirSync(bin);
	fs.writeFileSync(path.join(bin, "trash"), `#!/bin/sh\nexec /bin/mv "$1" "${dir}/binned"\n`, { mode: 0o755 });
	for (const platform of ["linux", "darwin"]) {
		const file = path.join(dir, `${platform}.jsonl`);
		fs.writeFileSync(file, "x\n");
		assert.equal(withPath(bin, () => trashFile(file, platform)), "trash");
		assert.equal(fs.readFileSync(path.join(dir, "binned"), "utf8"), "x\n");
	}
	fs.rmSync(dir, { recursive: true, force: true });
});
