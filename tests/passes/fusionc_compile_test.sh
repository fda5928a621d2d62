#!/usr/bin/env bash
# `fusionc compile` end to end on the corpus: one segment per file with the
# README's scheduler (text, --json, --explain), the flags' exit codes, --dump,
# --allow-precision-increase and --shapes.
# Usage: fusionc_compile_test.sh FUSIONC CORPUS_DIR
set -uo pipefail
FUSIONC=$1
CORPUS=$2
fail=0
check() {  # check WHAT CONDITION...
  local what=$1; shift
  if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}
declare -A want=(
  [rmsnorm_bwd_thunder]=inner_outer_persistent [rmsnorm_bwd_manual]=inner_outer_persistent
  [layernorm_bwd_thunder]=inner_outer_persistent [batchnorm_bwd_thunder]=outer_persistent
  [layernorm_fwd]=inner_persistent [rmsnorm_fwd]=inner_persistent [softmax_fwd]=inner_persistent
  [softmax_bwd]=inner_persistent [bias_gelu_fwd]=pointwise)
for name in "${!want[@]}"; do
  file=$CORPUS/$name.py
  json=$("$FUSIONC" compile "$file" --json --no-codegen); rc=$?
  check "$name: exit $rc" test $rc -eq 0
  n=$(grep -o '"scheduler":' <<<"$json" | wc -l)
  check "$name: $n segments" test "$n" -eq 1
  check "$name: scheduler" grep -q "\"segments\":\[{\"scheduler\":\"${want[$name]}\"" <<<"$json"
  for key in '"canonical_hash":"' '"heuristics":{"kind":' '"passes":[{"name":'; do
    check "$name: $key" grep -qF "$key" <<<"$json"
  done
  if command -v python3 >/dev/null; then
    check "$name: valid JSON" python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$json"
  fi
  explain=$("$FUSIONC" compile "$file" --explain --no-codegen)
  check "$name: explain names the scheduler" grep -q "segment 0: ${want[$name]}" <<<"$explain"
  for field in vectorize block_x persistent_batch grid_reduction multi_pass; do
    check "$name: explain shows $field" grep -q "^      $field " <<<"$explain"
  done
done
f=$CORPUS/rmsnorm_bwd_thunder.py
"$FUSIONC" compile "$f" --arch sm_70 --no-codegen >/dev/null 2>&1; check "unknown arch exits 2" test $? -eq 2
"$FUSIONC" compile "$f" --dump=nope --no-codegen >/dev/null 2>&1; check "unknown pass exits 2" test $? -eq 2
"$FUSIONC" compile /nonexistent.py --no-codegen >/dev/null 2>&1; check "missing file exits 2" test $? -eq 2
grep -q -- "--allow-precision-increase" <<<"$("$FUSIONC" compile --help)"; check "help lists flags" test $? -eq 0
for arch in sm_80 sm_86 sm_89 sm_90 sm_100; do
  "$FUSIONC" compile "$f" --arch $arch --no-codegen >/dev/null; check "--arch $arch" test $? -eq 0
done
dumps=$("$FUSIONC" compile "$f" --dump=all --no-codegen | grep -c '^// IR after')
check "--dump=all printed $dumps dumps" test "$dumps" -ge 3
"$FUSIONC" compile "$f" --dump=pow_constant --no-codegen | grep -q '^// IR after pow_constant'
check "--dump=pow_constant" test $? -eq 0
"$FUSIONC" compile "$f" --explain --no-codegen | grep -q 'kept the narrowing float32->bfloat16->float32'
check "round trip kept and reported" test $? -eq 0
"$FUSIONC" compile "$f" --explain --no-codegen --allow-precision-increase | grep -q 'removed the narrowing'
check "round trip removed and reported" test $? -eq 0
t=$("$FUSIONC" compile "$f" --no-codegen | head -1 | sed 's/^segment 0: [a-z_]* *//')
m=$("$FUSIONC" compile "$CORPUS/rmsnorm_bwd_manual.py" --no-codegen | head -1 | sed 's/^segment 0: [a-z_]* *//')
check "thunder and manual heuristics equal" test "$t" = "$m"
# --shapes: a symbolic definition at other sizes (rows too wide for one block
# split over eight), bad shapes and a static definition's sizes are bad input.
m=$CORPUS/rmsnorm_bwd_manual.py
grep -q -- "--shapes S" <<<"$("$FUSIONC" compile --help)"; check "help lists --shapes" test $? -eq 0
out=$("$FUSIONC" compile "$m" --no-codegen --shapes '512x65536;512x1;512x65536;65536')
check "--shapes: exit 0" test $? -eq 0
check "--shapes: heuristics at 512x65536" grep -q 'outer_size=512 inner_size=65536 .*grid_y=8 ' <<<"$out"
err=$("$FUSIONC" compile "$m" --no-codegen --shapes '512x65536;512x1;512x65536' 2>&1 >/dev/null)
check "--shapes: three of four inputs exits 2" test $? -eq 2
check "--shapes: says how many" grep -q 'takes 4 inputs, got 3' <<<"$err"
"$FUSIONC" compile "$m" --no-codegen --shapes '512xq' >/dev/null 2>&1; check "--shapes: not a size exits 2" test $? -eq 2
err=$("$FUSIONC" compile "$CORPUS/layernorm_bwd_thunder.py" --no-codegen \
  --shapes '512x65536;512x65536;65536;512x1;512x1' 2>&1 >/dev/null)
check "--shapes: a static definition's sizes exit 2" test $? -eq 2
check "--shapes: says which axis" grep -q 'but the definition requires' <<<"$err"
if [ $fail -ne 0 ]; then exit 1; fi
echo "fusionc compile: all checks passed"
