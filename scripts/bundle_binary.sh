#!/usr/bin/env bash
# Copies a binary built here into DIR/bin (stripped) and the shared libraries
# it needs into DIR/lib, for a run on the lent GPU host (run it there with
# LD_LIBRARY_PATH=DIR/lib). Left out: the C library family and libcuda (the
# host's), libnvrtc (100+ MB: the host's NVRTC 13 serves) and libstdc++ /
# libgcc_s (the host's newer ones serve).
# Usage: scripts/bundle_binary.sh BINARY DIR
set -euo pipefail
bin=${1:?binary}
dir=${2:?bundle folder}
mkdir -p "$dir/bin" "$dir/lib"
cp "$bin" "$dir/bin/"
strip "$dir/bin/$(basename "$bin")"
ldd "$bin" | awk '/=> \//{print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so* | ld-linux* | libcuda.so*) ;;
    libnvrtc* | libstdc++.so* | libgcc_s.so*) ;;
    *) cp -L "$lib" "$dir/lib/" ;;
  esac
done
