// Type-level tests of index.d.ts against the reference, @earendil-works/pi-coding-agent@1.6.0.
//
//   node --test __test__/types.test.mjs
//
// Runs the TypeScript compiler (node_modules/typescript/bin/tsc, with the current node
// binary) on the projects in __test__/types/ and asserts the exit codes:
//
//   reference  the user sources in src/ against the reference package: they are valid code
//   ours       the same sources with "@earendil-works/pi-coding-agent" mapped to index.d.ts
//   interop    both declaration sets in one program: types assignable both ways, values
//              flowing between our API and the reference's
//   dts        index.d.ts alone without skipLibCheck, plus what only we export
//   package    ESM (.mts) and CommonJS (.cts) consumers importing "pi-session-native" by
//              name with Node16 resolution (package.json "exports"/"types")
//   negative   deliberately wrong code against index.d.ts must fail, with errors on
//              exactly the marked lines
//
// Only index.d.ts is needed; the native binary and the runtime JS files are not.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const typesDir = path.join(root, "__test__", "types");
const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
const indexDts = path.join(root, "index.d.ts");
const TIMEOUT = 180_000;

/** Run tsc on a project; resolves with its exit code and output (never rejects on tsc errors). */
function runTsc(project, extraArgs = []) {
    const args = [tsc, "-p", path.join(typesDir, project), "--pretty", "false", ...extraArgs];
    return new Promise((resolve, reject) => {
        execFile(process.execPath, args, { cwd: root, maxBuffer: 256 * 1024 * 1024, timeout: TIMEOUT }, (error, stdout, stderr) => {
            if (error && typeof error.code !== "number") {
                reject(error);
                return;
            }
            resolve({ code: error ? error.code : 0, stdout, stderr, output: `${stdout}${stderr}` });
        });
    });
}

/** Files listed by `tsc --listFiles`, as absolute paths. */
function listedFiles(stdout) {
    return stdout
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter((line) => line.length > 0 && !/\): error TS\d+/.test(line))
        .map((line) => path.resolve(line));
}

function assertCompiles(result, what) {
    assert.equal(result.code, 0, `${what}: tsc exited with ${result.code}\n${result.output}`);
    assert.doesNotMatch(result.output, /error TS\d+/, `${what}: unexpected errors\n${result.output}`);
}

const isReference = (file) => file.split(path.sep).join("/").includes("/node_modules/@earendil-works/pi-coding-agent/");

test("prerequisites: typescript 5 and the reference package are installed", () => {
    assert.ok(existsSync(tsc), `missing ${tsc}`);
    const tsVersion = JSON.parse(readFileSync(path.join(root, "node_modules", "typescript", "package.json"), "utf8")).version;
    assert.match(tsVersion, /^5\./, `typescript ${tsVersion}`);
    const refPkg = path.join(root, "node_modules", "@earendil-works", "pi-coding-agent", "package.json");
    assert.ok(existsSync(refPkg), "missing @earendil-works/pi-coding-agent");
    assert.equal(JSON.parse(readFileSync(refPkg, "utf8")).version, "1.6.0");
    assert.ok(existsSync(indexDts), "missing index.d.ts");
});

describe("tsc --noEmit", { concurrency: true }, () => {
    test("user sources compile against the reference package", { timeout: TIMEOUT }, async () => {
        const result = await runTsc("tsconfig.reference.json", ["--listFiles"]);
        assertCompiles(result, "reference");
        const files = listedFiles(result.stdout);
        assert.ok(files.some(isReference), "the reference declarations were not part of the program");
        assert.ok(!files.includes(indexDts), "index.d.ts must not be part of the reference program");
    });

    test("the same user sources compile against index.d.ts", { timeout: TIMEOUT }, async () => {
        const result = await runTsc("tsconfig.ours.json", ["--listFiles"]);
        assertCompiles(result, "ours");
        const files = listedFiles(result.stdout);
        assert.ok(files.includes(indexDts), "index.d.ts was not part of the program");
        assert.deepEqual(files.filter(isReference), [], "the reference package leaked into our program");
    });

    test("our types and the reference's are assignable both ways", { timeout: TIMEOUT }, async () => {
        const result = await runTsc("tsconfig.interop.json", ["--listFiles"]);
        assertCompiles(result, "interop");
        const files = listedFiles(result.stdout);
        assert.ok(files.includes(indexDts) && files.some(isReference), "both declaration sets must be in the program");
    });

    test("index.d.ts is self-contained and passes lib checking", { timeout: TIMEOUT }, async () => {
        const result = await runTsc("tsconfig.dts.json", ["--listFiles"]);
        assertCompiles(result, "dts");
        const files = listedFiles(result.stdout);
        const foreign = files.filter((f) => f.split(path.sep).join("/").includes("/node_modules/@earendil-works/"));
        assert.deepEqual(foreign, [], "index.d.ts must not pull in @earendil-works packages");
    });

    test("ESM and CommonJS consumers import the package by name (Node16)", { timeout: TIMEOUT }, async () => {
        const result = await runTsc(path.join("pkg", "tsconfig.json"), ["--listFiles"]);
        assertCompiles(result, "package");
        assert.ok(listedFiles(result.stdout).includes(indexDts), "pi-session-native did not resolve to index.d.ts");
    });

    test("wrong code fails against index.d.ts, on exactly the marked lines", { timeout: TIMEOUT }, async () => {
        const file = path.join(typesDir, "negative", "wrong-usage.ts");
        const expected = readFileSync(file, "utf8")
            .split(/\r?\n/)
            .flatMap((line, i) => (/\/\/ error\b/.test(line) ? [i + 1] : []));
        assert.ok(expected.length >= 10, "the negative file lost its marked lines");

        const result = await runTsc("tsconfig.negative.json");
        assert.notEqual(result.code, 0, `tsc must fail on the negative file\n${result.output}`);
        const errors = [...result.output.matchAll(/^(.*)\((\d+),\d+\): error (TS\d+)/gm)].map((m) => ({
            file: path.resolve(root, m[1]),
            line: Number(m[2]),
            code: m[3],
        }));
        assert.deepEqual(
            errors.filter((e) => e.file !== file),
            [],
            `errors outside the negative file\n${result.output}`,
        );
        const actual = [...new Set(errors.map((e) => e.line))].sort((a, b) => a - b);
        assert.deepEqual(actual, expected, `error lines differ from the marked lines\n${result.output}`);
    });
});
