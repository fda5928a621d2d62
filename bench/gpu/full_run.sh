#!/usr/bin/env bash
# The whole check on the lent GPU in one call, its logs folded into few
# files (only a handful come back from $OUT), every step's exit status
# recorded, a summary line last, exit status 1 when any step failed:
#   1. bench/gpu/device_run.sh: every test and check of the bundle (its own
#      steps and summary in device_run.log; the corpus JSON and PNG);
#   2. random graphs (fusiond_random_gpu_check on $D/rnd, compiled here by
#      scripts/device_bundle.sh): every case through the C++ runtime against
#      the CPU reference, per-scheduler counts, every refusal with its reason;
#   3. bench/gpu/variants.sh run, if variants were prepared: their table
#      opens other-logs.txt, the merged report -> variants-all.{json,png};
#   4. bench/gpu/acceptance_check.py on the reports, when the variants were
#      issue 5's shapes.
# Time: device_run.sh ~5 min (HARNESS_TIMEOUT 240 for the corpus), random
# graphs RANDOM_TIMEOUT (default 200), variants VARIANTS_TIMEOUT (default
# 270; run a long list in a call of its own: OUT=$V bash bench/gpu/variants.sh run).
#
#   here:  bash scripts/device_bundle.sh build-rt
#          (optional) bash bench/gpu/variants.sh prepare bench/gpu/variants/<list>.txt build-rt
#   there: OUT=$OUT bash bench/gpu/full_run.sh      (carry [".devcarry"])
# FUSIOND_DEVCARRY names another bundle folder (default .devcarry).
# FULL_RUN_PARTS (default "device random variants") runs some parts only,
# e.g. the random graphs in a call of their own when both do not fit 600 s;
# the summary names the parts left out. "pytorch" (not by default: it takes
# calls of its own) runs bench/gpu/pytorch_acceptance.sh, issue 33's check.
# "ops", "outer" and "frontends" (not by default) run issue 34's checks from
# their prepared folders: tests/ops/prepare_gpu.sh, bench/gpu/outer_check.sh
# prepare and bench/gpu/frontends_check.sh prepare (new ops against float64
# and the CPU reference; outer reductions and broadcasts, and the front ends'
# definitions, each against torch.compile).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the folder that comes back}
mkdir -p "$OUT"
D=${FUSIOND_DEVCARRY:-.devcarry}
# shellcheck source=bench/gpu/steps.sh
. bench/gpu/steps.sh
LOGS=$(mktemp -d)
PARTS=" ${FULL_RUN_PARTS:-device random variants} "
part() { [[ "$PARTS" == *" $1 "* ]]; }

device_run() {
  HARNESS_TIMEOUT=${HARNESS_TIMEOUT:-240} OUT=$OUT FUSIOND_DEVCARRY=$D bash bench/gpu/device_run.sh \
    --rep 50 --graph-below-us 200 >"$OUT/device_run.log" 2>&1
  local rc=$?
  grep -E "^-- .*FAILED|^SUMMARY" "$OUT/device_run.log"
  return $rc
}
part device && step "device_run.sh (every test and check; device_run.log)" device_run

random_graphs() {
  need $D/rnd/BUNDLE $D/bin/fusiond_random_gpu_check || return 1
  LD_LIBRARY_PATH=$D/lib timeout "${RANDOM_TIMEOUT:-200}" $D/bin/fusiond_random_gpu_check $D/rnd \
    >"$LOGS/random.log" 2>&1
  local rc=$?
  grep -E "^SUMMARY|^scheduler|^passed with|^refused|^FAIL" "$LOGS/random.log" | tail -40
  [ "$rc" = 124 ] && echo "random graphs: past RANDOM_TIMEOUT"
  return $rc
}
part random && step "random graphs vs the CPU reference (fusiond_random_gpu_check)" random_graphs

pytorch_acceptance() {
  OUT=$OUT bash bench/gpu/pytorch_acceptance.sh "${PYTORCH_ACCEPTANCE:-all}" >"$LOGS/pytorch.log" 2>&1
  local rc=$?
  grep -E "^== |FAIL|fail" "$LOGS/pytorch.log" | tail -20
  return $rc
}
part pytorch && step "PyTorch acceptance (bench/gpu/pytorch_acceptance.sh)" pytorch_acceptance

# Issue 34's checks, each from its own prepared folder (not by default: a
# call of their own, FULL_RUN_PARTS="ops outer frontends").
new_ops() {
  need $D/ops/RANDOM $D/ops/bin/fusiond_ops_gpu_check || return 1
  local harness=() rc=0
  for f in $D/ops/fusions/*.py; do
    grep -qE "fd\.ops\.(uniform|normal|rand_like|randn_like|iota)\(" "$f" || harness+=("$f")
  done
  timeout 240 python3 bench/gpu/warm_compile.py "${harness[@]}" | tail -1  # torch.compile's caches, in parallel
  timeout "${OPS_TIMEOUT:-240}" python3 bench/gpu/run.py --artifacts $D/ops --fusions "${harness[@]}" \
    --require-ours --no-steady >"$LOGS/ops.log" 2>&1 || rc=1
  LD_LIBRARY_PATH=$D/ops/lib timeout 120 $D/ops/bin/fusiond_ops_gpu_check $D/ops \
    >>"$LOGS/ops.log" 2>&1 || rc=1
  grep -E "PASS|FAIL|SUMMARY" "$LOGS/ops.log" | tail -40
  return $rc
}
part ops && step "new ops vs float64 and the CPU reference (tests/ops fusions)" new_ops
# A prepared check script's run: LOG NEEDED TIMEOUT SCRIPT; its tail printed.
prepared_check() {
  need "$2" || return 1
  OUT=$LOGS timeout "$3" bash "$4" run >"$LOGS/$1.log" 2>&1
  local rc=$?
  tail -60 "$LOGS/$1.log"
  return $rc
}
part outer && step "outer reductions and broadcasts vs torch.compile (outer_check.sh)" \
  prepared_check outer $D/outer/PRODUCER "${OUTER_TIMEOUT:-200}" bench/gpu/outer_check.sh
part frontends && step "front ends' definitions (frontends_check.sh)" \
  prepared_check frontends $D/frontends/HARNESS "${FRONTENDS_TIMEOUT:-300}" bench/gpu/frontends_check.sh

V=$(mktemp -d)
if [ -d $D/variants ] && part variants; then
  variants() {
    # shellcheck disable=SC2086  # VARIANT_ARGS: more run.py flags, as words
    timeout "${VARIANTS_TIMEOUT:-270}" env OUT="$V" bash bench/gpu/variants.sh run --graph-below-us 200 \
      ${VARIANT_ARGS:-} >"$LOGS/variants.txt" 2>&1
    local rc=$?
    cp "$V"/variants-all.json "$V"/variants-all.png "$OUT"/ 2>/dev/null
    # A variant whose check failed prints FAILED or FAIL in its row.
    if grep -qE " FAIL$|FAILED" "$LOGS/variants.txt"; then echo "a variant failed its check"; return 1; fi
    return $rc
  }
  step "variants (bench/gpu/variants.sh run)" variants
fi

corpus=$(ls "$OUT"/gpu-*.json 2>/dev/null | grep -v -e '-wide.json' -e '-mutants.json' -e variants-all | head -1)
wide=$(ls "$OUT"/gpu-*-wide.json 2>/dev/null | head -1)
if [ -n "$corpus" ] && [ -f "$OUT/variants-all.json" ]; then
  # shellcheck disable=SC2086  # $wide: none or one file
  step "issue 5's acceptance list (bench/gpu/acceptance_check.py)" \
    python3 bench/gpu/acceptance_check.py "$corpus" "$OUT/variants-all.json" $wide --corpus-dir $D/fusions
fi

summary=$(steps_summary full_run.sh)
rc=$?
for p in device random variants; do part $p || summary="$summary (left out by FULL_RUN_PARTS: $p)"; done
# Logs folded into other-logs.txt (a ninth file would not come back).
{
  echo "$summary"
  if [ -f "$LOGS/variants.txt" ]; then echo "==== variants.txt (the variants' table)"; cat "$LOGS/variants.txt"; fi
  for f in "$OUT"/*.log; do
    case "$f" in */device_run.log) continue ;; esac
    [ -f "$f" ] && { echo "==== $(basename "$f")"; cat "$f"; }
  done
  echo "==== random graphs"; cat "$LOGS/random.log" 2>/dev/null
  for f in ops outer frontends; do
    [ -f "$LOGS/$f.log" ] && { echo "==== $f.log"; cat "$LOGS/$f.log"; }
  done
  if [ -f "$LOGS/pytorch.log" ]; then echo "==== pytorch_acceptance.sh"; cat "$LOGS/pytorch.log"; fi
  echo "==== variants"; cat "$V"/variants/*.log 2>/dev/null
} >"$OUT/other-logs.txt"
find "$OUT" -maxdepth 1 -name '*.log' ! -name device_run.log -delete
rm -f "$OUT"/*selftest* "$OUT"/*-mutants.*
echo "$summary"
ls "$OUT"
exit $rc
