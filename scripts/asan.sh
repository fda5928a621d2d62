#!/usr/bin/env bash
# Sanitizer job: builds fusionc and the front-end tests with AddressSanitizer
# and UBSan in their own build directory (build-asan) and runs the front-end
# unit tests, the corpus parse test, the fusionc CLI test, every
# malformed-script test and the fuzz targets' replays (tests/fuzz: the seeds
# and saved findings through the whole pipeline but NVRTC, and the runtime's
# manifest reader) under them. Only the needed targets are built, so it stays
# within a few minutes on 2 cores (fusionc is built with parse and eval only).
# Usage: scripts/asan.sh   (env: BUILD_DIR=build-asan, JOBS=2)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build-asan}
JOBS=${JOBS:-2}
start=$(date +%s)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFUSIOND_SANITIZE=ON -DFUSIOND_BUILD_SERVICE=OFF -DFUSIONC_ONLY_COMMANDS="parse;eval" >/dev/null
fuzz=(fuzz_repro_script fuzz_graph_proto fuzz_seed_protos)
ninja -C "$BUILD" -t query fuzz_manifest >/dev/null 2>&1 && fuzz+=(fuzz_manifest)  # needs CUDA headers
ninja -C "$BUILD" -j "$JOBS" fusionc frontend_test corpus_parse_test "${fuzz[@]}"
# Any sanitizer report fails the run: ASan exits non-zero, UBSan aborts
# (-fno-sanitize-recover), and the malformed checker rejects any exit code
# other than 2 and any "runtime error" / "Sanitizer" text on stderr.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" --timeout 600 \
  -R '^(malformed\.|Frontend\.|CorpusParse\.|fusionc_cli$|fuzz_.*_replay$)'
echo "asan.sh: passed in $(( $(date +%s) - start ))s"
