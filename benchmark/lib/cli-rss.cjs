'use strict';
// Preloaded into a benchmarked `pi-sessions` (benchmark/cli.mjs): writes the
// process's peak RSS (KB) and CPU time (user + system, µs, every thread) to
// PI_BENCH_RSS_FILE at exit.
const fs = require('fs');
process.on('exit', () => {
  const file = process.env.PI_BENCH_RSS_FILE;
  const usage = process.resourceUsage();
  if (file) fs.writeFileSync(file, `${usage.maxRSS} ${usage.userCPUTime + usage.systemCPUTime}`);
});
