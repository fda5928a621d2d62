#!/usr/bin/env bash
# Writes known-wrong copies of two corpus definitions to OUT_DIR (same file
# names), each with one change a wrong kernel could make, and OUT_DIR/MUTANTS
# listing them. Their kernels, run against the real definitions, must fail
# every check (bench/gpu/device_run.sh, runtime_e2e_test's
# RuntimeE2eMutants): layernorm_bwd_thunder without its mean-gradient term
# (T29 times 0), rmsnorm_bwd_thunder without the bf16 round trip on rstd
# (T3 cast to float instead of bf16). Usage: mutants.sh CORPUS_DIR OUT_DIR
set -euo pipefail
corpus=${1:?usage: mutants.sh CORPUS_DIR OUT_DIR}
out=${2:?usage: mutants.sh CORPUS_DIR OUT_DIR}
mkdir -p "$out"
: >"$out/MUTANTS"
mutate() {  # mutate FILE OLD_LINE NEW_LINE
  local src=$corpus/$1 n
  n=$(grep -cxF "$2" "$src" || true)
  [ "$n" = 1 ] || { echo "mutants.sh: '$2' is in $src $n times, expected once" >&2; exit 1; }
  awk -v old="$2" -v new="$3" '$0 == old { print new; next } { print }' "$src" >"$out/$1"
  echo "$1" >>"$out/MUTANTS"
}
mutate layernorm_bwd_thunder.py "    T35 = fd.ops.add(T14, T29)" "    T35 = fd.ops.add(T14, fd.ops.mul(T29, 0.0))"
mutate rmsnorm_bwd_thunder.py "    T29 = fd.ops.cast(T3, dtype=DataType.BFloat16)" "    T29 = fd.ops.cast(T3, dtype=DataType.Float)"
