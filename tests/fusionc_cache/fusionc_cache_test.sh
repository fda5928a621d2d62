#!/usr/bin/env bash
# `fusionc compile` on the embedded default (a local RocksDB cache, no daemon):
# a miss, then a hit; --out writes the manifest and cubins. Then the same
# through a real fusiond on loopback with `fusionc --server`: the report
# names the same segments and kernels as the embedded one. Last, two embedded
# caches behind one real redis-server (--redis): what the first compiles, the
# second serves as a hit.
# Usage: fusionc_cache_test.sh FUSIONC FUSIOND CORPUS_DIR REDIS_SERVER
set -uo pipefail
FUSIONC=$1
FUSIOND=$2
CORPUS=$3
REDIS=${4:-/usr/bin/redis-server}
work=$(mktemp -d)
daemon=
redis=
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null
  [ -n "$redis" ] && kill "$redis" 2>/dev/null
  wait 2>/dev/null; rm -rf "$work"
}
trap cleanup EXIT INT TERM
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
key='r["canonical_hash"], [(s["scheduler"], s["heuristics"]) for s in r["segments"]]'
if [ -n "$remote" ]; then
  check "first remote compile is a miss" test "$(field 'r["cache"]' <<<"$remote")" = miss
  again=$("$FUSIONC" --server 127.0.0.1:$port compile "$f" --json)
  check "second remote compile is a hit" test "$(field 'r["cache"]' <<<"$again")" = hit
  check "remote and embedded reports agree" test "$(field "$key" <<<"$again")" = "$(field "$key" <<<"$second")"
  # A reply holds the CUDA source only when --source asks for it.
  "$FUSIONC" --server 127.0.0.1:$port compile "$f" --out "$work/lean" >/dev/null
  check "--server --out wrote a cubin" compgen -G "$work/lean/*.cubin" >/dev/null
  check "--server --out without --source wrote no .cu" test -z "$(compgen -G "$work/lean/*.cu")"
  "$FUSIONC" --server 127.0.0.1:$port compile "$f" --source --out "$work/full" >/dev/null
  check "--server --source --out wrote the .cu" compgen -G "$work/full/*.cu" >/dev/null
  check "the cubin is the same either way" cmp -s "$work"/lean/*.cubin "$work"/full/*.cubin
fi
"$FUSIONC" --server 127.0.0.1:$port compile "$f" --explain >/dev/null 2>&1
check "--explain with --server is refused with exit 2" test $? -eq 2
"$FUSIONC" --server 127.0.0.1:$port compile "$f" --redis 127.0.0.1:1 >/dev/null 2>&1
check "--redis with --server is refused with exit 2" test $? -eq 2

# The shared tier: two embedded caches, one real Redis on loopback.
rport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$REDIS" --port "$rport" --bind 127.0.0.1 --save "" --appendonly no >"$work/redis.log" 2>&1 &
redis=$!
for _ in $(seq 1 100); do
  python3 -c "import socket; socket.create_connection(('127.0.0.1', $rport), 1)" 2>/dev/null && break
  sleep 0.1
done
# Records are signed with the cluster secret (fusionc reads $FUSIOND_REDIS_SECRET_FILE).
(umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$work/secret")
FUSIOND_REDIS_SECRET_FILE= "$FUSIONC" compile "$f" --cache-dir "$work/rs" --redis 127.0.0.1:$rport >/dev/null 2>&1
check "--redis without the cluster secret is refused with exit 2" test $? -eq 2
export FUSIOND_REDIS_SECRET_FILE="$work/secret"
a=$("$FUSIONC" compile "$f" --cache-dir "$work/ra" --redis 127.0.0.1:$rport --json)
check "first cache behind redis: a miss" test "$(field 'r["cache"]' <<<"$a")" = miss
b=$("$FUSIONC" compile "$f" --cache-dir "$work/rb" --redis 127.0.0.1:$rport --json)
check "second cache behind redis: a hit (the first one's compile)" test "$(field 'r["cache"]' <<<"$b")" = hit
check "the two reports agree" test "$(field "$key" <<<"$a")" = "$(field "$key" <<<"$b")"
kill "$redis"; wait "$redis" 2>/dev/null; redis=
c=$("$FUSIONC" compile "$f" --cache-dir "$work/rc" --redis 127.0.0.1:$rport --json)
check "redis down: the compile still runs (a miss)" test "$(field 'r["cache"]' <<<"$c")" = miss
"$FUSIONC" compile "$f" --redis no-port >/dev/null 2>&1
check "a bad --redis address exits 2" test $? -eq 2
[ $fail -eq 0 ] || { cat "$work/daemon.log" >&2; exit 1; }
echo "fusionc cache: all checks passed"
