#!/usr/bin/env bash
# Runs `fusionc parse` on one malformed repro script and checks that it is
# rejected cleanly: exit code 2 (not a crash, a signal, a sanitizer report or
# a hang), and stderr holding "<file>:<line>:" and the expected message.
# The script's header says what to expect:
#   # expect: <substring of the error message>
#   # expect-line: <line the error points at>
# Usage: check_malformed.sh FUSIONC FILE
set -u
fusionc=$1
file=$2
expect=$(head -n 1 "$file" | sed -n 's/^# expect: //p')
line=$(head -n 2 "$file" | sed -n 's/^# expect-line: //p')
if [ -z "$expect" ] || [ -z "$line" ]; then
  echo "FAIL $file: missing '# expect:' / '# expect-line:' header" >&2
  exit 1
fi
err=$(timeout 60 "$fusionc" parse "$file" 2>&1 >/dev/null)
rc=$?
fail() {
  echo "FAIL $file: $1" >&2
  echo "--- stderr:" >&2
  printf '%s\n' "$err" | head -c 4000 >&2
  exit 1
}
[ $rc -eq 124 ] && fail "timed out"
[ $rc -ge 128 ] && fail "killed by signal $((rc - 128))"
[ $rc -ne 2 ] && fail "exit code $rc, expected 2"
case "$err" in
  *"$file:$line:"*) ;;
  *) fail "stderr does not locate the error at $file:$line:" ;;
esac
case "$err" in
  *"$expect"*) ;;
  *) fail "stderr does not contain '$expect'" ;;
esac
case "$err" in
  *Sanitizer*|*"runtime error"*|*"internal error"*) fail "crash or internal error reported" ;;
esac
echo "ok $file"
