#!/usr/bin/env bash
# 0-dim CPU tensor inputs (define_tensor(shape=[], is_cpu=True)) on the GPU,
# through both runtimes: tests/frontends/fusions/adam_step_cpu_scalar.py
# (foreach Adam whose bias corrections come from a CPU `step`).
#
#   here:   bash bench/gpu/cpu_scalar_check.sh prepare [BUILD_DIR]
#           compiles it with `fusionc compile --no-cache --out` into
#           .devcarry/cpu_scalar/ (checks the manifest marks the step
#           "cpu_tensor"), bundled with fusiond_ops_gpu_check and its libraries.
#   device: OUT=$OUT bash bench/gpu/cpu_scalar_check.sh run   (carry: [".devcarry"])
#           1. the C++ runtime: fusiond_ops_gpu_check passes the step as
#              RunArg::HostScalar (a host element read at launch) and checks
#              every output against the CPU reference;
#           2. the Python runtime: bench/gpu/run.py --require-ours passes a
#              0-dim CPU torch tensor (read with .item()) and checks against
#              float64, timing ours against torch.compile;
#           3. the torch-side unit tests (runtime_test.py CpuScalarTest,
#              frontend_torch_test.py test_cpu_scalar_input).
# Exit status 1 when any part fails.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
D=${FUSIOND_DEVCARRY:-.devcarry}/cpu_scalar
STEM=adam_step_cpu_scalar
case "${1:-}" in
  prepare)
    BUILD=${2:-build}
    ninja -C "$BUILD" -j2 fusionc fusiond_ops_gpu_check >/dev/null ||
      { echo "cpu_scalar_check: building fusionc and fusiond_ops_gpu_check in $BUILD failed"; exit 1; }
    rm -rf "$D"
    mkdir -p "$D/fusions" "$D/bin" "$D/lib"
    cp "tests/frontends/fusions/$STEM.py" "$D/fusions/"
    "$BUILD/client/fusionc/fusionc" compile "$D/fusions/$STEM.py" --no-cache --out "$D/$STEM" \
      >"$D/$STEM.log" 2>&1 || { echo "cpu_scalar_check: compile failed:"; tail -3 "$D/$STEM.log"; exit 1; }
    grep -q '"cpu_tensor": true' "$D/$STEM/manifest.json" ||
      { echo "cpu_scalar_check: the manifest does not mark the step cpu_tensor"; exit 1; }
    echo "$STEM" >"$D/RANDOM"  # fusiond_ops_gpu_check's list of fusions
    CHECK="$BUILD/tests/ops/fusiond_ops_gpu_check"
    bash scripts/bundle_binary.sh "$CHECK" "$D" || exit 1
    echo "cpu_scalar_check: $(du -sh "$D" | cut -f1) in $D"
    echo "device: OUT=\$OUT bash bench/gpu/cpu_scalar_check.sh run   (carry: [\".devcarry\"])"
    ;;
  run)
    OUT=${OUT:-bench/out}
    [ -s "$D/RANDOM" ] || { echo "cpu_scalar_check: no $D (run prepare here first)"; exit 1; }
    mkdir -p "$OUT/cpu_scalar"
    rc=0
    echo "== C++ runtime (RunArg::HostScalar) against the CPU reference"
    LD_LIBRARY_PATH="$D/lib" "$D/bin/fusiond_ops_gpu_check" "$D" 2>&1 |
      tee "$OUT/cpu_scalar/cpp.log" || rc=1
    echo "== Python runtime (.item()) against float64, and torch.compile"
    python3 bench/gpu/run.py --artifacts "$D" --fusions "$D/fusions/$STEM.py" --require-ours \
      --warmup 10 --rep 40 --out "$OUT/cpu_scalar" --tag cpu-scalar 2>&1 |
      tee "$OUT/cpu_scalar/run.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    echo "== torch-side unit tests"
    (cd tests/python && python3 runtime_test.py CpuScalarTest &&
      python3 frontend_torch_test.py FrontendTorchTest.test_cpu_scalar_input) 2>&1 |
      tee "$OUT/cpu_scalar/python.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
    echo "cpu_scalar_check: $([ $rc -eq 0 ] && echo PASS || echo FAIL)"
    exit "$rc"
    ;;
  *) sed -n 2,19p "$0"; exit 2 ;;
esac
