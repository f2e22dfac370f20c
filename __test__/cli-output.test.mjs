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

/** The table as first written (map, pad, join per row): the spec the faster one must match. */
function specTable(rows, columns, { width, paint, header = true }) {
	const cells = rows.map((row) => row.map((c) => String(c ?? "")));
	const flex = columns.findIndex((c) => c.flex);
	const cap = (i) => (i === flex ? Math.max(width, 10) : Infinity);
	const cellWidths = cells.map((row) => row.map((c, i) => out.displayWidth(c, cap(i))));
	const widths = columns.map((col, i) => Math.max(header ? out.displayWidth(col.title) : 0, ...cellWidths.map((r) => r[i])));
	if (flex !== -1 && width !== Infinity) {
		const others = widths.reduce((sum, w, i) => (i === flex ? sum : sum + w), 0) + 2 * (columns.length - 1);
		widths[flex] = Math.max(10, Math.min(widths[flex], width - others));
	}
	const pad = (text, w, target, start) => (start ? " ".repeat(Math.max(0, target - w)) + text : text + " ".repeat(Math.max(0, target - w)));
	const line = (values, colour, measured) =>
		values
			.map((value, i) => {
				let cut = value;
				let w = measured ? measured[i] : out.displayWidth(value);
				if (i === flex && w > widths[i]) {
					// Code point by code point, as first written.
					let kept = "";
					let used = 0;
					for (const ch of value) {
						const cw = out.displayWidth(ch);
						if (used + cw > widths[i] - 1) break;
						kept += ch;
						used += cw;
					}
					cut = widths[i] <= 0 ? "" : `${kept}…`;
					w = out.displayWidth(cut);
				}
				const last = i === values.length - 1;
				const padded = columns[i].align === "right" ? pad(cut, w, widths[i], true) : last ? cut : pad(cut, w, widths[i], false);
				const paintWith = colour ?? columns[i].colour;
				return paintWith ? paint[paintWith](padded) : padded;
			})
			.join("  ")
			.trimEnd();
	const lines = [];
	if (header) lines.push(line(columns.map((c) => c.title), "bold"));
	cells.forEach((row, r) => lines.push(line(row, undefined, cellWidths[r])));
	return lines.join("\n");
}

test(`table: the same lines as the first-written table, colour on and off, any width (SEED=${SEED})`, () => {
	const rng = new Rng(SEED ^ 0x5eed);
	const previous = process.env.FORCE_COLOR;
	try {
		for (let round = 0; round < 300; round++) {
			const count = 1 + rng.int(4);
			const flex = rng.bool(0.8) ? rng.int(count) : -1;
			const columns = Array.from({ length: count }, (_, i) => ({
				title: rng.pick(["", "ID", "NAME / FIRST MESSAGE", "漢字"]),
				...(rng.bool(0.3) && { align: "right" }),
				...(rng.bool(0.4) && { colour: rng.pick(["dim", "cyan", "blue"]) }),
				...(i === flex && { flex: true }),
			}));
			const rows = Array.from({ length: rng.int(5) }, () => Array.from({ length: count }, () => (rng.bool(0.1) ? undefined : randomText(rng).slice(0, rng.int(300)))));
			process.env.FORCE_COLOR = rng.bool() ? "1" : "0";
			const options = { width: rng.pick([Infinity, 1, 8, 10, 12, 40, 80, 120]), paint: out.painter({ isTTY: false }), header: rng.bool(0.8) };
			assert.equal(out.table(rows, columns, options), specTable(rows, columns, options), `round ${round}`);
		}
	} finally {
		if (previous === undefined) delete process.env.FORCE_COLOR;
		else process.env.FORCE_COLOR = previous;
	}
});
