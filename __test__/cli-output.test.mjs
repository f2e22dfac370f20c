// The command line's table output (bin/cli/output.js): a listing collapses only the head of
// a long first message (oneLine with a column count); the table it prints must be the one
// the whole message gives, at every width, for texts of wide, zero-width, surrogate-pair,
// lone-surrogate and whitespace characters. Seeded; prints the seed.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";
import { baseSeed, Rng } from "./helpers/prng.mjs";

const require = createRequire(import.meta.url);
const out = require("../bin/cli/output.js");
const SEED = baseSeed();

const PIECES = ["\u00a0", "\u2028", "\r\n", "\u3000", "a", "word ", " ", "\n\n", "\t ", "漢", "字", "😀", "\u0301", "\u0007", "\ud83d", "\ude00", "ｗ", "-", "  \n  "];

function randomText(rng) {
	const n = rng.weighted([[3, rng.int(40)], [3, 100 + rng.int(600)], [1, 2000 + rng.int(4000)]]);
	let text = "";
	// Some texts are mostly one kind of character (all wide, all zero-width, all spaces).
	const only = rng.bool(0.3) ? rng.pick(PIECES) : null;
	for (let i = 0; i < n; i++) text += only && rng.bool(0.9) ? only : rng.pick(PIECES);
	return text;
}

test(`listing rows: the cut first message prints the same table as the whole one (SEED=${SEED})`, () => {
	const rng = new Rng(SEED);
	const columns = [{ title: "MSGS", align: "right" }, { title: "NAME / FIRST MESSAGE", flex: true }, { title: "ID" }];
	let cut = 0;
	for (let round = 0; round < 400; round++) {
		const width = rng.pick([1, 5, 10, 11, 40, 80, 120, 200]);
		const texts = Array.from({ length: 1 + rng.int(6) }, () => randomText(rng));
		const shown = Math.max(width, 10);
		const rows = (line) => texts.map((t, i) => [String(i), line(t), "01234567"]);
		const whole = out.table(rows((t) => out.oneLine(t)), columns, { width, paint: out.painter({ isTTY: false }) });
		const headed = out.table(rows((t) => out.oneLine(t, shown)), columns, { width, paint: out.painter({ isTTY: false }) });
		assert.equal(headed, whole, `round ${round}, width ${width}`);
		for (const t of texts) assert.equal(out.oneLine(t), t.replace(/\s+/g, " ").trim(), "every whitespace run as one space, trimmed");
		cut += texts.filter((t) => out.oneLine(t, shown) !== out.oneLine(t)).length;
	}
	assert.ok(cut > 100, `long texts were cut (${cut})`);
});
