#!/usr/bin/env bash
# clang-format (Debian's clang-format package, .clang-format in the root) over
# every tracked C/C++ file (*.cc, *.h, *.cu, *.cuh).
# Usage: scripts/format.sh           formats the files in place
#        scripts/format.sh --check   lists the files that differ; exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
command -v "$CLANG_FORMAT" >/dev/null ||
  { echo "format.sh: $CLANG_FORMAT not found (scripts/setup.sh installs clang-format)" >&2; exit 2; }
mode=format
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac
# Tracked files still in the work tree (one deleted but not yet committed is skipped).
mapfile -t files < <(git ls-files -- '*.cc' '*.h' '*.cu' '*.cuh' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ "$mode" = format ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -r "$CLANG_FORMAT" -i --style=file
  exit 0
fi
differ=()
for f in "${files[@]}"; do
  "$CLANG_FORMAT" --style=file --dry-run -Werror "$f" >/dev/null 2>&1 || differ+=("$f")
done
if [ ${#differ[@]} -gt 0 ]; then
  printf '%s\n' "${differ[@]}"
  echo "format.sh: ${#differ[@]} of ${#files[@]} files differ from clang-format (run scripts/format.sh)" >&2
  exit 1
fi
echo "format.sh: ${#files[@]} files clang-format clean"
