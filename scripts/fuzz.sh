#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (preset "fuzz": clang-14, ASan + UBSan, coverage
# on the whole library) and runs each one for a fixed time over a COPY of its seed corpus and
# regression inputs (the repository's corpus never grows by itself; see tests/fuzz/README.md).
#   bash scripts/fuzz.sh                                   every harness, 30 s each
#   NUMART_FUZZ_SECONDS=300 bash scripts/fuzz.sh topology_xml
# Environment: NUMART_FUZZ_SECONDS (default 30), NUMART_FUZZ_BUILD_DIR (default build/fuzz),
# NUMART_JOBS (default nproc).
# Prints one line per harness, "fuzz <name>: N runs, 0 crashes in S s"; when a harness crashes,
# leaks, times out or breaks a property, its line names the saved input and the log, the next
# lines give the failure's first report line and the input in base64, and the script exits 1
# after running the others.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${NUMART_FUZZ_SECONDS:-30}
build=${NUMART_FUZZ_BUILD_DIR:-build/fuzz}
jobs=${NUMART_JOBS:-$(nproc)}
all=(tunables topology_source topology_xml)
# Longest input each harness is given: RT_TUNE with every row is about 900 bytes, source strings
# are short, and the seed XML files are up to 19.5 KB.
declare -A max_len=([tunables]=2048 [topology_source]=512 [topology_xml]=24576)
# A failing input up to this size is printed in base64 with the failure.
print_max=32768

if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: NUMART_FUZZ_SECONDS='$seconds': expected a whole number of seconds, at least 1" >&2
  exit 2
fi
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")
targets=()
for h in "${harnesses[@]}"; do
  if [ -z "${max_len[$h]+set}" ]; then
    echo "fuzz.sh: unknown harness '$h' (expected one of: ${all[*]})" >&2
    exit 2
  fi
  targets+=("numart_fuzz_$h")
done

cmake --preset fuzz -B "$build" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

status=0
for h in "${harnesses[@]}"; do
  work=$build/fuzz-runs/$h
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp tests/fuzz/corpus/"$h"/* "$work/corpus/"
  if [ -d "tests/fuzz/regressions/$h" ]; then cp tests/fuzz/regressions/"$h"/* "$work/corpus/"; fi
  t0=$SECONDS
  rc=0
  "$build/tests/fuzz/numart_fuzz_$h" "$work/corpus" -max_total_time="$seconds" -max_len="${max_len[$h]}" \
    -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    >"$work/log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  found=$(find "$work/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) -print -quit)
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    echo "fuzz $h: CRASH (exit $rc) after ${runs:-?} runs in $((SECONDS - t0)) s: input ${found:-not saved}; log $work/log"
    # A CI machine keeps its output, not its files: the reason and the input go to the output.
    grep -m1 -E '^SUMMARY: |fuzz property violated|^==[0-9]+== ?ERROR: libFuzzer' "$work/log" | sed 's/^/  /' || true
    if [ -n "$found" ] && [ "$(stat -c %s "$found")" -le "$print_max" ]; then
      echo "  input, base64 (base64 -d > tests/fuzz/regressions/$h/NAME): $(base64 -w0 "$found")"
    fi
    status=1
  else
    echo "fuzz $h: ${runs:-?} runs, 0 crashes in $((SECONDS - t0)) s"
  fi
done
exit $status
