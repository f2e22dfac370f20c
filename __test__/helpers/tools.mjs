// Tests that need a tool beyond Node, npm and Rust (see scripts/tools.mjs): skipped, saying
// why, where it is missing; with CI=true, a failure instead.
import assert from "node:assert/strict";
import { test } from "node:test";
import { STRICT } from "../../scripts/tools.mjs";

/**
 * The `skip` option for tests that need a tool: false when `missing` is null; else the reason,
 * which node --test prints with each skipped test. With CI=true one more test is registered,
 * failing with the reason, so that CI cannot pass by skipping.
 */
export function skipForMissingTool(missing) {
	if (!missing) return false;
	if (STRICT) {
		test(`a tool these tests need is missing: ${missing}`, () => {
			assert.fail(`${missing} (CI=true: a missing tool is a failure)`);
		});
	}
	return missing;
}
