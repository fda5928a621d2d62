#!/usr/bin/env bash
# `fusionc compile` on the embedded default (a local RocksDB cache, no daemon):
# a miss, then a hit; --out writes the manifest and cubins. Then the same
# through a real fusiond on loopback with `fusionc --server`: the report
# names the same segments and kernels as the embedded one.
# Usage: fusionc_cache_test.sh FUSIONC FUSIOND CORPUS_DIR
set -uo pipefail
FUSIONC=$1
FUSIOND=$2
CORPUS=$3
work=$(mktemp -d)
daemon=
cleanup() { [ -n "$daemon" ] && kill "$daemon" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail=0
check() {  # check WHAT COMMAND...
  local what=$1; shift
  if ! "$@"; then echo "FAIL: $what"; fail=1; fi
}
field() { python3 -c "import json,sys; r=json.load(sys.stdin); print($1)"; }
f=$CORPUS/rmsnorm_bwd_manual.py

# Embedded cache.
export FUSIOND_CACHE_DIR=$work/cache
first=$("$FUSIONC" compile "$f" --json); check "embedded compile exits 0" test $? -eq 0
check "first compile is a miss" test "$(field 'r["cache"]' <<<"$first")" = miss
second=$("$FUSIONC" compile "$f" --json)
check "second compile is a hit" test "$(field 'r["cache"]' <<<"$second")" = hit
check "one segment, inner_outer_persistent" \
  test "$(field '",".join(s["scheduler"] for s in r["segments"])' <<<"$second")" = inner_outer_persistent
"$FUSIONC" compile "$f" --cache-dir "$work/other" | grep -q '^cache: miss'
check "--cache-dir names another cache" test $? -eq 0
"$FUSIONC" compile "$f" --out "$work/art" >/dev/null; check "--out exits 0" test $? -eq 0
check "--out wrote manifest.json" test -s "$work/art/manifest.json"
check "--out wrote a cubin" compgen -G "$work/art/*.cubin" >/dev/null
check "manifest names the cubin" grep -q "\"binary\": \"$(basename "$work"/art/*.cubin)\"" "$work/art/manifest.json"

# The daemon.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$FUSIOND" --listen 127.0.0.1:$port --metrics "" --cache-dir "$work/daemon" 2>"$work/daemon.log" &
daemon=$!
remote=
for _ in $(seq 1 100); do
  remote=$("$FUSIONC" --server 127.0.0.1:$port compile "$f" --json 2>/dev/null) && break
  remote=
  sleep 0.2
done
check "fusionc --server reached the daemon" test -n "$remote"
if [ -n "$remote" ]; then
  check "first remote compile is a miss" test "$(field 'r["cache"]' <<<"$remote")" = miss
  again=$("$FUSIONC" --server 127.0.0.1:$port compile "$f" --json)
  check "second remote compile is a hit" test "$(field 'r["cache"]' <<<"$again")" = hit
  key='r["canonical_hash"], [(s["scheduler"], s["heuristics"]) for s in r["segments"]]'
  check "remote and embedded reports agree" test "$(field "$key" <<<"$again")" = "$(field "$key" <<<"$second")"
fi
"$FUSIONC" --server 127.0.0.1:$port compile "$f" --explain >/dev/null 2>&1
check "--explain with --server is refused with exit 2" test $? -eq 2
[ $fail -eq 0 ] || { cat "$work/daemon.log" >&2; exit 1; }
echo "fusionc cache: all checks passed"
