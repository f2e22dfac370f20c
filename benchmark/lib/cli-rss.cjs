'use strict';
// Preloaded into a benchmarked `pi-sessions` (benchmark/cli.mjs): writes the
// process's peak RSS (KB) to PI_BENCH_RSS_FILE at exit.
const fs = require('fs');
process.on('exit', () => {
  const file = process.env.PI_BENCH_RSS_FILE;
  if (file) fs.writeFileSync(file, String(process.resourceUsage().maxRSS));
});
