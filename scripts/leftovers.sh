#!/usr/bin/env bash
# Lists (and kills) processes the test suite started and left running:
# anything whose executable lives under this checkout, and the servers the
# tests start (redis-server, prometheus) with a loopback bind. Exits 1 if it
# found any, so that a suite that leaks a process fails.
# Usage: scripts/leftovers.sh
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
found=()
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  [ "$pid" = "$$" ] && continue
  exe=$(readlink "$p/exe" 2>/dev/null) || continue
  cmd=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)
  case "$exe" in
    "$root"/build*) found+=("$pid $cmd") ;;
    */redis-server|*/prometheus)
      case "$cmd" in *127.0.0.1*) found+=("$pid $cmd") ;; esac ;;
  esac
done
[ ${#found[@]} -eq 0 ] && exit 0
echo "leftovers: the tests left ${#found[@]} process(es) running (killed now):" >&2
for f in "${found[@]}"; do
  echo "  ${f:0:200}" >&2
  kill -9 "${f%% *}" 2>/dev/null
done
exit 1
