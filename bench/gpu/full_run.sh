#!/usr/bin/env bash
# The whole check on the lent GPU in one call, its logs folded into few
# files (only a handful come back from $OUT):
#   1. bench/gpu/device_run.sh: the C++ and Python runtime GPU tests, the
#      harness self-test, the wide-row cubin at other shapes, every corpus
#      fusion against eager and torch.compile (-> device_run.log, the corpus
#      JSON and PNG);
#   2. bench/gpu/variants.sh run: the prepared variants, e.g. issue 5's
#      larger shapes (their table opens other-logs.txt, the merged report
#      -> variants-all.{json,png});
#   3. compiler/codegen/device/run_random.sh on .devcarry/cg/rnd if bundled:
#      random graphs against the CPU reference;
#   4. bench/gpu/issue5_check.py on the reports: issue 5's acceptance list
#      under do_bench and steady state (opens other-logs.txt).
# The runtime tests' logs, the random-graph summary and every variant's log
# go to other-logs.txt. Only a few files come back from $OUT, and nothing
# when the device call's 600 s run out before the folding at the end, so the
# variants get VARIANTS_TIMEOUT seconds (default 270) and the random graphs
# 120: with device_run.sh's ~150 s that stays under the limit. A long
# variants list (each torch.compile'd variant costs ~30 s) belongs in a call
# of its own: OUT=$V bash bench/gpu/variants.sh run ... > $OUT/variants.txt.
#
#   here:  bash scripts/device_bundle.sh build-rt
#          bash bench/gpu/variants.sh prepare bench/gpu/variants/<list>.txt build-rt
#          (optional) mkdir -p .devcarry/cg && cp compiler/codegen/device/run_random.* .devcarry/cg/ &&
#                     build-cg/compiler/nvrtc/fusiond_random_bundle 3000 80 .devcarry/cg/rnd
#   there: OUT=$OUT bash bench/gpu/full_run.sh      (carry [".devcarry"], at most ~9 minutes)
#          VARIANT_ARGS='--other-shapes ...' adds run.py flags to the variants' run (with
#          THREE_SHAPES=1: the shapes their one-cubin check runs at)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT to the folder that comes back}
mkdir -p "$OUT"
HARNESS_TIMEOUT=${HARNESS_TIMEOUT:-240} OUT=$OUT bash bench/gpu/device_run.sh --rep 50 --graph-below-us 200 \
  >"$OUT/device_run.log" 2>&1
V=$(mktemp -d)
if [ -d .devcarry/variants ]; then
  # shellcheck disable=SC2086  # VARIANT_ARGS: more run.py flags, as words
  timeout "${VARIANTS_TIMEOUT:-270}" env OUT="$V" bash bench/gpu/variants.sh run --graph-below-us 200 ${VARIANT_ARGS:-} \
    >"$OUT/variants.txt" 2>&1 || echo "variants: rc $? (124: past VARIANTS_TIMEOUT)" >>"$OUT/variants.txt"
  cp "$V"/variants-all.json "$V"/variants-all.png "$OUT"/ 2>/dev/null
fi
R=$(mktemp)
if [ -d .devcarry/cg/rnd ]; then
  (cd .devcarry/cg && timeout 120 ./run_random.sh) >"$R" 2>&1
fi
# The variants' table opens other-logs.txt instead of being a file of its
# own: with the corpus and wide-row reports and charts and the merged
# variants report, a ninth file would not come back (session 19, run 8).
# Issue 5's acceptance list from this run's reports (bench/gpu/issue5_check.py)
# opens it, when the variants were issue 5's shapes (s21-8-issue5-shapes.txt).
corpus=$(ls "$OUT"/gpu-*.json 2>/dev/null | grep -v -e '-wide.json' -e variants-all | head -1)
wide=$(ls "$OUT"/gpu-*-wide.json 2>/dev/null | head -1)
{
  if [ -n "$corpus" ] && [ -f "$OUT/variants-all.json" ]; then
    echo "==== issue 5's acceptance list (bench/gpu/issue5_check.py)"
    python3 bench/gpu/issue5_check.py "$corpus" "$OUT/variants-all.json" $wide --corpus-dir .devcarry/fusions
  fi
  if [ -f "$OUT/variants.txt" ]; then echo "==== variants.txt (the variants' table)"; cat "$OUT/variants.txt"; fi
  for f in "$OUT"/runtime_*.log; do [ -f "$f" ] && { echo "==== $(basename "$f")"; cat "$f"; }; done
  echo "==== random graphs (last line: the summary)"; cat "$R"
  echo "==== variants"; cat "$V"/variants/*.log 2>/dev/null
} >"$OUT/other-logs.txt"
rm -f "$OUT"/runtime_*.log "$OUT"/*selftest* "$OUT/variants.txt"
tail -1 "$R"
ls "$OUT"
