#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer, ASan, UBSan; clang) of what comes from
# outside (tests/fuzz/):
#   repro_script  repro-script text, through the front end and the pipeline
#   graph_proto   serialized FusionGraph messages, through FromProto and the
#                 pipeline
#   manifest      kernel manifests, through the C++ runtime's reader and
#                 launch planner
# The pipeline runs every pass (which must keep the CPU reference's results
# on small static graphs), the segmenter, the scheduler and code generation;
# a graph's wire form must compile to the same canonical hash; no stage may
# fail with Internal. After each graph target's run its corpus runs once more
# with NVRTC compiling every generated kernel. Findings (inputs that crash,
# trip a sanitizer or a check) are copied to tests/fuzz/findings/<target>/,
# which CTest replays (fuzz_*_replay) once committed with their fix.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   targets: repro_script graph_proto manifest (default: all); seconds
#   default 60. env: JOBS (default nproc), BUILD (default build-fuzz)
set -euo pipefail
case "${1:-}" in -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
cd "$(dirname "$0")/.."
seconds=${1:-60}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a number, not '$seconds' (--help)" >&2; exit 2; }
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
corpus=tests/corpus/fusions
work="$BUILD/fuzz"
mkdir -p "$work"
status=0
for t in "${targets[@]}"; do
  seeds="$work/$t-seeds" live="$work/$t-corpus" crashes="$work/$t-crashes" extra=()
  rm -rf "$seeds" "$crashes" && mkdir -p "$seeds" "$live" "$crashes"
  case "$t" in
    repro_script)
      cp "$corpus"/*.py examples/*.py bench/gpu/fusions/*.py tests/malformed/cases/*.py tests/ops/fusions/*.py "$seeds/"
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
