#!/usr/bin/env bash
# Builds the zk-proto fuzz targets with the STABLE toolchain and runs them as libFuzzer binaries.
#
#   bash fuzz/run.sh build           build the targets only
#   bash fuzz/run.sh smoke           build, then run every target for SMOKE_SECONDS (default 15;
#                                    3 targets = 45 s of fuzzing) from the committed corpus;
#                                    exits non-zero if any target crashes, panics, times out or
#                                    runs out of memory
#   bash fuzz/run.sh long SECONDS    run every target for SECONDS, then merge the inputs that
#                                    found new coverage into fuzz/corpus/<target>/
#   bash fuzz/run.sh seed            regenerate the seed files in fuzz/corpus/ (uninstrumented)
#   bash fuzz/run.sh TARGET [ARGS]   run one built target with libFuzzer arguments, e.g. to
#                                    reproduce a crash: bash fuzz/run.sh roundtrip fuzz/artifacts/roundtrip/crash-...
#
# See fuzz/README.md for why the build looks like this.
set -euo pipefail

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$FUZZ_DIR"

TARGETS=(server_frames client_frames roundtrip)
HOST="$(rustc -vV | sed -n 's/^host: //p')"
BIN_DIR="$FUZZ_DIR/target/$HOST/release"

# SanitizerCoverage through stable -C options: the same instrumentation cargo-fuzz asks for
# (inline 8-bit edge counters, the PC table libFuzzer needs for `cov:`, and comparison tracing
# so it can solve magic values such as opcodes and lengths), minus AddressSanitizer, which needs
# the unstable -Zsanitizer. `--cfg fuzzing` is what fuzz-aware crates test for. Debug assertions
# and overflow checks are switched on in fuzz/Cargo.toml's release profile.
SANCOV_RUSTFLAGS="-Cpasses=sancov-module \
-Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
-Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares \
--cfg fuzzing"

COMMON_ARGS=(-rss_limit_mb=2048 -max_len=65536 -timeout=10 -print_final_stats=1)

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

build() {
    echo "== building fuzz targets for $HOST (stable, SanitizerCoverage via RUSTFLAGS)"
    # --target keeps RUSTFLAGS away from build scripts and proc macros (thiserror), which must
    # not be instrumented: they would not link without libFuzzer.
    RUSTFLAGS="$SANCOV_RUSTFLAGS" cargo build --release --target "$HOST" \
        $(printf -- '--bin %s ' "${TARGETS[@]}")
}

# run_target NAME SECONDS WORK_DIR: fuzzes NAME for SECONDS, writing new inputs to WORK_DIR and
# reading the committed corpus; prints one summary line to $SUMMARY. Returns libFuzzer's status.
run_target() {
    local name="$1" secs="$2" work="$3"
    local log="$LOG_DIR/$name.log"
    mkdir -p "$work" "corpus/$name" "artifacts/$name"
    local start end status=0
    start=$EPOCHREALTIME
    "$BIN_DIR/$name" "${COMMON_ARGS[@]}" -max_total_time="$secs" \
        -artifact_prefix="artifacts/$name/" "$work" "corpus/$name" >"$log" 2>&1 || status=$?
    end=$EPOCHREALTIME
    local runs execs cov ft
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    execs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
    ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2 || true)
    printf '%-14s %6s %9.1f %12s %10s %6s %6s\n' "$name" \
        "$([ "$status" = 0 ] && echo ok || echo FAIL:$status)" \
        "$(elapsed "$start" "$end")" "${runs:-?}" "${execs:-?}" "${cov:-?}" "${ft:-?}" >>"$SUMMARY"
    if [ "$status" != 0 ]; then
        echo "!! $name failed (exit $status); last lines of $log:" >&2
        tail -40 "$log" >&2
        ls -1 "artifacts/$name/" >&2 || true
    fi
    return "$status"
}

fuzz_all() {
    local secs="$1" mode="$2"
    LOG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/zk-fuzz-logs.XXXXXX")"
    SUMMARY="$LOG_DIR/summary"
    printf '%-14s %6s %9s %12s %10s %6s %6s\n' target status wall_s runs execs/s cov ft >"$SUMMARY"
    local failed=() t0 t1
    t0=$EPOCHREALTIME
    for t in "${TARGETS[@]}"; do
        echo "== fuzzing $t for ${secs}s (log: $LOG_DIR/$t.log)"
        local work="$LOG_DIR/new-$t"
        if ! run_target "$t" "$secs" "$work"; then
            failed+=("$t")
            continue
        fi
        if [ "$mode" = long ]; then
            # Keep only the inputs that add coverage to the committed corpus.
            "$BIN_DIR/$t" -merge=1 "${COMMON_ARGS[@]}" "corpus/$t" "$work" \
                >"$LOG_DIR/$t.merge.log" 2>&1 || failed+=("$t(merge)")
            echo "   corpus/$t: $(find "corpus/$t" -type f | wc -l) files"
        fi
    done
    t1=$EPOCHREALTIME
    echo
    cat "$SUMMARY"
    printf 'total fuzzing wall time: %.1f s\n' "$(elapsed "$t0" "$t1")"
    if [ "${#failed[@]}" != 0 ]; then
        echo "FAILED: ${failed[*]} (reproduce: bash fuzz/run.sh TARGET fuzz/artifacts/TARGET/<file>)" >&2
        exit 1
    fi
    rm -rf "$LOG_DIR"
}

cmd="${1:-smoke}"
case "$cmd" in
build)
    build
    ;;
smoke)
    build
    fuzz_all "${SMOKE_SECONDS:-15}" smoke
    ;;
long)
    secs="${2:?usage: bash fuzz/run.sh long SECONDS}"
    build
    fuzz_all "$secs" long
    ;;
seed)
    # Seeds come from zk-proto's own encoders; built without instrumentation (no --target, no
    # RUSTFLAGS), into fuzz/target/release.
    env -u RUSTFLAGS cargo run --release --example seed -- corpus
    ;;
*)
    if [[ " ${TARGETS[*]} " == *" $cmd "* ]]; then
        shift
        [ -x "$BIN_DIR/$cmd" ] || build
        exec "$BIN_DIR/$cmd" "${COMMON_ARGS[@]}" "$@"
    fi
    echo "usage: bash fuzz/run.sh build | smoke | long SECONDS | seed | TARGET [libFuzzer args]" >&2
    exit 2
    ;;
esac
