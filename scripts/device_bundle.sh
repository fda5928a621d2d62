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
#   .devcarry/bin, .devcarry/lib    runtime_gpu_test, runtime_e2e_test and the libraries they
#                                   needs (all but libc/libm/libpthread/libdl/
#                                   librt/ld-linux/libcuda), stripped
#   .devcarry/runtime_testdata/     the runtime tests' nvcc-built kernels
# Other subfolders of .devcarry/ (other engineers' bundles) are left alone.
# Then prints the carry list and the device command (bench/gpu/device_run.sh).
# Usage: scripts/device_bundle.sh [BUILD_DIR]   (default build-rt)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-rt}
CORPUS=${FUSIOND_CORPUS_DIR:-tests/corpus/fusions}
OUT=.devcarry
# .devcarry/ is shared with other engineers' bundles: replace only our parts.
for sub in fusions artifacts general wide selftest bin lib runtime_testdata pb2; do rm -rf "${OUT:?}/$sub"; done
mkdir -p "$OUT/fusions" "$OUT/artifacts" "$OUT/general" "$OUT/wide" "$OUT/selftest" "$OUT/bin" "$OUT/lib"

[ -f "$BUILD/build.ninja" ] || cmake -S . -B "$BUILD" -G Ninja -DFUSIOND_BUILD_SERVICE=OFF >/dev/null
targets=(runtime_gpu_test runtime_testdata)
grep -qE "^build client/fusionc/fusionc[: ]" "$BUILD/build.ninja" && targets+=(fusionc)
grep -qE "^build tests/runtime_e2e/runtime_e2e_test[: ]" "$BUILD/build.ninja" && targets+=(runtime_e2e_test)
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
    fi
  done
done

# Rows too wide for one block (SplitWideRows) at a shape the corpus lacks,
# general: device_run.sh runs it at other shapes.
if ! "$FUSIONC" compile --no-cache --general "$OUT/fusions/rmsnorm_bwd_manual.py" --out "$OUT/wide/rmsnorm_bwd_manual" \
    --shapes '512x65536;512x1;512x65536;65536' >"$OUT/wide/rmsnorm_bwd_manual.log" 2>&1; then
  echo "device_bundle: the wide-row artifact failed (see $OUT/wide/rmsnorm_bwd_manual.log)" >&2
  rm -rf "${OUT:?}/wide/rmsnorm_bwd_manual"
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
[ -x "$BUILD/tests/runtime_e2e/runtime_e2e_test" ] && bins+=("$BUILD/tests/runtime_e2e/runtime_e2e_test")
# fusionc, for fusiond.FusionDefinition and the torch.compile backend (bench/gpu/pytorch_acceptance.sh)
[ -x "$BUILD/client/fusionc/fusionc" ] && bins+=("$BUILD/client/fusionc/fusionc")
for b in "${bins[@]}"; do
  cp "$b" "$OUT/bin/"
  strip "$OUT/bin/$(basename "$b")"
  ldd "$b" | awk '/=> \//{print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libcuda.so*) ;;
      libnvrtc*) ;;  # 100+ MB: the host's NVRTC 13 serves
      libstdc++.so*|libgcc_s.so*) ;;  # the device's newer ones serve
      *) cp -L "$lib" "$OUT/lib/" ;;
    esac
  done
done
cp -r "$BUILD/client/runtime/testdata" "$OUT/runtime_testdata"
# The gRPC client's generated modules (protoc 3.21), for pytorch_acceptance.sh's protobuf check.
[ -d "$BUILD/python/fusiond" ] && mkdir -p "$OUT/pb2/fusiond" && cp "$BUILD"/python/fusiond/*_pb2*.py "$OUT/pb2/fusiond/"

echo "device_bundle: $(du -sh "$OUT" | cut -f1) in $OUT ($(find "$OUT/artifacts" -name manifest.json | wc -l) artifacts)" >&2
echo 'carry: [".devcarry"]'
echo 'command: bash bench/gpu/device_run.sh'
