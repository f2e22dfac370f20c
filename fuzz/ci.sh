#!/usr/bin/env bash
# Fuzz smoke run: installs cargo-fuzz if it is missing, builds the fuzz targets
# and runs each one for a while from its seeds (fuzz/corpus/<target>/).
# Fails when any target crashes (a panic, an abort, a stack overflow, a memory
# error, an input slower than 10 s or a process over 2 GiB).
#
#   bash fuzz/ci.sh                   # every target, 60 s each
#   FUZZ_SECONDS=300 bash fuzz/ci.sh  # longer
#   bash fuzz/ci.sh line_parser       # some targets only
#   FUZZ_SEED=random bash fuzz/ci.sh  # libFuzzer picks the seed (explore)
#
# The seed is fixed by default (FUZZ_SEED=1), so that CI on unchanged code
# walks the same inputs and a red run is a change's doing; longer runs with
# other seeds explore (see fuzz/README.md).
#
# Works with the stable toolchain alone: RUSTC_BOOTSTRAP=1 lets it take the
# -Z flags libFuzzer's instrumentation needs. New inputs libFuzzer finds go to
# a scratch folder, so the seeds in the repository stay as they are; a crash
# is saved in fuzz/artifacts/<target>/ (not committed) and the script says how
# to replay it.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
SEED="${FUZZ_SEED:-1}"
seed_flag=()
if [ "$SEED" != "random" ]; then
    seed_flag=(-seed="$SEED")
fi
CARGO_FUZZ_VERSION="${CARGO_FUZZ_VERSION:-0.13.2}"
export RUSTC_BOOTSTRAP=1
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    targets=(line_parser session_file)
fi

start=$(date +%s)
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "== installing cargo-fuzz $CARGO_FUZZ_VERSION from crates.io"
    cargo install cargo-fuzz --locked --version "$CARGO_FUZZ_VERSION"
fi
cargo fuzz --version

# Scratch space in memory where there is some: session_file writes, fsyncs and
# renames files for every input, twice as fast on tmpfs as on a disk.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    scratch_base=/dev/shm
else
    scratch_base="${TMPDIR:-/tmp}"
fi
scratch=$(mktemp -d "$scratch_base/pisn-fuzz-ci.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# The session_file target makes its scratch files under TMPDIR.
mkdir -p "$scratch/tmp"

echo "== building ${targets[*]}"
for target in "${targets[@]}"; do
    cargo fuzz build "$target"
done
built=$(date +%s)

failed=()
summary=()
crash_report=()
for target in "${targets[@]}"; do
    echo "== fuzzing $target for ${SECONDS_PER_TARGET}s (seed $SEED)"
    mkdir -p "$scratch/corpus/$target"
    log="$scratch/$target.log"
    status=0
    TMPDIR="$scratch/tmp" cargo fuzz run "$target" \
        "$scratch/corpus/$target" "fuzz/corpus/$target" -- \
        -max_total_time="$SECONDS_PER_TARGET" \
        -max_len=8192 \
        -timeout=10 \
        -rss_limit_mb=2048 \
        -print_final_stats=1 \
        ${seed_flag[@]+"${seed_flag[@]}"} \
        >"$log" 2>&1 || status=$?
    # The progress lines are many; keep the interesting ones.
    grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)|^"|^[[:space:]]*NEW_FUNC' "$log" | tail -n 60 || true
    runs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}' | tail -n 1)
    if [ "$status" -ne 0 ]; then
        failed+=("$target")
        summary+=("$target: CRASH (exit $status) after ${runs:-?} runs; artifact in fuzz/artifacts/$target/")
        echo "== $target crashed: replay with"
        echo "   RUSTC_BOOTSTRAP=1 cargo fuzz run $target fuzz/artifacts/$target/<file>"
        # CI keeps only part of a long log: repeat what identifies the crash
        # (the panic or sanitizer message, the input) at the end.
        artifact=$(ls -t "fuzz/artifacts/$target"/* 2>/dev/null | head -n 1 || true)
        report=$(grep -m 4 -A 3 -E 'panicked at|^ERROR: |^SUMMARY: |deadly signal|stack overflow' "$log" || true)
        crash_report+=("$target: ${report:-no panic message in the log}")
        if [ -n "$artifact" ]; then
            crash_report+=("$target input ($(wc -c <"$artifact") bytes, base64): $(base64 -w0 "$artifact")")
        fi
    else
        summary+=("$target: ok, ${runs:-?} runs in ${SECONDS_PER_TARGET}s")
    fi
done
end=$(date +%s)

echo "== summary (install and build $((built - start))s, fuzzing $((end - built))s)"
printf '   %s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
    printf '%s\n' "${crash_report[@]}"
    echo "== FAILED: ${failed[*]}"
    exit 1
fi
echo "== all fuzz targets passed"
