// How pi-native finds the pi to run, as each installer lays pi out: npm on Windows and pnpm
// put shim scripts on PATH (pi.cmd, pi.ps1, an sh `pi`) that start pi's CLI, not links to
// it, and npm's own global folder on Windows is %APPDATA%\npm. Made-up pi packages stand in
// for pi; nothing is run. Also on Windows Node (npm run test:wine), where PATH holds the
// .cmd shims. Running the found pi with the hook: register.test.mjs.
//
//   node __test__/run.mjs __test__/pi-native.test.mjs
import assert from "node:assert/strict";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";

const require = createRequire(import.meta.url);
const { findPi, shimTarget } = require("../bin/pi-native");
const WINDOWS = process.platform === "win32";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "pi-native-"));
after(() => fs.rmSync(root, { recursive: true, force: true }));

/** A made-up pi package in `prefix`'s global modules (npm's layout on this platform); its CLI's real path. */
function piIn(prefix, modules = WINDOWS ? "node_modules" : path.join("lib", "node_modules")) {
	const dir = path.join(prefix, modules, "@earendil-works", "pi-coding-agent");
	fs.mkdirSync(path.join(dir, "dist"), { recursive: true });
	fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "@earendil-works/pi-coding-agent", version: "1.6.0", bin: { pi: "dist/cli.js" } }));
	fs.writeFileSync(path.join(dir, "dist", "cli.js"), "");
	return fs.realpathSync(path.join(dir, "dist", "cli.js"));
}

function write(dir, name, text) {
	fs.mkdirSync(dir, { recursive: true });
	fs.writeFileSync(path.join(dir, name), text);
	return path.join(dir, name);
}

// npm's cmd-shim, as it writes a global bin's .cmd on Windows (CRLF, the script from the shim's folder)
const CMD = [
	"@ECHO off", "GOTO start", ":find_dp0", "SET dp0=%~dp0", "EXIT /b", ":start", "SETLOCAL", "CALL :find_dp0", "",
	'IF EXIST "%dp0%\\node.exe" (', '  SET "_prog=%dp0%\\node.exe"', ") ELSE (", '  SET "_prog=node"', "  SET PATHEXT=%PATHEXT:;.JS;=;%", ")", "",
	'endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\\node_modules\\@earendil-works\\pi-coding-agent\\dist\\cli.js" %*',
	"",
].join("\r\n");
const PS1 = '#!/usr/bin/env pwsh\n$basedir=Split-Path $MyInvocation.MyCommand.Definition -Parent\n& "node$exe"  "$basedir/node_modules/@earendil-works/pi-coding-agent/dist/cli.js" $args\n';
const SH = (relative) => `#!/bin/sh\nbasedir=$(dirname "$(echo "$0" | sed -e 's,\\\\,/,g')")\nexec node  "$basedir/${relative}" "$@"\n`;

test("a shim's target: npm's .cmd and .ps1, an sh shim (pnpm, npm's for Git Bash), also through ../", () => {
	const prefix = path.join(root, "npm-global");
	const cli = piIn(prefix, "node_modules");
	assert.equal(shimTarget(write(prefix, "pi.cmd", CMD)), cli);
	assert.equal(shimTarget(write(prefix, "pi.ps1", PS1)), cli);
	assert.equal(shimTarget(write(prefix, "pi", SH("node_modules/@earendil-works/pi-coding-agent/dist/cli.js"))), cli);
	assert.equal(shimTarget(write(path.join(root, "pnpm-home"), "pi", SH("../npm-global/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"))), cli);
});

test("a shim of another package, of a script that is not there, or no shim at all is not pi", () => {
	const prefix = path.join(root, "others");
	piIn(prefix, "node_modules");
	assert.equal(shimTarget(write(prefix, "other.cmd", CMD.replace("@earendil-works\\pi-coding-agent", "other"))), null);
	assert.equal(shimTarget(write(prefix, "gone.cmd", CMD.replace("cli.js", "gone.js"))), null);
	assert.equal(shimTarget(write(prefix, "node-only.cmd", '@ECHO off\r\n"%dp0%\\node.exe" %*\r\n')), null);
	assert.equal(shimTarget(path.join(prefix, "missing.cmd")), null);
	// a pi package elsewhere, named by a shim's folder variable, is still checked to be pi's
	const impostor = path.join(root, "impostor", "node_modules", "@earendil-works", "pi-coding-agent");
	fs.mkdirSync(path.join(impostor, "dist"), { recursive: true });
	fs.writeFileSync(path.join(impostor, "package.json"), JSON.stringify({ name: "not-pi", bin: { pi: "dist/cli.js" } }));
	fs.writeFileSync(path.join(impostor, "dist", "cli.js"), "");
	assert.equal(shimTarget(write(path.join(root, "impostor"), "pi.cmd", CMD)), null);
});

test("findPi: the shims npm (on Windows) or pnpm put on PATH, before any global folder", () => {
	const empty = path.join(root, "empty-prefix");
	fs.mkdirSync(empty, { recursive: true });
	if (WINDOWS) {
		// npm's global folder holds the shims beside node_modules, and is on PATH
		const prefix = path.join(root, "win-npm");
		const cli = piIn(prefix);
		write(prefix, "pi.cmd", CMD);
		assert.equal(findPi({ PATH: `${empty};${prefix}`, npm_config_prefix: empty }).file, cli);
	} else {
		const prefix = path.join(root, "pnpm");
		const cli = piIn(prefix, "global/5/node_modules");
		const home = path.join(prefix, "bin");
		write(home, "pi", SH("../global/5/node_modules/@earendil-works/pi-coding-agent/dist/cli.js"));
		assert.equal(findPi({ PATH: `${empty}${path.delimiter}${home}`, npm_config_prefix: empty }).file, cli);
	}
	assert.match(findPi({ PATH: empty, npm_config_prefix: empty, APPDATA: empty }).error, /^pi was not found/);
});

test("findPi: a global pi in npm_config_prefix, and on Windows in npm's default %APPDATA%\\npm", () => {
	const prefix = path.join(root, "configured");
	const cli = piIn(prefix);
	assert.equal(findPi({ PATH: "", npm_config_prefix: prefix }).file, cli);
	if (WINDOWS) {
		const appData = path.join(root, "AppData", "Roaming");
		const inAppData = piIn(path.join(appData, "npm"));
		assert.equal(findPi({ PATH: "", APPDATA: appData }).file, inAppData);
	}
});
