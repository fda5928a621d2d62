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
  if [ -f "$LOGS/pytorch.log" ]; then echo "==== pytorch_acceptance.sh"; cat "$LOGS/pytorch.log"; fi
  echo "==== variants"; cat "$V"/variants/*.log 2>/dev/null
} >"$OUT/other-logs.txt"
find "$OUT" -maxdepth 1 -name '*.log' ! -name device_run.log -delete
rm -f "$OUT"/*selftest* "$OUT"/*-mutants.*
echo "$summary"
ls "$OUT"
exit $rc
