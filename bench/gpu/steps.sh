# Sourced by bench/gpu/device_run.sh and full_run.sh: run steps, record the
# exit status of every one, print a summary line, fail when any step failed.
# On the device every test must run: a skipped test fails its step.

STEP_NAMES=()
STEP_RCS=()

# step NAME CMD...: runs CMD (its output to stdout) and records its status.
step() {
  local name=$1 t0=$SECONDS rc
  shift
  echo "== $name"
  "$@"
  rc=$?
  STEP_NAMES+=("$name")
  STEP_RCS+=("$rc")
  if [ "$rc" = 0 ]; then
    echo "-- $name: ok ($((SECONDS - t0)) s)"
  else
    echo "-- $name: FAILED (exit $rc, $((SECONDS - t0)) s)"
  fi
  return 0
}

# need PATH...: fails, naming them, when any path is missing (a bundle part).
need() {
  local p missing=0
  for p in "$@"; do
    [ -e "$p" ] || { echo "missing $p (run scripts/device_bundle.sh here, carry .devcarry)"; missing=1; }
  done
  return $missing
}

# gtest LOG BIN [ARGS...]: a GoogleTest binary; its result lines to stdout,
# all of it to LOG; fails on a failed or skipped test.
gtest() {
  local log=$1 rc a
  shift
  for a in "$@"; do  # the binary: the first word that is no VAR=value or env
    case "$a" in env | timeout | [0-9]* | *=*) ;; *) need "$a" || return 1; break ;; esac
  done
  "$@" >"$log" 2>&1
  gtest_verdict "$log" $?
}

# gtest_verdict LOG RC: prints LOG's result lines; RC, or 1 when a test was
# skipped (the device run must run every one).
gtest_verdict() {
  local log=$1 rc=$2
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure|max rel err|closed form" "$log" | head -120
  if [ "$rc" = 0 ] && grep -q "^\[  SKIPPED \]" "$log"; then
    echo "skipped tests (the device run must run every one):"
    grep "^\[  SKIPPED \]" "$log" | head -20
    return 1
  fi
  return $rc
}

# gtest_sharded LOG SHARDS CMD...: gtest with the binary's tests split into
# SHARDS processes run at once (GoogleTest's GTEST_TOTAL_SHARDS): for
# binaries whose time is CPU reference work; LOG holds every shard's output.
gtest_sharded() {
  local log=$1 shards=$2 i rc=0 pids=()
  shift 2
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i "$@" >"$log.$i" 2>&1 &
    pids+=($!)
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || rc=1; done
  for ((i = 0; i < shards; i++)); do cat "$log.$i"; rm -f "$log.$i"; done >"$log"
  gtest_verdict "$log" $rc
}

# pytest_step LOG CMD...: a Python unittest run; its last lines to stdout,
# all of it to LOG; fails on a failure or a skipped test.
pytest_step() {
  local log=$1 rc
  shift
  "$@" >"$log" 2>&1
  rc=$?
  tail -4 "$log"
  if [ "$rc" = 0 ] && grep -qE "skipped=[1-9]|skipped '" "$log"; then
    echo "skipped tests (the device run must run every one):"
    grep -E "skipped" "$log" | head -10
    return 1
  fi
  return $rc
}

# steps_summary WHAT: one line with every failed step; status 1 if any.
steps_summary() {
  local i failed=()
  for i in "${!STEP_NAMES[@]}"; do
    [ "${STEP_RCS[$i]}" = 0 ] || failed+=("${STEP_NAMES[$i]} (exit ${STEP_RCS[$i]})")
  done
  if [ ${#failed[@]} = 0 ]; then
    echo "SUMMARY $1: all ${#STEP_NAMES[@]} steps passed"
    return 0
  fi
  local joined
  joined=$(printf '%s; ' "${failed[@]}")
  echo "SUMMARY $1: ${#failed[@]} of ${#STEP_NAMES[@]} steps FAILED: ${joined%; }"
  return 1
}
