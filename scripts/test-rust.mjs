#!/usr/bin/env node
// `npm run test:rust`: cargo fmt --check (the crate and the fuzz targets, which are outside its
// workspace), cargo clippy (warnings are errors), cargo test.
//
// cargo test always runs. rustfmt and clippy come with rustup's default profile, but not
// with a distribution's Rust (Debian's rustc-web has neither, and its rustfmt and
// rust-clippy packages belong to an older rustc): without them, those two checks say they
// were skipped and why (a failure with CI=true).
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { skipped } from "./tools.mjs";

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const run = (args) => spawnSync("cargo", args, { cwd: ROOT, stdio: "inherit" });
const available = (subcommand) => spawnSync("cargo", [subcommand, "--version"], { cwd: ROOT, stdio: "ignore" }).status === 0;

function main() {
	const lints = [
		{ subcommand: "fmt", args: ["fmt", "--check"], install: "rustup component add rustfmt" },
		{ subcommand: "fmt", args: ["fmt", "--check", "--manifest-path", "fuzz/Cargo.toml"], install: "rustup component add rustfmt" },
		{ subcommand: "clippy", args: ["clippy", "--all-targets", "--", "-D", "warnings"], install: "rustup component add clippy" },
	];
	let failed = 0;
	for (const { subcommand, args, install } of lints) {
		const command = `cargo ${args.join(" ")}`;
		if (!available(subcommand)) {
			failed = skipped(command, `\`cargo ${subcommand}\` is not installed with this Rust (${install}; a distribution's Rust may not have it)`) || failed;
			continue;
		}
		console.log(`test:rust: ${command}`);
		// a lint that fails stops here, as the && chain this replaces did
		const status = run(args).status ?? 1;
		if (status !== 0) return status;
	}
	console.log("test:rust: cargo test --quiet");
	const tests = run(["test", "--quiet"]);
	if (tests.error) {
		console.error(`test:rust: cargo: ${tests.error.message} (the README's prerequisites: Rust from rustup or the distribution)`);
		return 1;
	}
	return tests.status || failed;
}

process.exitCode = main();
