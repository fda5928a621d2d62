#!/usr/bin/env bash
# Builds everything and runs every test: the README's test command.
# Then the sanitizer job (scripts/asan.sh): the front end, the CLI and every
# malformed input under AddressSanitizer + UBSan. Fails if a test left a
# process running (scripts/leftovers.sh).
# Usage: scripts/test.sh   (installs missing Debian packages first)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/setup.sh
# Whatever happens, nothing the tests started outlives them.
trap 'bash scripts/leftovers.sh || true' EXIT
JOBS=${JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS"
ctest --test-dir build --output-on-failure -j "$JOBS" --timeout 900
bash scripts/leftovers.sh
JOBS=$JOBS bash scripts/asan.sh
bash scripts/leftovers.sh
echo "test.sh: all tests passed in $(( $(date +%s) - start ))s"
