// pi-session-native/register for `--import`: the hook is register.cjs (see there), loaded
// only where there is a main script to look at (not for node -e, nor a REPL).
import { createRequire } from "node:module";

if (process.argv[1]) createRequire(import.meta.url)("./register.cjs");
