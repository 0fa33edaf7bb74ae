#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for SECONDS each (MNEME_FUZZ_JOBS at once), over
# its seed corpus tests/fuzz/corpus/<name>/ (read only: new inputs go to a scratch
# directory). Builds nothing: the targets come from $MNEME_FUZZ_BUILD (default
# ./build-fuzz), configured as docs/hardening.md says. Fails on any crash, leak,
# timeout or broken invariant; the input that did it is kept as
# $MNEME_FUZZ_OUT/<name>/crash-* (add it to the corpus once the bug is fixed).
# Usage: tests/fuzz/run.sh SECONDS [TARGET...]   (TARGET: cjk_bigram, config, ...)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:?usage: tests/fuzz/run.sh SECONDS [TARGET...]}
shift
build=${MNEME_FUZZ_BUILD:-build-fuzz}
out=${MNEME_FUZZ_OUT:-$(mktemp -d /tmp/mneme-fuzz-XXXXXX)}
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
  for dir in tests/fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi
# Leaks are findings; UBSan is fatal already (-fno-sanitize-recover=all).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# Targets run MNEME_FUZZ_JOBS at a time (default: the processor count), each for the
# full SECONDS: libFuzzer's fuzzing loop is one thread.
jobs=${MNEME_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
run_one() {
  local name=$1 binary="$build/tests/fuzz/fuzz_$1" rc=0
  if [ ! -x "$binary" ]; then
    echo "fuzz $name: $binary is missing (build with -DMNEME_FUZZ=ON, docs/hardening.md)" \
      >"$out/$name.result"
    return 1
  fi
  mkdir -p "$out/$name/new"
  local log="$out/$name/log"
  "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/$name/" "$out/$name/new" "tests/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
  # libFuzzer's last status line ("#N DONE cov: C ft: F corp: ...") and its exec count.
  local status execs
  status=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz $name: ${seconds}s rc=$rc execs=${execs:-?} ${status#*	}" >"$out/$name.result"
  if [ "$rc" -ne 0 ]; then
    tail -40 "$log" >>"$out/$name.result"
    return 1
  fi
}
running=0
for name in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_one "$name" &
  running=$((running + 1))
done
wait || true
failed=()
for name in "${targets[@]}"; do
  cat "$out/$name.result"
  grep -qE "^fuzz $name: ${seconds}s rc=0 " "$out/$name.result" || failed+=("$name")
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzzing failed: ${failed[*]} (logs and inputs in $out)" >&2
  exit 1
fi
echo "fuzzing clean: ${#targets[@]} targets, ${seconds}s each, $jobs at a time (logs in $out)"
