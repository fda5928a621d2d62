#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, ASan, UBSan; clang) of what comes from
# outside: repro-script text and serialized FusionGraph messages (through the
# front end or FromProto, every pass, the segmenter, the scheduler and code
# generation; then the run's corpus once more with NVRTC compiling every
# generated kernel) and kernel manifests (the C++ runtime's reader and launch
# planner); tests/fuzz/. Findings (inputs that crash, trip a
# sanitizer or a check) are copied to tests/fuzz/findings/<target>/, which
# CTest replays (fuzz_*_replay) once they are committed with their fix.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   targets: repro_script graph_proto manifest (default: all); seconds default 60.
#   env: JOBS (default nproc), BUILD (default build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(repro_script graph_proto manifest)
JOBS=${JOBS:-$(nproc)}
BUILD=${BUILD:-build-fuzz}
for t in "${targets[@]}"; do
  case "$t" in
    repro_script | graph_proto | manifest) ;;
    *) echo "fuzz.sh: unknown target $t (repro_script, graph_proto, manifest)" >&2; exit 2 ;;
  esac
done
command -v clang++ >/dev/null || { echo "fuzz.sh: needs clang++ (apt-get install clang)" >&2; exit 2; }
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_COMPILER=clang++ -DFUSIOND_BUILD_SERVICE=OFF -DFUSIOND_FUZZ=ON >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target fuzz_seed_protos "${targets[@]/#/fuzz_}"
corpus=../shared/fusions
work="$BUILD/fuzz"
mkdir -p "$work"
status=0
for t in "${targets[@]}"; do
  seeds="$work/$t-seeds" live="$work/$t-corpus" crashes="$work/$t-crashes" extra=()
  rm -rf "$seeds" && mkdir -p "$seeds" "$live" "$crashes"
  case "$t" in
    repro_script)
      cp "$corpus"/*.py examples/*.py bench/gpu/fusions/*.py tests/malformed/cases/*.py "$seeds/"
      # A dictionary of the language's words: op and call names, dtypes.
      { grep -ohE '"[a-z_0-9]+"' compiler/ir/op.cc compiler/frontend/definition_calls.cc
        grep -ohE 'DataType\.[A-Za-z0-9]+|fd\.(ops\.)?[a-z_0-9]+' "$corpus"/*.py examples/*.py |
          sed 's/.*/"&"/'; } | sort -u >"$work/$t.dict"
      extra=(-dict="$work/$t.dict") ;;
    graph_proto) "$BUILD/tests/fuzz/fuzz_seed_protos" "$seeds" "$corpus"/*.py examples/*.py ;;
    manifest)
      n=0
      for m in client/runtime/testdata/*/manifest.json bench/gpu/selftest/*/manifest.json; do
        n=$((n + 1)) && cp "$m" "$seeds/m$n.json"
      done ;;
  esac
  echo "== fuzz_$t for ${seconds}s (live corpus $live)"
  if ! "$BUILD/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
      -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$crashes/" "${extra[@]}" "$live" "$seeds"; then
    status=1
  fi
  if [ "$t" != manifest ]; then
    # The run's corpus once more with NVRTC compiling every generated kernel.
    echo "== fuzz_$t: the corpus again, NVRTC compiling each generated kernel"
    FUSIOND_FUZZ_NVRTC=1 "$BUILD/tests/fuzz/fuzz_$t" -runs=0 -timeout=120 -rss_limit_mb=4096 \
      -artifact_prefix="$crashes/" "$live" || status=1
  fi
  if compgen -G "$crashes/*" >/dev/null; then
    mkdir -p "tests/fuzz/findings/$t"
    cp "$crashes"/* "tests/fuzz/findings/$t/"
    echo "fuzz.sh: findings of $t copied to tests/fuzz/findings/$t/"
    status=1
  fi
done
exit $status
