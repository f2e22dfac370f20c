#!/usr/bin/env node
// What 10,000 appendMessage() calls cannot avoid, next to what each side spends.
//
//   node benchmark/append-floor.mjs [--rounds N]
//
// In each round, in fresh child processes (one per line below), on a copy of the
// 10 MB benchmark session and the benchmark's own 10,000 messages:
//   stringify        JSON.stringify of each entry the way appendMessage builds it
//   stringify+write  the same, plus one fs.writeSync of the line to a kept descriptor
//   reference        the reference's appendMessage (JSON.stringify + appendFileSync)
//   ours             this package's appendMessage
// Medians over the rounds, and each one's ratio to the reference. The first two
// are the floor of any implementation that writes each line before returning.

import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DATA_DIR, REFERENCE_MODULE, REPO_ROOT, sessionPath } from "./lib/datasets.mjs";

const WORKER = `
import { appendFileSync, copyFileSync, openSync, writeSync } from "node:fs";
import { appendMessages } from ${JSON.stringify(join(REPO_ROOT, "benchmark/lib/append-messages.mjs"))};
const [mode, file, copy, modulePath] = process.argv.slice(1);
copyFileSync(file, copy);
const msgs = appendMessages(10000);
let run;
if (mode === "stringify" || mode === "stringify+write") {
  const fd = openSync(copy, "a");
  const write = mode === "stringify+write";
  run = () => {
    let parentId = "00000000";
    for (let i = 0; i < msgs.length; i++) {
      const id = (i + 1).toString(16).padStart(8, "0");
      const line = JSON.stringify({ type: "message", id, parentId, timestamp: new Date().toISOString(), message: msgs[i] });
      if (write) writeSync(fd, line + "\\n");
      parentId = id;
    }
  };
} else {
  const { SessionManager } = await import(modulePath);
  const sm = SessionManager.open(copy);
  run = () => { for (const m of msgs) sm.appendMessage(m); };
}
const t0 = performance.now();
run();
process.stdout.write(String(performance.now() - t0));
`;

function main() {
  const roundsArg = process.argv.indexOf("--rounds");
  const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 5;
  const file = sessionPath("session-10mb");
  const tmp = join(DATA_DIR, "tmp", "append-floor");
  mkdirSync(tmp, { recursive: true });
  const modes = [
    ["stringify", null],
    ["stringify+write", null],
    ["reference", REFERENCE_MODULE],
    ["ours", join(REPO_ROOT, "index.js")],
  ];
  const times = Object.fromEntries(modes.map(([m]) => [m, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [mode, modulePath] of modes) {
      const copy = join(tmp, `${mode.replace("+", "-")}.jsonl`);
      const out = spawnSync(process.execPath, ["--input-type=module", "-e", WORKER, mode, file, copy, modulePath ?? ""], {
        encoding: "utf8",
      });
      if (out.status !== 0) throw new Error(`${mode}: ${out.stderr}`);
      times[mode].push(Number(out.stdout));
      rmSync(copy, { force: true });
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ref = median(times.reference);
  console.log(`10,000 appendMessage() on a copy of the 10 MB session, ${rounds} rounds, Node ${process.version}`);
  for (const [mode] of modes) {
    const m = median(times[mode]);
    console.log(`${mode.padEnd(16)} median ${m.toFixed(1).padStart(7)} ms   ${(m / ref).toFixed(2)}x the reference`);
  }
  rmSync(tmp, { recursive: true, force: true });
}

main();
