#!/usr/bin/env bash
# End-to-end checks of the fusionc command line: help texts, exit codes,
# parse output, and eval checksums on inputs whose contents are known.
# Usage: fusionc_cli_test.sh FUSIONC SOURCE_DIR
set -u
fusionc=$1
src=$2
here=$src/tests/fusionc_cli
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# expect_rc WANT CMD...: runs CMD, stores stdout/stderr in $out/$err.
expect_rc() {
  local want=$1; shift
  out=$("$@" 2>/tmp/fusionc_cli_err.$$); local rc=$?
  err=$(cat /tmp/fusionc_cli_err.$$)
  [ "$rc" -eq "$want" ] || fail "'$*' exited $rc, expected $want; stderr: $err"
}
contains() { case "$1" in *"$2"*) ;; *) fail "expected '$2' in: $1" ;; esac; }

expect_rc 0 "$fusionc" --help
contains "$out" "parse"
contains "$out" "eval"
expect_rc 0 "$fusionc" parse --help
contains "$out" "--roundtrip"
contains "$out" "--out"
expect_rc 0 "$fusionc" eval --help
contains "$out" "--seed"
contains "$out" "--shapes"
expect_rc 2 "$fusionc"
expect_rc 2 "$fusionc" no-such-command
contains "$err" "unknown command"
expect_rc 2 "$fusionc" parse --no-such-flag "$here/generators.py"
contains "$err" "unknown flag '--no-such-flag'"
expect_rc 2 "$fusionc" parse /nonexistent/file.py
expect_rc 2 "$fusionc" parse
expect_rc 0 "$fusionc" parse --roundtrip --inputs "$here/generators.py"
contains "$out" "input S4 : float64"
contains "$out" "# input 4: scalar float64[] value=0.5"
contains "$out" "# roundtrip ok"
expect_rc 0 "$fusionc" parse --out /tmp/fusionc_cli_$$.pb "$here/generators.py"
[ -s /tmp/fusionc_cli_$$.pb ] || fail "parse --out wrote nothing"
rm -f /tmp/fusionc_cli_$$.pb

# eval: exact checksums from the known inputs.
expect_rc 0 "$fusionc" eval "$here/generators.py" --seed 7
contains "$out" "T5 float32[4, 4] sum=6.400000e+01 abs_sum=6.400000e+01"
contains "$out" "T6 float64[8] sum=8.000000e+00"
contains "$out" "T7 float64[6] sum=-1.500000e+01 abs_sum=1.500000e+01"
contains "$out" "T8 float32[5] sum=5.000000e+00"
# Same seed, same output; another seed, other random inputs.
for f in "$src"/examples/*.py; do
  expect_rc 0 "$fusionc" eval "$f" --seed 3
  first=$out
  expect_rc 0 "$fusionc" eval "$f" --seed 3
  [ "$out" = "$first" ] || fail "eval of $f is not deterministic"
  expect_rc 0 "$fusionc" eval "$f" --seed 4
  [ "$out" != "$first" ] || fail "eval of $f ignores --seed"
done
# Symbolic definition without a list: needs --shapes; bad shapes are bad input.
expect_rc 2 "$fusionc" eval "$here/symbolic_no_inputs.py"
contains "$err" "--shapes"
expect_rc 0 "$fusionc" eval "$here/symbolic_no_inputs.py" --shapes "3x5;5"
contains "$out" "T3 float32[3, 5] sum="
expect_rc 2 "$fusionc" eval "$here/symbolic_no_inputs.py" --shapes "3x5;4"
expect_rc 2 "$fusionc" eval "$here/symbolic_no_inputs.py" --shapes "3xq;5"
expect_rc 2 "$fusionc" eval "$here/symbolic_no_inputs.py" --shapes "100000x100000;100000"
contains "$err" "--max-elements"
expect_rc 2 "$fusionc" eval "$here/generators.py" --seed notanumber
rm -f /tmp/fusionc_cli_err.$$
if [ $failures -ne 0 ]; then
  echo "$failures check(s) failed" >&2
  exit 1
fi
echo "all fusionc CLI checks passed"
