// Runs the walks of helpers/walks.mjs on the reference, in a child process that the
// test kills when one of them does not return (the reference loops on some inputs).
//   node walks-child.mjs CASES.json START_CASE START_OP OP_TIME_LIMIT_MS
// Prints one JSON line per operation: { c, k, result }, { c, k, error } or, for an
// operation stopped at the time limit, { c, k, loops: true }. One that runs out of
// memory first ends the process: the test starts another after it.
import fs from "node:fs";
import vm from "node:vm";
import { pathToFileURL } from "node:url";
import { REFERENCE_FILE } from "./reference.mjs";
import { opsFor, runOp } from "./walks.mjs";

const reference = await import(pathToFileURL(REFERENCE_FILE).href);
const [casesFile, startCase, startOp, limit] = process.argv.slice(2);
// vm's timeout interrupts synchronous code, also inside the functions it calls.
const runLimited = new vm.Script("globalThis.__op()");
const cases = JSON.parse(fs.readFileSync(casesFile, "utf8"));
for (let c = Number(startCase); c < cases.length; c++) {
	const sm = reference.SessionManager.open(cases[c].file);
	const ops = opsFor(sm.getEntries());
	for (let k = c === Number(startCase) ? Number(startOp) : 0; k < ops.length; k++) {
		let line;
		globalThis.__op = () => runOp(reference, sm, ops[k]);
		try {
			line = { c, k, result: runLimited.runInThisContext({ timeout: Number(limit) }) };
		} catch (error) {
			line = error?.code === "ERR_SCRIPT_EXECUTION_TIMEOUT" ? { c, k, loops: true } : { c, k, error: String(error?.message ?? error) };
		}
		fs.writeSync(1, `${JSON.stringify(line)}\n`);
	}
}
