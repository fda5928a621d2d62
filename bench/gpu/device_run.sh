#!/usr/bin/env bash
# Every check of one device run (run from the repo root on the lent GPU after
# scripts/device_bundle.sh here, with carry [".devcarry"]), each step's exit
# status recorded (bench/gpu/steps.sh), a summary line last, exit status 1
# when any step failed (a skipped test fails too: the device runs them all):
#   the GPU host itself, the checkers' mutation tests (bench/gpu/checks_test.py),
#   the harness's and the torch front end's tests, the C++ runtime GPU tests,
#   the C++ end to end test (every corpus fusion against the CPU reference and
#   the closed forms), the Python runtime tests, the harness self-test, the
#   known-wrong kernels (must fail), one general cubin at other shapes,
#   2^31+ elements, and the harness over the corpus (eager, torch.compile,
#   ours; every fusion must run and pass).
# Logs go to $OUT (few files come back: see full_run.sh). FUSIOND_DEVCARRY
# names another bundle folder (default .devcarry).
# Usage: bash bench/gpu/device_run.sh [extra run.py flags for the corpus]
set -uo pipefail
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
D=${FUSIOND_DEVCARRY:-.devcarry}
# shellcheck source=bench/gpu/steps.sh
. bench/gpu/steps.sh

gpu_host() {
  command -v nvidia-smi >/dev/null || { echo "no nvidia-smi: this is not a GPU host"; return 1; }
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
}
step "GPU host" gpu_host
step "checkers' mutation tests (bench/gpu/checks_test.py)" \
  pytest_step "$OUT/checks_test.log" python3 bench/gpu/checks_test.py
step "harness tests (bench/gpu/run_test.py)" \
  pytest_step "$OUT/run_test.log" env FUSIOND_CORPUS_DIR=tests/corpus/fusions python3 bench/gpu/run_test.py
# The Python package's tests (tests/python, or beside the package).
pytest_file() { find tests/python client/python -name "$1" -not -path '*/build/*' 2>/dev/null | sort | head -1; }
python_test() {  # python_test LOG NAME [ENV...]
  local log=$1 name=$2 f
  shift 2
  f=$(pytest_file "$name")
  [ -n "$f" ] || { echo "no $name under tests/python or client/python"; return 1; }
  pytest_step "$log" env "$@" python3 "$f"
}
step "torch front end tests (frontend_torch_test.py)" \
  python_test "$OUT/frontend_torch_test.log" frontend_torch_test.py FUSIOND_CORPUS_DIR=tests/corpus/fusions
# (Without the test of the no-GPU path, which skips where a GPU is.)
step "C++ runtime GPU tests" \
  gtest "$OUT/runtime_gpu_test.log" env FUSIOND_RUNTIME_TESTDATA=$D/runtime_testdata LD_LIBRARY_PATH=$D/lib \
  $D/bin/runtime_gpu_test --gtest_filter=-LoadedFusionTest.WithoutGpuLoadIsUnavailable
step "C++ end to end: every corpus fusion vs the CPU reference and the closed forms" \
  gtest_sharded "$OUT/runtime_e2e_test.log" "${E2E_SHARDS:-8}" env FUSIOND_E2E_ARTIFACTS=$D/artifacts FUSIOND_E2E_GENERAL_ARTIFACTS=$D/general \
  FUSIOND_E2E_MUTANTS=$D/mutants FUSIOND_CORPUS_DIR=$D/fusions LD_LIBRARY_PATH=$D/lib \
  timeout 300 $D/bin/runtime_e2e_test
step "Python runtime tests" \
  python_test "$OUT/runtime_python_test.log" runtime_test.py FUSIOND_RUNTIME_TESTDATA=$D/runtime_testdata
selftest() {
  need $D/selftest/softmax_fwd/manifest.json || return 1
  python3 bench/gpu/run.py --no-compile --require-ours --artifacts $D/selftest --fusions $D/fusions/softmax_fwd.py \
    --out "$OUT" --tag selftest --rep 50 2>&1 | tail -8
}
step "harness self-test (hand-written softmax through the runtime)" selftest
# Kernels compiled from known-wrong definitions (bench/gpu/selftest/mutants.sh)
# run against the real ones: the harness must fail each.
mutants() {
  need $D/mutants/MUTANTS || return 1
  local log=$OUT/mutants.log stems rc m bad=0
  mapfile -t stems <$D/mutants/MUTANTS
  python3 bench/gpu/run.py --no-compile --no-steady --require-ours --rep 10 --artifacts $D/mutants \
    --fusions "${stems[@]/#/$D/fusions/}" --three-shapes --out "$OUT" --tag mutants >"$log" 2>&1
  rc=$?
  grep -E "^FAILED|^PASSED" "$log"
  [ "$rc" = 1 ] || { echo "run.py on the mutants: exit $rc, expected 1"; tail -5 "$log"; bad=1; }
  for m in "${stems[@]}"; do
    m=${m%.py}
    # Failed by the error measure itself, not by an exception before the check.
    grep -qE "^FAILED: .*$m \(error " "$log" ||
      { echo "mutant $m was not failed by the harness's error check"; bad=1; }
  done
  return $bad
}
step "known-wrong kernels fail the harness's check" mutants
wide() {
  need $D/wide/rmsnorm_bwd_manual/manifest.json || return 1
  python3 bench/gpu/run.py --no-compile --no-steady --require-ours --rep 20 --artifacts $D/wide \
    --fusions $D/fusions/rmsnorm_bwd_manual.py --size-map 2048:512,8192:65536 --out "$OUT" --tag wide \
    --three-shapes rmsnorm_bwd_manual \
    --other-shapes '2048:64,8192:131072;2048:300,8192:50000;2048:333,8192:65535;2048:1000,8192:4096' \
    2>&1 | grep -E "one cubin|^rmsnorm_bwd_manual |^FAILED|^PASSED"
}
step "one general cubin with rows split over blocks (rmsnorm backward at 512x65536) at other shapes" wide
large() {
  need $D/artifacts/bias_gelu_fwd/manifest.json || return 1
  timeout 150 python3 bench/gpu/large_index.py --fusion $D/fusions/bias_gelu_fwd.py --artifacts $D/artifacts \
    --shapes 261900x8201,8201 2>&1 | tail -3  # > 2^31 elements, rows misaligned for vectors
}
step "one symbolic cubin over more than 2^31 elements (64-bit offsets)" large
corpus_harness() {
  # The corpus only (fusions/CORPUS, scripts/device_bundle.sh), not the
  # variants' definitions bench/gpu/variants.sh adds beside it.
  need $D/fusions/CORPUS || return 1
  local corpus
  mapfile -t corpus < <(sed "s|^|$D/fusions/|" $D/fusions/CORPUS)
  timeout 240 python3 bench/gpu/warm_compile.py "${corpus[@]}" | tail -1  # torch.compile's caches, in parallel
  timeout "${HARNESS_TIMEOUT:-240}" python3 bench/gpu/run.py --require-ours --artifacts $D/artifacts \
    --fusions "${corpus[@]}" --out "$OUT" "$@"
}
step "harness: corpus (eager, torch.compile, ours)" corpus_harness "$@"
steps_summary device_run.sh
