#!/usr/bin/env bash
# Everything one device run does, in one command (run from the repo root on
# the lent GPU after scripts/device_bundle.sh here, with carry [".devcarry"]):
# the C++ and Python runtime GPU tests, the harness on the self-test artifact,
# then the harness on every corpus fusion (eager, torch.compile, ours).
# Logs and results go to $OUT (at most 8 files come back).
# Usage: bash bench/gpu/device_run.sh [extra run.py flags]
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
D=.devcarry
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
echo "== C++ runtime GPU tests"
FUSIOND_RUNTIME_TESTDATA=$D/runtime_testdata LD_LIBRARY_PATH=$D/lib \
  $D/bin/runtime_gpu_test 2>&1 | tee "$OUT/runtime_gpu_test.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure" 
if [ -x $D/bin/runtime_e2e_test ]; then
  echo "== C++ runtime end to end: generated kernels vs the CPU reference"
  FUSIOND_E2E_ARTIFACTS=$D/artifacts FUSIOND_E2E_GENERAL_ARTIFACTS=$D/general FUSIOND_CORPUS_DIR=$D/fusions \
    LD_LIBRARY_PATH=$D/lib \
    timeout 240 $D/bin/runtime_e2e_test 2>&1 | tee "$OUT/runtime_e2e_test.log" \
    | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|max rel err"
fi
echo "== Python runtime tests"
FUSIOND_RUNTIME_TESTDATA=$D/runtime_testdata python3 client/python/fusiond/runtime_test.py \
  >"$OUT/runtime_python_test.log" 2>&1; echo "python runtime tests rc=$?"; tail -3 "$OUT/runtime_python_test.log"
echo "== harness self-test (hand-written softmax through the runtime)"
python3 bench/gpu/run.py --no-compile --artifacts $D/selftest --fusions $D/fusions/softmax_fwd.py \
  --out "$OUT" --tag selftest --rep 50 2>&1 | tail -8
if [ -f $D/wide/rmsnorm_bwd_manual/manifest.json ]; then
  echo "== one general cubin with rows split over blocks (rmsnorm backward compiled at 512x65536) at other shapes"
  python3 bench/gpu/run.py --no-compile --no-steady --rep 20 --artifacts $D/wide \
    --fusions $D/fusions/rmsnorm_bwd_manual.py --size-map 2048:512,8192:65536 --out "$OUT" --tag wide \
    --three-shapes rmsnorm_bwd_manual \
    --other-shapes '2048:64,8192:131072;2048:300,8192:50000;2048:333,8192:65535;2048:1000,8192:4096' \
    2>&1 | grep -E "one cubin|^rmsnorm_bwd_manual "
fi
if [ -f $D/artifacts/bias_gelu_fwd/manifest.json ]; then
  echo "== one symbolic cubin over more than 2^31 elements (64-bit offsets; vector and element loops)"
  timeout 120 python3 bench/gpu/large_index.py --fusion $D/fusions/bias_gelu_fwd.py --artifacts $D/artifacts \
    --shapes 262147x8200,8200 261900x8201,8201 2>&1 | tail -3
fi
echo "== harness: corpus"
# The corpus only (fusions/CORPUS, scripts/device_bundle.sh), not the
# variants' definitions bench/gpu/variants.sh adds beside it.
corpus=("$D"/fusions/*.py)
[ -f $D/fusions/CORPUS ] && mapfile -t corpus < <(sed "s|^|$D/fusions/|" $D/fusions/CORPUS)
timeout ${HARNESS_TIMEOUT:-240} python3 bench/gpu/run.py --artifacts $D/artifacts --fusions "${corpus[@]}" --out "$OUT" "$@"
