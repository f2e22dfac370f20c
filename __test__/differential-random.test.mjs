// Seeded random operation sequences, persisted and in memory, compared with the reference
// after every op (result or error, state, identity, files).
//
//   SEED=123 node --test __test__/differential-random.test.mjs      reproduce a run
//   SEQUENCES=40 OPS=60 SEQUENCE=7                                  size / run one sequence
// Even sequences compare the full state after every op; odd ones compare a light state
// (leaf, count, session file, name) after every op and the full state at the end, so that
// ours also runs paths where entries were never materialized.
import { test } from "node:test";
import { differential } from "./helpers/harness.mjs";
import { baseSeed, Rng } from "./helpers/prng.mjs";
import { applyOp, describeOp, generateOp, isRejectedSetSessionFile, prepareSetSessionFile } from "./helpers/random-ops.mjs";

const SEED = baseSeed();
const SEQUENCES = Number(process.env.SEQUENCES ?? 40);
const OPS = Number(process.env.OPS ?? 60);
const ONLY = process.env.SEQUENCE === undefined ? undefined : Number(process.env.SEQUENCE);

console.log(`# differential-random: SEED=${SEED} SEQUENCES=${SEQUENCES} OPS=${OPS}`);

for (let i = 0; i < SEQUENCES; i++) {
	if (ONLY !== undefined && ONLY !== i) continue;
	const mode = i % 2 === 0 ? "persisted" : "memory";
	const full = Math.floor(i / 2) % 2 === 0;
	const seed = (SEED + Math.imul(i, 0x9e3779b9)) >>> 0;
	test(`random sequence ${i} (${mode}, ${full ? "full" : "light"} state)`, async () => {
		const rng = new Rng(seed);
		const ops = [];
		const info = () =>
			[
				`reproduce: SEED=${SEED} SEQUENCE=${i} node --test __test__/differential-random.test.mjs  (sequence seed ${seed}, ${mode})`,
				"ops so far:",
				...ops.slice(-8).map((op) => `  ${describeOp(op)}`),
			].join("\n");
		await differential(
			`random sequence ${i}`,
			async (d) => {
				const useOptions = rng.bool(0.3);
				await d.step(mode === "persisted" ? "create" : "inMemory", (s) =>
					mode === "persisted"
						? s.SM.create(s.cwd, s.sessionDir, useOptions ? { id: `seq-${i}` } : undefined)
						: s.SM.inMemory(s.cwd, useOptions ? { id: `seq-${i}` } : undefined),
				);
				const state = full ? "full" : "light";
				for (let k = 0; k < OPS; k++) {
					const op = generateOp(rng, mode, k);
					ops.push(op);
					if (isRejectedSetSessionFile(d.ours, op)) {
						// The deliberate difference (README "Differences from the reference": a rejected
						// setSessionFile leaves the manager as it was), asserted by the helper. The sides
						// have diverged (the reference now points at the garbage file), so we resync by
						// reloading, on both sides, the session that was current before the call (its file
						// when persisted, its header and entries when in memory) and go on with the same
						// sequence of ops from there.
						await d.expectRejectedSetSessionFile(describeOp(op), (s) => prepareSetSessionFile(s, op));
						await d.resyncAfterRejectedSetSessionFile({ state });
						continue;
					}
					await d.step(describeOp(op), (s) => applyOp(s, op), { state });
				}
				if (!full) await d.step("final full state", () => undefined);
			},
			{ info },
		);
	});
}
