#!/bin/bash
# The product path for every corpus fusion (default heuristics), plus the
# symbolic rmsnorm backward compiled at three shapes.
set -e
cd "$(dirname "$0")"
T=../../build-cg/compiler/nvrtc/fusiond_cgdev
rm -rf p; mkdir -p p
for f in bias_gelu_fwd softmax_fwd softmax_bwd rmsnorm_fwd layernorm_fwd rmsnorm_bwd_manual rmsnorm_bwd_thunder layernorm_bwd_thunder batchnorm_bwd_thunder; do
  mkdir -p p/$f; $T fusions/$f.py p/$f 2>&1 | tail -2 | tr '\n' ' ' | sed "s/^/$f: /"; echo
done
mkdir -p p/rmsb_16k p/rmsb_4k p/lnb_16k
$T fusions/rmsnorm_bwd_manual.py p/rmsb_16k --shape=4096x16384,4096x1,4096x16384,16384 2>&1 | tail -1 | sed "s/^/rmsb_16k: /"
$T fusions/rmsnorm_bwd_manual.py p/rmsb_4k --shape=16384x4096,16384x1,16384x4096,4096 2>&1 | tail -1 | sed "s/^/rmsb_4k: /"
