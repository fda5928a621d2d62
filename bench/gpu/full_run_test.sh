#!/usr/bin/env bash
# bench/gpu/full_run.sh where no GPU and no bundle are (CI): it must run every
# step, record each failure, print its summary line and exit non-zero.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bundle" "$tmp/out"
OUT=$tmp/out FUSIOND_DEVCARRY=$tmp/bundle RANDOM_TIMEOUT=30 HARNESS_TIMEOUT=30 \
  bash bench/gpu/full_run.sh >"$tmp/stdout" 2>&1
rc=$?
fail=0
expect() {  # expect FILE REGEX WHY
  grep -qE "$2" "$1" || { echo "FAIL: $3 (no /$2/ in $(basename "$1"))"; fail=1; }
}
[ "$rc" != 0 ] || { echo "FAIL: full_run.sh exited 0 without a GPU"; fail=1; }
expect "$tmp/stdout" "^SUMMARY full_run.sh: [0-9]+ of [0-9]+ steps FAILED: device_run.sh" \
  "the summary names the failed device_run.sh step"
expect "$tmp/stdout" "random graphs" "the random graphs' step ran"
expect "$tmp/out/device_run.log" "no nvidia-smi|GPU host: FAILED" "device_run.sh says there is no GPU"
expect "$tmp/out/device_run.log" "missing $tmp/bundle/" "device_run.sh names the missing bundle parts"
expect "$tmp/out/device_run.log" "^SUMMARY device_run.sh: [0-9]+ of [0-9]+ steps FAILED" "device_run.sh's summary"
expect "$tmp/out/other-logs.txt" "^SUMMARY full_run.sh" "other-logs.txt opens with the summary"
if [ $fail != 0 ]; then
  echo "---- full_run.sh's output (exit $rc):"; cat "$tmp/stdout"
  echo "---- device_run.log:"; cat "$tmp/out/device_run.log"
  exit 1
fi
echo "full_run_test: exit $rc without a GPU; $(grep '^SUMMARY' "$tmp/stdout")"
