#!/usr/bin/env bash
# Builds numart and runs the whole test suite, as CI does (.ci/run calls this).
#   sudo bash scripts/test.sh            everything below
#   NUMART_TEST_STAGES="release consumer" bash scripts/test.sh   a subset
# Stages:
#   release   g++ -Werror, all targets; ctest: unit, integration, stress, process, model
#   clang     clang++-14 -Werror build of the library, tool and unit tests; ctest: unit
#   fuzz      scripts/fuzz.sh: libFuzzer harnesses (clang-14, ASan + UBSan), NUMART_FUZZ_SECONDS
#             (default 30) each over a copy of tests/fuzz/corpus; the replay of that corpus runs
#             as unit tests in the other stages
#   asan      g++ AddressSanitizer + UndefinedBehaviorSanitizer; builds and runs the unit,
#             integration and stress tiers (NUMART_TEST_TIERS in the preset)
#   tsan      g++ ThreadSanitizer; builds and runs the integration and stress tiers
#   consumer  cmake --install, then an outside project via find_package and via pkg-config
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=${NUMART_JOBS:-$(nproc)}
stages=${NUMART_TEST_STAGES:-release clang fuzz asan tsan consumer}

bash scripts/setup.sh

summary=()
run_stage() {
  local name=$1; shift
  local t0=$SECONDS
  echo "=== stage $name"
  if "$@"; then
    summary+=("$name: passed in $((SECONDS - t0)) s")
  else
    summary+=("$name: FAILED after $((SECONDS - t0)) s")
    printf '%s\n' "${summary[@]}"
    exit 1
  fi
}

configure_build() {  # preset, targets...
  local preset=$1; shift
  cmake --preset "$preset" >/dev/null
  if [ $# -gt 0 ]; then
    cmake --build "build/$preset" -j "$jobs" --target "$@"
  else
    cmake --build "build/$preset" -j "$jobs"
  fi
}

# The faults ledger's line (tests/stress/faults) from a build's last ctest log.
ledger_line() {
  local line
  line=$(grep -h "^tasks spawned" "build/$1/Testing/Temporary/LastTest.log" | tail -1)
  if [ -z "$line" ]; then
    echo "test.sh: no faults-ledger line in build/$1/Testing/Temporary/LastTest.log (did tests/stress/faults run?)" >&2
    return 1
  fi
  echo "ledger ($1): $line"
}
stage_release() {
  configure_build release &&
    ctest --preset release -j "$jobs" --timeout 600 \
      -L 'unit|integration|stress|process|model' &&
    ledger_line release
}
stage_clang() {
  configure_build clang &&
    ctest --preset clang -j "$jobs" -L unit
}
stage_fuzz() {
  NUMART_JOBS=$jobs bash scripts/fuzz.sh
}
stage_asan() {
  configure_build asan && ctest --preset asan -j "$jobs" -L 'unit|integration|stress' && ledger_line asan
}
stage_tsan() {
  configure_build tsan && ctest --preset tsan -j "$jobs" -L 'integration|stress' && ledger_line tsan
}
stage_consumer() {
  local prefix=$root/build/install
  rm -rf "$prefix" build/consumer-cmake build/consumer-pc
  cmake --install build/release --prefix "$prefix" >/dev/null &&
    cmake -S tests/consumer -B build/consumer-cmake -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
    cmake --build build/consumer-cmake -j "$jobs" >/dev/null &&
    build/consumer-cmake/consumer &&
    mkdir -p build/consumer-pc &&
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig" g++ -O2 tests/consumer/main.cpp -o build/consumer-pc/consumer \
      $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs numart) &&
    build/consumer-pc/consumer &&
    "$prefix/bin/numart" topo --json >/dev/null &&
    test ! -e "$prefix/lib/librt.a"
}

for s in $stages; do
  run_stage "$s" "stage_$s"
done
printf '%s\n' "${summary[@]}"
