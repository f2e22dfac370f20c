// The addon under test has the OS layer the run asked for: "linux" (inotify, openat,
// copy_file_range) by default on Linux, "portable" (std only, what macOS and Windows
// run) everywhere else and when the run sets PI_SESSION_NATIVE_EXPECT_IO=portable
// (scripts/test-portable.mjs), so that a run meant to test the portable code cannot
// pass while loading the other build.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import test from "node:test";

const require = createRequire(import.meta.url);
const native = require("../lib/native.js");

test("the addon has the OS layer this run expects", () => {
	const expected = process.env.PI_SESSION_NATIVE_EXPECT_IO ?? (process.platform === "linux" ? "linux" : "portable");
	assert.equal(native.ioImplementation(), expected);
});
