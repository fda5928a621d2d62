#!/usr/bin/env bash
# Installs the Debian 12 packages fusiond needs, only those missing. Idempotent.
# Usage: scripts/setup.sh            (as root, or with sudo available)
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libgmock-dev
  libabsl-dev
  libprotobuf-dev protobuf-compiler
  libgrpc++-dev protobuf-compiler-grpc
  librocksdb-dev
  prometheus-cpp-dev
  libhiredis-dev redis-server libssl-dev openssl
  prometheus
  python3-grpcio python3-protobuf python3-numpy python3-yaml
  curl clang-format
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1 && ! ls /usr/local/cuda/targets/*/lib/libnvrtc.so* >/dev/null 2>&1; then
  echo "setup: warning: CUDA toolkit (NVRTC) not found under /usr/local/cuda; GPU code generation will be disabled" >&2
fi
