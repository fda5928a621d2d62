#!/usr/bin/env bash
# fusiond_cgdev end to end: --help, a field override that reaches the kernel,
# and clear errors (status 2, no abort) for bad field values, unknown fields
# and schedulers, and bad --shape sizes.
# Usage: cgdev_test.sh FUSIOND_CGDEV CORPUS_DIR
set -uo pipefail
BIN=$1
F=$2/softmax_fwd.py
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
expect() {  # expect WHAT STATUS PATTERN ARGS...: exit STATUS, output matching PATTERN
  local what=$1 want=$2 pat=$3; shift 3
  out=$("$BIN" "$@" 2>&1); rc=$?
  if [ "$rc" != "$want" ] || ! grep -qE -- "$pat" <<<"$out"; then
    echo "FAIL: $what: exit $rc (want $want), output:"; echo "$out" | tail -5; fail=1
  fi
}
expect "--help" 0 "--compile-cu SOURCE.cu KERNEL OUT.cubin" --help
expect "no arguments" 2 "usage:"
expect "a bad field value" 2 "field block_x: 'abc' is neither a number nor true/false" "$F" "$T/a" block_x=abc
expect "an unknown field" 2 "unknown field warps" "$F" "$T/a" warps=4
expect "an unknown scheduler" 2 "kind: unknown scheduler 'fastest'" "$F" "$T/a" kind=fastest
expect "a field without a value" 2 "'block_x': expected field=value" "$F" "$T/a" block_x
expect "a bad --shape" 2 "--shape: '12a' in '12a' is not a size" "$F" "$T/a" --shape=12a
# An override reaches the kernel: 256 threads a row, the flag spelled as a word.
expect "an override" 0 "registers [0-9]+ spill 0" "$F" "$T/b" block_x=256 multi_pass=false
grep -q '__launch_bounds__(256' "$T"/b/*.cu || { echo "FAIL: block_x=256 not in the kernel"; fail=1; }
[ "$fail" = 0 ] && echo "cgdev_test: all passed"
exit $fail
