#!/usr/bin/env bash
# Packs what a run on the lent GPU needs into the git-ignored .devcarry/:
#   .devcarry/fusions/*.py          the corpus (tests/corpus/fusions), listed in
#                                   .devcarry/fusions/CORPUS
#   .devcarry/artifacts/<stem>/     `fusionc compile <file> --out ...` per fusion
#   .devcarry/general/<stem>/       the same with --general (kernels for every shape and
#                                   alignment), for runtime_e2e_test's shapes outside the class
#   .devcarry/wide/<stem>/          rmsnorm backward compiled at 512x65536 (rows split
#                                   over blocks) with --general, for device_run.sh's check at
#                                   other shapes
#   .devcarry/selftest/<stem>/      hand-written harness self-test artifacts
#   .devcarry/mutants/<stem>/       kernels of known-wrong definitions
#                                   (bench/gpu/selftest/mutants.sh), which every check must fail
#   .devcarry/rnd/                  random graphs compiled here (fusiond_random_gpu_bundle
#                                   1360 200): manifests, cubins and BUNDLE (seeds, outcomes)
#   .devcarry/bin, .devcarry/lib    runtime_gpu_test, runtime_e2e_test, fusiond_random_gpu_check
#                                   with the libraries they need (all but libc/libm/libpthread/
#                                   libdl/librt/ld-linux/libcuda/libnvrtc), stripped
#   .devcarry/fusionc/{bin,lib}     fusionc and its libraries (RocksDB, gRPC: pytorch_acceptance.sh)
#   .devcarry/runtime_testdata/     the runtime tests' nvcc-built kernels
# Other subfolders of .devcarry/ (other engineers' bundles) are left alone.
# Then prints the carry list and the device command (bench/gpu/full_run.sh).
# Exit status 1 when any part failed to build or compile (the bundle is
# still written; the device run then fails that part's step).
# Usage: scripts/device_bundle.sh [BUILD_DIR]   (default build-rt)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-rt}
CORPUS=${FUSIOND_CORPUS_DIR:-tests/corpus/fusions}
OUT=${FUSIOND_DEVCARRY:-.devcarry}  # another folder: for trying this script out
# .devcarry/ is shared with other engineers' bundles: replace only our parts.
for sub in fusions artifacts general wide selftest mutants rnd bin lib runtime_testdata pb2; do
  rm -rf "${OUT:?}/$sub"
done
mkdir -p "$OUT/fusions" "$OUT/artifacts" "$OUT/general" "$OUT/wide" "$OUT/selftest" "$OUT/mutants" "$OUT/bin" "$OUT/lib"
failed=0

[ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja -DFUSIOND_BUILD_SERVICE=OFF >/dev/null
targets=(runtime_gpu_test runtime_testdata)
grep -qE "^build client/fusionc/fusionc[: ]" "$BUILD/build.ninja" && targets+=(fusionc)
for t in tests/runtime_e2e/runtime_e2e_test tests/runtime_e2e/fusiond_random_gpu_check \
    tests/random/fusiond_random_gpu_bundle; do
  grep -qE "^build $t[: ]" "$BUILD/build.ninja" && targets+=("$(basename "$t")")
done
ninja -C "$BUILD" -j2 "${targets[@]}" >/dev/null

cp "$CORPUS"/*.py "$OUT/fusions/"
# Which of fusions/ are the corpus: bench/gpu/variants.sh adds its variants'
# definitions there, which device_run.sh's corpus table and acceptance_check.py's
# corpus item leave out.
(cd "$OUT/fusions" && ls -- *.py) >"$OUT/fusions/CORPUS"

# Our artifacts, compiled here (NVRTC works without a GPU) by
# `fusionc compile --out`, in-process without the cache so they always come
# from this tree's compiler.
FUSIONC="$BUILD/client/fusionc/fusionc"
echo "fusionc compile (built $(date -u +%FT%TZ) from $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- compiler || echo '+uncommitted compiler/ changes'))" \
  >"$OUT/artifacts/PRODUCER"
for f in "$OUT"/fusions/*.py; do
  stem=$(basename "$f" .py)
  for kind in artifacts general; do
    flag=()
    [ $kind = general ] && flag=(--general)
    if ! "$FUSIONC" compile --no-cache "$f" "${flag[@]}" --out "$OUT/$kind/$stem" >"$OUT/$kind/$stem.log" 2>&1; then
      echo "device_bundle: compiling $stem ($kind) failed (see $OUT/$kind/$stem.log)" >&2
      rm -rf "${OUT:?}/$kind/$stem"
      failed=1
    fi
  done
done

# Rows too wide for one block (SplitWideRows) at a shape the corpus lacks,
# general: device_run.sh runs it at other shapes.
if ! "$FUSIONC" compile --no-cache --general "$OUT/fusions/rmsnorm_bwd_manual.py" --out "$OUT/wide/rmsnorm_bwd_manual" \
    --shapes '512x65536;512x1;512x65536;65536' >"$OUT/wide/rmsnorm_bwd_manual.log" 2>&1; then
  echo "device_bundle: the wide-row artifact failed (see $OUT/wide/rmsnorm_bwd_manual.log)" >&2
  rm -rf "${OUT:?}/wide/rmsnorm_bwd_manual"
  failed=1
fi

# Known-wrong definitions' kernels: device_run.sh's harness step and
# runtime_e2e_test run them against the real definitions and must fail.
M=$(mktemp -d)
bash bench/gpu/selftest/mutants.sh "$OUT/fusions" "$M"
cp "$M/MUTANTS" "$OUT/mutants/"
while read -r f; do
  if ! "$FUSIONC" compile --no-cache "$M/$f" --out "$OUT/mutants/${f%.py}" >"$OUT/mutants/${f%.py}.log" 2>&1; then
    echo "device_bundle: compiling the mutant $f failed (see $OUT/mutants/${f%.py}.log)" >&2
    failed=1
  fi
done <"$M/MUTANTS"
rm -rf "$M"

# Random graphs at realistic sizes (tests/random/gpu_cases.h), compiled
# here; the device makes their inputs and references from the seeds.
# Seeds 1360..1559 hold every scheduler, shared memory and clusters
# (tests/random/gpu_cases_test.cc checks that).
RANDOM_BUNDLE=$BUILD/tests/random/fusiond_random_gpu_bundle
if [ -x "$RANDOM_BUNDLE" ]; then
  "$RANDOM_BUNDLE" 1360 200 "$OUT/rnd" >"$OUT/rnd.log" 2>&1 || { echo "device_bundle: random graphs: see $OUT/rnd.log" >&2; failed=1; }
  tail -9 "$OUT/rnd.log" >&2
else
  echo "device_bundle: no $RANDOM_BUNDLE" >&2
  failed=1
fi

# Harness self-test artifacts (hand-written kernels; never reported as ours).
for cu in bench/gpu/selftest/*.cu; do
  stem=$(basename "$cu" .cu)
  mkdir -p "$OUT/selftest/$stem"
  cp "bench/gpu/selftest/$stem/manifest.json" "$OUT/selftest/$stem/"
  nvcc -cubin -arch=sm_90 -O3 "$cu" -o "$OUT/selftest/$stem/selftest_$stem.cubin"
done

# The C++ runtime's GPU tests and the shared libraries they need.
bins=("$BUILD/client/runtime/runtime_gpu_test")
for b in tests/runtime_e2e/runtime_e2e_test tests/runtime_e2e/fusiond_random_gpu_check; do
  if [ -x "$BUILD/$b" ]; then bins+=("$BUILD/$b"); else echo "device_bundle: no $BUILD/$b" >&2; failed=1; fi
done
for b in "${bins[@]}"; do
  bash scripts/bundle_binary.sh "$b" "$OUT"
done
# fusionc, for fusiond.FusionDefinition and the torch.compile backend
# (bench/gpu/pytorch_acceptance.sh), in a folder of its own: RocksDB and gRPC
# are two thirds of the bundle's libraries, and only fusionc needs them.
[ -x "$BUILD/client/fusionc/fusionc" ] && bash scripts/bundle_binary.sh "$BUILD/client/fusionc/fusionc" "$OUT/fusionc"
cp -r "$BUILD/client/runtime/testdata" "$OUT/runtime_testdata"
# The gRPC client's generated modules (protoc 3.21), for pytorch_acceptance.sh's protobuf check.
[ -d "$BUILD/python/fusiond" ] && mkdir -p "$OUT/pb2/fusiond" && cp "$BUILD"/python/fusiond/*_pb2*.py "$OUT/pb2/fusiond/"

echo "device_bundle: $(du -sh "$OUT" | cut -f1) in $OUT ($(find "$OUT/artifacts" -name manifest.json | wc -l) artifacts)" >&2
echo 'carry: [".devcarry"]'
echo 'command: OUT=$OUT bash bench/gpu/full_run.sh'
exit $failed
