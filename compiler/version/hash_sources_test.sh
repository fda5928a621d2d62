#!/usr/bin/env bash
# compiler/version/hash_sources.cmake on a copy of compiler/: an edit to a
# heuristic, a pass or an NVRTC flag changes the compiler version; an edit to
# a test or to the CPU reference does not; a new source file does.
# Usage: hash_sources_test.sh [CMAKE]
set -u
CMAKE=${1:-cmake}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/compiler" "$tmp/compiler"
hash() { "$CMAKE" -DROOT="$tmp" -DOUT="$tmp/h.h" -P "$here/hash_sources.cmake" && grep -o '"[0-9a-f]*"' "$tmp/h.h"; }
fail=0
base=$(hash)
[ -n "$base" ] || { echo "FAIL: no hash"; exit 1; }
changes() {  # changes WHAT FILE: appending a comment to FILE must change the hash
  local f=$tmp/compiler/$2 before after
  [ -f "$f" ] || { echo "FAIL: no $2"; fail=1; return; }
  before=$(hash)
  echo "// edited" >>"$f"
  after=$(hash)
  [ "$before" != "$after" ] && echo "ok: $1 ($2) changes the version" || { echo "FAIL: $1 ($2) left it $after"; fail=1; }
}
keeps() {
  local f=$tmp/compiler/$2 before after
  [ -f "$f" ] || { echo "FAIL: no $2"; fail=1; return; }
  before=$(hash)
  echo "// edited" >>"$f"
  after=$(hash)
  [ "$before" = "$after" ] && echo "ok: $1 ($2) keeps it" || { echo "FAIL: $1 ($2) changed it"; fail=1; }
}
heuristic=$(cd "$tmp/compiler" && ls scheduler/heuristics*.cc | grep -v _test | head -1)
pass=$(cd "$tmp/compiler" && ls passes/*.cc | grep -v _test | head -1)
changes "a heuristic" "$heuristic"
changes "a pass" "$pass"
changes "the NVRTC flags" nvrtc/nvrtc_compiler.cc
changes "the segmenter" "$(cd "$tmp/compiler" && ls segmenter/*.cc | grep -v _test | head -1)"
changes "the code generator" "$(cd "$tmp/compiler" && ls codegen/*.cc | grep -v -e _test -e _main | head -1)"
changes "the pipeline" pipeline.cc
keeps "a test" "$(cd "$tmp/compiler" && ls scheduler/*_test.cc | head -1)"
keeps "the CPU reference" "$(cd "$tmp/compiler" && ls reference/*.cc | grep -v _test | head -1)"
before=$(hash)
echo "int x;" >"$tmp/compiler/scheduler/new_rule.cc"
[ "$before" != "$(hash)" ] && echo "ok: a new scheduler file changes the version" || { echo "FAIL: a new file left it"; fail=1; }
exit $fail
