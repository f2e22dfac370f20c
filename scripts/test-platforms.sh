#!/usr/bin/env bash
# `npm run test:platforms`: the targets other than this host's, built and tested here.
# .ci/run calls it after `npm test`; it needs root (or sudo) to install the toolchain.
#   1. installs the cross toolchain (scripts/platform-toolchain.sh, from the registries);
#   2. builds and packs every target (pack-all --all-targets): linux-x64-gnu, -x64-musl,
#      -arm64-gnu, -arm64-musl, darwin-x64, -arm64; type-checks win32-x64-msvc, -arm64-msvc;
#   3. runs the Rust tests for aarch64-unknown-linux-gnu under qemu;
#   4. installs the packed linux-arm64-gnu package and runs a smoke check and JS tests with
#      arm64 Node under qemu (scripts/qemu-arm64-check.mjs);
#   5. builds x86_64-pc-windows-gnu and runs a smoke check and JS tests with Windows Node
#      under wine (scripts/test-wine.sh, about a minute once the build is cached).
# Each step prints its time. Strict: a missing tool or a failing step fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

# JS test files run on arm64 Node against the installed linux-arm64-gnu package.
ARM64_JS_TESTS=(__test__/differential.test.mjs __test__/doctor.test.mjs)

step() { # <label> <command...>
  local label=$1 started=$SECONDS
  shift
  echo "== test:platforms: $label"
  "$@"
  echo "== test:platforms: $label: $((SECONDS - started)) s"
}

toolchain_output=$(mktemp)
trap 'rm -f "$toolchain_output"' EXIT
step "install the cross toolchain" bash -c "bash scripts/platform-toolchain.sh --windows | tee '$toolchain_output'"
node_arm64=$(sed -n 's/^NODE_ARM64=//p' "$toolchain_output")

step "build and pack every target" node scripts/pack-all.mjs --all-targets

# Release, linked by zig as the addon is: it reuses the addon's dependency builds, and the
# tests run in seconds under qemu (a debug build takes minutes there).
arm64_cargo_tests() {
  CARGO=/usr/bin/cargo RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
    CARGO_TARGET_DIR="$(node -e 'import("./scripts/build-target.mjs").then((m) => console.log(m.crossTargetRoot()))')/aarch64-unknown-linux-gnu" \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L /usr/aarch64-linux-gnu" \
    cargo-zigbuild test -Zbuild-std=std,panic_abort --target aarch64-unknown-linux-gnu.2.17 --release --lib
}
step "cargo test for aarch64-unknown-linux-gnu under qemu" arm64_cargo_tests

step "linux-arm64-gnu package under qemu: smoke check and ${ARM64_JS_TESTS[*]}" \
  node scripts/qemu-arm64-check.mjs "$node_arm64" "${ARM64_JS_TESTS[@]}"

step "win32-x64 (windows-gnu build) on Windows Node under wine" bash scripts/test-wine.sh
