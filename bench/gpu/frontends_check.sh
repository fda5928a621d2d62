#!/usr/bin/env bash
# Issue 34's last acceptance item: definitions that real front ends print for
# common training models (tests/frontends/fusions/*.py, each with its
# `# expect:` line) compile or are refused naming an out-of-scope op, are
# correct on the GPU, and are no slower than torch.compile.
#
#   here:   bash bench/gpu/frontends_check.sh prepare [BUILD_DIR]
#           compiles every definition with `fusionc compile --no-cache --out`
#           into .devcarry/frontends/<stem>/ and checks each refusal names its
#           op; lists the fusions bench/gpu/run.py runs (HARNESS) and those with
#           random ops (RANDOM: torch cannot make the same numbers, so
#           fusiond_ops_gpu_check runs them against the CPU reference, random
#           values bit for bit), bundled with its libraries under
#           .devcarry/frontends/bin and lib. BUILD_DIR defaults to build.
#   device: OUT=$OUT bash bench/gpu/frontends_check.sh run [--part K/N]
#           (carry: [".devcarry"]) bench/gpu/run.py --require-ours on HARNESS
#           (every output against float64, ours / torch.compile under do_bench
#           and in steady state), then the RANDOM check; one summary line per
#           fusion. --part K/N runs the K-th of N slices of HARNESS (and the
#           RANDOM check with the last slice), for runs that must stay short.
# Exit status: 1 when a definition fails its expectation or a check fails, or
# a fusion did not run; fusions slower than torch.compile are printed
# (SLOWER) and counted but do not fail the run.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
D=${FUSIOND_DEVCARRY:-.devcarry}/frontends
SRC=tests/frontends/fusions
case "${1:-}" in
  prepare)
    BUILD=${2:-build}
    FUSIONC="$BUILD/client/fusionc/fusionc"
    ninja -C "$BUILD" -j2 fusionc fusiond_ops_gpu_check >/dev/null ||
      { echo "frontends_check: building fusionc and fusiond_ops_gpu_check in $BUILD failed"; exit 1; }
    rm -rf "$D"
    mkdir -p "$D/fusions" "$D/bin" "$D/lib"
    cp "$SRC"/*.py "$D/fusions/"
    : >"$D/HARNESS"
    : >"$D/RANDOM"
    : >"$D/EXPECTED"
    failed=0
    for f in "$D"/fusions/*.py; do
      stem=$(basename "$f" .py)
      read -r kind op _ < <(sed -n 's/^# expect: *//p' "$f" | head -1)
      if "$FUSIONC" compile "$f" --no-cache --out "$D/$stem" >"$D/$stem.log" 2>&1; then
        if [ "$kind" = refused ]; then
          echo "frontends_check: $stem compiled, expected refused naming $op"; failed=1; continue
        fi
        if grep -qE "fd\.ops\.(uniform|normal|rand_like|randn_like)\(" "$f"; then
          echo "$stem" >>"$D/RANDOM"
        else
          echo "$stem" >>"$D/HARNESS"
        fi
        echo "$stem compiles ($(grep -c '^segment' "$D/$stem.log") kernel(s))" >>"$D/EXPECTED"
      else
        rm -rf "${D:?}/$stem"
        why=$(tail -1 "$D/$stem.log")
        if [ "$kind" = compiles ] || ! grep -q "$op" <<<"$why"; then
          echo "frontends_check: $stem: expected '$kind $op', got: $why"; failed=1
        fi
        echo "$stem $kind $op: $why" >>"$D/EXPECTED"
      fi
    done
    CHECK="$BUILD/tests/ops/fusiond_ops_gpu_check"
    bash scripts/bundle_binary.sh "$CHECK" "$D" || exit 1
    echo "fusionc compile from $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- compiler || echo '+uncommitted compiler/ changes')" \
      >"$D/PRODUCER"
    cat "$D/EXPECTED"
    echo "frontends_check: $(wc -l <"$D/HARNESS") for run.py, $(wc -l <"$D/RANDOM") random, $(du -sh "$D" | cut -f1) in $D"
    echo "device: OUT=\$OUT bash bench/gpu/frontends_check.sh run   (carry: [\".devcarry\"])"
    exit $failed
    ;;
  run)
    OUT=${OUT:-bench/out}
    [ -s "$D/HARNESS" ] || { echo "frontends_check: no $D/HARNESS (run prepare here first)"; exit 1; }
    part=1/1
    [ "${2:-}" = --part ] && part=${3:-1/1}
    k=${part%/*} n=${part#*/}
    mkdir -p "$OUT/frontends"
    mapfile -t all <"$D/HARNESS"
    files=()
    for i in "${!all[@]}"; do
      [ $((i % n + 1)) -eq "$k" ] && files+=("$D/fusions/${all[$i]}.py")
    done
    cat "$D/PRODUCER" "$D/EXPECTED"
    rc=0
    if [ ${#files[@]} -gt 0 ]; then
      # No other-shape runs: Thunder-style definitions pin symbolic inputs
      # to the static shapes of their broadcasts.
      timeout 240 python3 bench/gpu/warm_compile.py "${files[@]}" | tail -1  # torch.compile's caches, in parallel
      python3 bench/gpu/run.py --artifacts "$D" --fusions "${files[@]}" --require-ours \
        --three-shapes --warmup 10 --rep 40 --out "$OUT/frontends" --tag "frontends-$k-of-$n" \
        2>&1 | tee "$OUT/frontends/run-$k-of-$n.log"
      rc=${PIPESTATUS[0]}
      python3 - "$OUT/frontends"/gpu-*-frontends-"$k"-of-"$n".json <<'PY' || rc=1
import json, sys
rows = json.load(open(sys.argv[-1]))["fusions"]
print("\nfrontends: ours against torch.compile (do_bench; steady state in brackets)")
slower = failed = 0
for r in rows:
    o, c, name = r.get("ours", {}), r.get("compile", {}), r["fusion"]
    if "us" not in o:
        failed += 1
        print(f"  {name:44} FAIL ({r.get('error') or o.get('error', 'ours did not run')})"[:200])
        continue
    if "us" not in c:  # torch.compile could not run it: nothing to compare with
        print(f"  {name:44} ours {o['us']:8.1f} us  compile n/a ({c.get('error', '')})  "
              f"{'PASS' if o.get('pass') else 'FAIL'}"[:200])
        failed += not o.get("pass")
        continue
    speed = c["us"] / o["us"]
    steady = c["steady_us"] / o["steady_us"] if "steady_us" in o and "steady_us" in c else None
    slow = speed < 1.0 or (steady is not None and steady < 1.0)
    slower += slow
    failed += not o.get("pass")
    st = f" [{steady:5.2f}x]" if steady is not None else " [  n/a ]"
    print(f"  {name:44} ours {o['us']:8.1f} us  compile {c['us']:8.1f} us  {speed:5.2f}x{st}  "
          f"{o['pct_copy_bw']:3.0f}% of copy  err {o['max_rel_err']:.2e}  "
          f"{'PASS' if o.get('pass') else 'FAIL'}{'  SLOWER' if slow else ''}")
print(f"frontends: {len(rows)} fusions, {failed} failed, {slower} slower than torch.compile")
sys.exit(1 if failed else 0)
PY
    fi
    if [ "$k" = "$n" ] && [ -s "$D/RANDOM" ]; then
      LD_LIBRARY_PATH="$D/lib" "$D/bin/fusiond_ops_gpu_check" "$D" 2>&1 |
        tee "$OUT/frontends/random.log" || rc=1
    fi
    exit "$rc"
    ;;
  *) sed -n 2,23p "$0"; exit 2 ;;
esac
