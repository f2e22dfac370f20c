#!/usr/bin/env node
// `npm run test:portable`: the whole Rust and JS suites once more with the portable
// implementation of the OS layer (the `portable-io` feature: std only, no folder watch,
// path-based stat, buffered range copies), which is what macOS and Windows run, so that
// their code is tested on Linux too. The addon is built into target/portable-io and
// loaded through NAPI_RS_NATIVE_LIBRARY_PATH; __test__/io-implementation.test.mjs
// fails if the run loaded the other build.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const OUT = path.join("target", "portable-io");
const run = (cmd, args, env = {}) =>
	execFileSync(cmd, args, { cwd: ROOT, stdio: "inherit", env: { ...process.env, ...env } });

run("cargo", ["clippy", "--all-targets", "--features", "portable-io", "--", "-D", "warnings"]);
run("cargo", ["test", "--quiet", "--features", "portable-io"]);
run("npx", ["napi", "build", "--platform", "--release", "--features", "portable-io", "--output-dir", OUT, "--no-js"]);
const addon = path.join(ROOT, OUT, `pi-session-native.${platformName()}.node`);
run(process.execPath, ["__test__/run.mjs", "--one-node"], {
	NAPI_RS_NATIVE_LIBRARY_PATH: addon,
	PI_SESSION_NATIVE_EXPECT_IO: "portable",
});

function platformName() {
	const { platform, arch } = process;
	if (platform === "linux") {
		const glibc = process.report?.getReport().header.glibcVersionRuntime;
		return `linux-${arch}-${glibc ? "gnu" : "musl"}`;
	}
	return platform === "win32" ? `win32-${arch}-msvc` : `${platform}-${arch}`;
}
