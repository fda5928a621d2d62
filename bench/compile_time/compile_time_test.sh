#!/usr/bin/env bash
# fusiond_compile_time end to end: the table and JSON carry NVRTC's start-up,
# the cold and warm compiles, the stages and NVRTC's phases; the goal line passes or fails
# with --goal-ms and sets the exit status; --general says so, and the NVRTC flags (FUSIOND_NVRTC_FAST_COMPILE); a two-kernel fusion compiles with
# --kernel-threads 1 and 2 and reports each kernel's NVRTC phases; a file that does not parse is
# an ERROR row naming why, and exit status 1.
# Usage: compile_time_test.sh FUSIOND_COMPILE_TIME CORPUS_DIR
set -uo pipefail
BIN=$1
CORPUS=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() {  # check WHAT CONDITION...
  local what=$1; shift
  if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}
out=$("$BIN" --repeat 1 --goal-ms 100000 --out "$T/ct.json" "$CORPUS/rmsnorm_bwd_manual.py"); rc=$?
echo "$out"
check "generous goal: exit $rc" test $rc -eq 0
check "header" grep -q "start ms .*cold ms .*warm ms .*fresh ms .*front/nvvm/ptxas" <<<"$out"
check "goal line" grep -q "goal: rmsnorm_bwd_manual cold end to end .* < 100000 ms: PASS (in a fresh process" <<<"$out"
check "JSON fields" python3 - "$T/ct.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["fusions"][0]
assert f["fusion"] == "rmsnorm_bwd_manual" and f["kernels"] == 1, f
assert f["cold_total_us"] > 0 and f["warm_median_us"] > 0 and f["warm_runs"] == 1, f
assert f["nvrtc_start_us"] >= 0 and "nvrtc" in f["cold_stage_us"], f
split = f["nvrtc_split_us"]  # NVRTC's time trace: its three phases
assert sorted(split) == ["front_end", "nvvm", "ptxas"] and min(split.values()) > 0, split
assert d["nvrtc_cache"] == "CUDA_CACHE_DISABLE=1", d  # the driver's ComputeCache off by default
assert d["goal"]["pass"] is True and d["goal"]["fresh_process_ms"] >= d["goal"]["cold_ms"], d["goal"]
assert 0 < d["goal"]["cpu_ms"], d["goal"]
assert d["kernels"] == "specialized", d["kernels"]
PY
out=$("$BIN" --repeat 0 --goal-ms 100000 --general --out "$T/general.json" "$CORPUS/rmsnorm_bwd_manual.py"); rc=$?
check "--general: exit $rc" test $rc -eq 0
check "--general: noted" grep -q "; general (--general) kernels; NVRTC flags " <<<"$out"
check "--general: JSON" python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["kernels"] == "general"' "$T/general.json"
# FUSIOND_NVRTC_FAST_COMPILE reaches the children's compiles and is recorded.
out=$(FUSIOND_NVRTC_FAST_COMPILE=min "$BIN" --repeat 0 --out "$T/fast.json" "$CORPUS/rmsnorm_fwd.py"); rc=$?
check "fast compile: exit $rc" test $rc -eq 0
check "fast compile: noted" grep -q "; NVRTC flags .* --Ofast-compile=min)" <<<"$out"
check "fast compile: JSON" python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["nvrtc_flags"].endswith("--minimal --Ofast-compile=min")' "$T/fast.json"
out=$("$BIN" --repeat 0 --goal-ms 0.001 "$CORPUS/rmsnorm_bwd_manual.py"); rc=$?
check "impossible goal: exit $rc" test $rc -eq 1
check "impossible goal: FAIL" grep -q ": FAIL (in a fresh process" <<<"$out"
# A fusion of two kernels (bench/compile_time/fusions): compiled at once or one after another,
# NVRTC's phases per kernel.
TWO=$(dirname "$0")/fusions/row_then_total.py
for threads in 1 2; do
  out=$("$BIN" --repeat 0 --kernel-threads $threads --out "$T/two$threads.json" "$TWO"); rc=$?
  check "two kernels, --kernel-threads $threads: exit $rc" test $rc -eq 0
  check "two kernels, --kernel-threads $threads: JSON" python3 - "$T/two$threads.json" $threads <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["fusions"][0]
assert d["kernel_threads"] == int(sys.argv[2]), d["kernel_threads"]
assert f["kernels"] == 2 and f["binaries"] is True, f
per = f["nvrtc_split_per_kernel_us"]
assert len(per) == 2 and all(sorted(k) == ["front_end", "nvvm", "ptxas"] for k in per), per
assert float(d["loadavg_1min_at_start"]) >= 0, d
PY
done
printf 'with FusionDefinition() as fd:\n    T0 = fd.define_tensor(shape=[-1], dtype=DataType.Nope)\n' >"$T/bad.py"
out=$("$BIN" --repeat 0 "$T/bad.py"); rc=$?
echo "$out"
check "bad file: exit $rc" test $rc -eq 1
check "bad file: ERROR row" grep -q "^bad .*ERROR: parse: " <<<"$out"
exit $fail
