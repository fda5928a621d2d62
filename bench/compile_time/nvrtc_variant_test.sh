#!/usr/bin/env bash
# fusiond_nvrtc_variant end to end on one artifact (fusiond_cgdev's): an option
# that leaves the code alone (-w) says "same", one that changes it (ptxas -O1)
# says DIFFERS and writes a different cubin beside the copied manifest; a
# --replace in the source compiles the edited .cu and keeps it; no
# option, or no artifacts, is an error; two artifacts in a row each match
# their cubin after the first took --Ofast-compile=mid. option_check.sh run without a
# prepared bundle or variant exits 1 naming what is missing; variant names
# other than nvrtc_variant* are refused.
# Usage: nvrtc_variant_test.sh FUSIOND_NVRTC_VARIANT FUSIOND_CGDEV CORPUS_DIR
set -uo pipefail
VARIANT=$1
CGDEV=$2
CORPUS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
check() {  # check WHAT CONDITION...
  local what=$1; shift
  if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}
export CUDA_CACHE_DISABLE=1
"$CGDEV" "$CORPUS/rmsnorm_bwd_manual.py" "$T/arts/rmsnorm_bwd_manual" >/dev/null || { echo "FAIL: cgdev"; exit 1; }
cubin=$(cd "$T/arts/rmsnorm_bwd_manual" && ls -- *.cubin)
out=$("$VARIANT" --repeat 1 "$T/arts" "$T/same" -- -w); rc=$?
echo "$out"
check "-w: exit $rc" test $rc -eq 0
check "-w: same code" grep -qE "^rmsnorm_bwd_manual .* same$" <<<"$out"
check "-w: summary" grep -q "variant -w : 1 kernels, 0 with other code, 0 with an edited .cu, 0 with a larger stack frame" <<<"$out"
check "-w: manifest copied" cmp -s "$T/arts/rmsnorm_bwd_manual/manifest.json" "$T/same/rmsnorm_bwd_manual/manifest.json"
check "-w: OPTIONS" grep -qx -- "-w" "$T/same/OPTIONS"
out=$("$VARIANT" --repeat 1 "$T/arts" "$T/o1" -- --ptxas-options=-O1); rc=$?
echo "$out"
check "-O1: exit $rc" test $rc -eq 0
check "-O1: differs" grep -qE "^rmsnorm_bwd_manual .* DIFFERS: .*\.text\." <<<"$out"
check "-O1: another cubin" bash -c "! cmp -s '$T/arts/rmsnorm_bwd_manual/$cubin' '$T/o1/rmsnorm_bwd_manual/$cubin'"
# NVRTC keeps state across programs of one process (a compile after one with
# --Ofast-compile=mid gets other code): the second artifact's baseline must
# still match its cubin.
mkdir -p "$T/two" && cp -r "$T/arts/rmsnorm_bwd_manual" "$T/two/a" && cp -r "$T/arts/rmsnorm_bwd_manual" "$T/two/b"
out=$("$VARIANT" --repeat 1 "$T/two" "$T/mid" -- --Ofast-compile=mid); rc=$?
echo "$out"
check "mid twice: exit $rc" test $rc -eq 0
check "mid twice: both compiled" grep -q "variant --Ofast-compile=mid : 2 kernels, 2 with other code" <<<"$out"
# A code generation idea: the column epilogue's two unrolled loads made one.
out=$("$VARIANT" --repeat 1 --replace "#pragma unroll 2" "#pragma unroll 1" "$T/arts" "$T/edit"); rc=$?
echo "$out"
check "--replace: exit $rc" test $rc -eq 0
check "--replace: edited and differs" grep -qE "^rmsnorm_bwd_manual .* \(\.cu edited\) DIFFERS: \.text\." <<<"$out"
check "--replace: the edited .cu" grep -q "#pragma unroll 1" "$T/edit/rmsnorm_bwd_manual/${cubin%.cubin}.cu"
check "--replace: OPTIONS" grep -q "replace '#pragma unroll 2' with '#pragma unroll 1'" "$T/edit/OPTIONS"
"$VARIANT" "$T/arts" "$T/none" >/dev/null 2>&1; rc=$?
check "no option: exit $rc" test $rc -eq 2
"$VARIANT" "$T/nothing" "$T/none" -- -w >/dev/null 2>&1; rc=$?
check "no artifacts: exit $rc" test $rc -eq 1
out=$(FUSIOND_DEVCARRY="$T/nobundle" OUT="$T/out" bash "$HERE/option_check.sh" run 1 2>&1); rc=$?
check "run without a bundle: exit $rc" test $rc -eq 1
check "run without a bundle: says what" grep -q "option_check: no $T/nobundle/fusions/CORPUS" <<<"$out"
# Variant names: only nvrtc_variant* folders (prepare replaces them), no '-'.
out=$(FUSIOND_DEVCARRY="$T/bundle" bash "$HERE/option_check.sh" prepare --name ops -- -w 2>&1); rc=$?
check "prepare --name ops: exit $rc" test $rc -eq 2
check "prepare --name ops: says why" grep -q "a variant name is nvrtc_variant" <<<"$out"
mkdir -p "$T/bundle/fusions" "$T/bundle/artifacts" "$T/bundle/nvrtc_variant_min" && touch "$T/bundle/fusions/CORPUS"
echo "--Ofast-compile=min" >"$T/bundle/nvrtc_variant_min/OPTIONS"
out=$(FUSIOND_DEVCARRY="$T/bundle" OUT="$T/out" bash "$HERE/option_check.sh" run 1 nvrtc_variant-x 2>&1); rc=$?
check "run nvrtc_variant-x: exit $rc" test $rc -eq 2
out=$(FUSIOND_DEVCARRY="$T/bundle" OUT="$T/out" bash "$HERE/option_check.sh" run nvrtc_variant_min 2>&1); rc=$?
check "run NAME without ROUNDS: exit $rc" test $rc -eq 2
out=$(FUSIOND_DEVCARRY="$T/bundle" OUT="$T/out" bash "$HERE/option_check.sh" run 1 nvrtc_variant_min nvrtc_variant_mid 2>&1); rc=$?
check "run with an unprepared variant: exit $rc" test $rc -eq 1
check "run with an unprepared variant: names it" grep -q "no $T/bundle/nvrtc_variant_mid/OPTIONS" <<<"$out"
check "run with an unprepared variant: runs nothing" bash -c "! ls '$T/out/option_check/'*.log 2>/dev/null"
exit $fail
