// Where pi-sessions keeps its listing cache on each OS: the user's own cache folder.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import test from "node:test";

const require = createRequire(import.meta.url);
const { cacheDirFor } = require("../bin/cli/cache.js");

test("the CLI's cache folder: XDG on Linux, Library/Caches on macOS, LOCALAPPDATA on Windows", () => {
	const home = os.homedir();
	assert.equal(cacheDirFor({}, {}, "linux"), path.join(home, ".cache", "pi-session-native"));
	assert.equal(cacheDirFor({}, { XDG_CACHE_HOME: "/x/cache" }, "linux"), path.join("/x/cache", "pi-session-native"));
	// A relative XDG_CACHE_HOME is ignored, as the XDG rules say.
	assert.equal(cacheDirFor({}, { XDG_CACHE_HOME: "rel" }, "linux"), path.join(home, ".cache", "pi-session-native"));
	assert.equal(cacheDirFor({}, { XDG_CACHE_HOME: "/x" }, "darwin"), path.join(home, "Library", "Caches", "pi-session-native"));
	assert.equal(
		cacheDirFor({}, { LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, "win32"),
		"C:\\Users\\u\\AppData\\Local\\pi-session-native\\cache",
	);
	assert.equal(cacheDirFor({}, {}, "win32"), path.win32.join(home, "AppData", "Local", "pi-session-native", "cache"));
	// The variable and --no-cache win everywhere.
	for (const platform of ["linux", "darwin", "win32"]) {
		assert.equal(cacheDirFor({}, { PI_SESSION_NATIVE_CACHE_DIR: "/c" }, platform), "/c");
		assert.equal(cacheDirFor({}, { PI_SESSION_NATIVE_CACHE_DIR: "" }, platform), null);
		assert.equal(cacheDirFor({ "no-cache": true }, {}, platform), null);
	}
});
