#!/usr/bin/env bash
# Checks that a scheduling change leaves the corpus's kernels alone: the
# corpus fusions (tests/corpus/fusions, measured at the copy limit) compiled
# by two fusionc binaries, at their own sizes, on every target, specialized
# and --general, must give byte-identical CUDA and heuristics.
#
#   bash tests/launch_audit/corpus_identical.sh [--kernels-only] BEFORE_FUSIONC AFTER_FUSIONC [FILE...]
#
# --kernels-only compares each kernel from its `extern "C"` line on, leaving
# out the shared prelude (device helpers every kernel carries), for binaries
# built from trees whose preludes differ.
#
# Exit status 1 when any fusion's kernels or parameters differ (each is
# printed with a diff), 2 on bad usage.
set -uo pipefail
kernels_only=0
if [[ ${1:-} == --kernels-only ]]; then
  kernels_only=1
  shift
fi
if [[ $# -lt 2 ]]; then
  echo "usage: $0 [--kernels-only] BEFORE_FUSIONC AFTER_FUSIONC [FILE...]" >&2
  exit 2
fi
before=$1
after=$2
shift 2
cd "$(dirname "$0")/../.." || exit 2
files=("$@")
[[ ${#files[@]} -eq 0 ]] && files=(tests/corpus/fusions/*.py)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
same=0
for f in "${files[@]}"; do
  for variant in sm_80 sm_86 sm_89 sm_90 sm_100 sm_90:--general; do
    arch=${variant%%:*}
    flags=()
    [[ $variant == *:* ]] && flags=("${variant#*:}")
    stem=$(basename "$f" .py)_${variant/:/}
    for side in before after; do
      bin=$before
      [[ $side == after ]] && bin=$after
      # The CUDA of every kernel, then the heuristics (--explain without the
      # pass timings, which vary from run to run).
      { "$bin" compile "$f" --arch "$arch" "${flags[@]}" --no-cache --emit-cuda 2>&1 |
          awk -v all=$((1 - kernels_only)) '/^\/\/ kernel /{body = 0; print; next}
                                            /^extern "C"/{body = 1} all || body'
        "$bin" compile "$f" --arch "$arch" "${flags[@]}" --no-cache --no-codegen --explain 2>&1 |
          sed -E -e '/^stages /d' -e 's/ +[0-9]+(\.[0-9]+)? (us|ms)/ T/g'; } >"$tmp/$stem.$side"
    done
    if cmp -s "$tmp/$stem.before" "$tmp/$stem.after"; then
      same=$((same + 1))
    else
      echo "DIFFERS: $f ($variant)"
      diff "$tmp/$stem.before" "$tmp/$stem.after" | head -40
      status=1
    fi
  done
done
echo "$same identical (fusion, arch) pairs of $((${#files[@]} * 6))"
exit $status
