#!/usr/bin/env bash
# Heuristic sweeps on the lent GPU: artifact variants are built here with
# fusiond_cgdev (the pipeline's choice, or hand-set HeuristicParams fields),
# then timed there side by side by bench/gpu/run.py (no torch.compile).
#
#   here:  bench/gpu/variants.sh prepare VARIANTS_FILE [BUILD_DIR]   (after scripts/device_bundle.sh)
#          CGDEV=/path/to/older/fusiond_cgdev APPEND=1 bench/gpu/variants.sh prepare ...
#          adds variants built by another compiler (a before/after table in one run);
#          SUFFIX=-b names them NAME-b, so the run (alphabetical) times each
#          fusion's compilers one after another
#   there: bench/gpu/variants.sh run [run.py flags]                   (carry .devcarry)
#          writes $OUT/variants/ (a log, JSON and PNG a variant) and the run
#          merged, $OUT/variants-all.{json,png} (bench/gpu/merge_reports.py):
#          with OUT=$(mktemp -d), copy those two into the call's $OUT
#          THREE_SHAPES=1 also runs each symbolic variant's one artifact at
#          three other shapes (run.py's check; off by default for speed)
#
# VARIANTS_FILE, one variant per line (# comments):
#   NAME STEM [+compile] [map=OLD:NEW,...] [static=OLD:NEW,... as=NEWSTEM]
#        [--shape=AxB,C,...] [field=value ...]
# STEM is a corpus file (tests/corpus/fusions), bench/gpu/fusions/STEM.py or a
# fuzz finding (tests/fuzz/findings/repro_script/STEM.py); map
# is run.py's --size-map (run the script at other sizes), --shape the sizes
# the kernel is compiled for, +compile also times torch.compile. A static
# definition runs at other sizes as a copy NEWSTEM.py whose size literals
# (static=, e.g. 2048:16384,8192:4096; also in scalars such as 8192.00) are
# replaced. Without fields the pipeline decides. A line
#   # swap NAME KIND BX PB MINB [smem] [grid=N]
# then puts bench/gpu/probes/lean_rows.py's kernel in NAME's place
# (bench/gpu/probes/lean_swap.sh; grid=N: the blocks launched). A line
#   # edit NAME PROBE.py [ARGS...]
# rewrites NAME's generated kernel with bench/gpu/probes/PROBE.py
# (PROBE.py GENERATED.cu OUT.cu ARGS...) and recompiles its cubin with the
# pipeline's NVRTC options.
set -uo pipefail
cd "$(dirname "$0")/../.."
D=.devcarry
# Where the variants are prepared and run from (VARIANTS_DIR, under .devcarry;
# default .devcarry/variants), so two sweeps prepared at once keep apart.
V=${VARIANTS_DIR:-$D/variants}
case "${1:-}" in
  prepare)
    VARS=${2:?variants file}
    BUILD=${3:-build-cg}
    CORPUS=${FUSIOND_CORPUS_DIR:-tests/corpus/fusions}
    CGDEV=${CGDEV:-}
    if [ -z "$CGDEV" ]; then
      ninja -C "$BUILD" -j2 fusiond_cgdev >/dev/null || exit 1
      CGDEV=$BUILD/compiler/nvrtc/fusiond_cgdev
    fi
    [ "${APPEND:-0}" = 1 ] || rm -rf "$V"
    mkdir -p "$V" "$D/fusions"
    while read -r name stem rest; do
      [ -z "${name:-}" ] || [ "${name:0:1}" = "#" ] && continue
      name=$name${SUFFIX:-}
      src="$CORPUS/$stem.py"
      [ -f "$src" ] || src="bench/gpu/fusions/$stem.py"
      [ -f "$src" ] || src="tests/fuzz/findings/repro_script/$stem.py"
      args=()
      map="-"
      compile=0
      static=""
      as=""
      for a in $rest; do
        case "$a" in
          map=*) map=${a#map=} ;;
          static=*) static=${a#static=} ;;
          as=*) as=${a#as=} ;;
          +compile) compile=1 ;;
          *) args+=("$a") ;;
        esac
      done
      if [ -n "$static" ]; then
        [ -n "$as" ] || { echo "variants: $name: static= needs as=NEWSTEM"; continue; }
        python3 - "$src" "$D/fusions/$as.py" "$static" <<'PY'
import re, sys
src, dst, pairs = sys.argv[1], sys.argv[2], dict(p.split(":") for p in sys.argv[3].split(","))
text = re.sub(r"(?<![\w.])(\d+)(?![\w])", lambda m: pairs.get(m.group(1), m.group(1)), open(src).read())
open(dst, "w").write(f"# {src} with sizes {sys.argv[3]} (bench/gpu/variants.sh)\n" + text)
PY
        src="$D/fusions/$as.py"
        stem=$as
      else
        cp "$src" "$D/fusions/"
      fi
      mkdir -p "$V/$name/$stem"
      echo "$stem $map $compile" >"$V/$name/RUN"
      # The hand-set HeuristicParams fields (none: the pipeline decides), which
      # run.py records in the variant's report.
      printf '%s\n' "${args[@]}" >"$V/$name/OVERRIDES"
      "$CGDEV" "$src" "$V/$name/$stem" "${args[@]}" \
        >"$V/$name/cgdev.log" 2>&1
      rc=$?
      if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then  # 3: compiled, with spills
        echo "variants: $name failed:"; tail -3 "$V/$name/cgdev.log"
        rm -rf "${V:?}/$name"
        continue
      fi
      echo "$name: $(grep -o 'registers [0-9]* spill [0-9]*' "$V/$name/cgdev.log" | head -1)" \
        "smem $(grep -o '"smem_bytes": "[0-9]*"' "$V/$name/$stem/manifest.json" | grep -o '[0-9]*')"
    done <"$VARS"
    # Probe kernels in place of the prepared ones (bench/gpu/probes/lean_swap.sh).
    { grep -E '^# swap ' "$VARS" || true; } | while read -r _ _ name kind bx pb mb rest; do
      smem="" grid=""
      for a in $rest; do
        case "$a" in smem) smem=smem ;; grid=*) grid=${a#grid=} ;; esac
      done
      [ -d "$V/$name${SUFFIX:-}" ] || continue
      echo "$name${SUFFIX:-} (swapped): $(GRID=$grid BUILD=$BUILD bash bench/gpu/probes/lean_swap.sh \
        "$name${SUFFIX:-}" "$kind" "$bx" "$pb" "$mb" $smem)"
    done
    # Hand edits of generated kernels (bench/gpu/probes/*.py).
    [ -n "$CGDEV" ] || CGDEV=$BUILD/compiler/nvrtc/fusiond_cgdev
    { grep -E '^# edit ' "$VARS" || true; } | while read -r _ _ name probe pargs; do
      v=$V/$name${SUFFIX:-}
      [ -d "$v" ] || continue
      d=$v/$(cut -d' ' -f1 "$v/RUN")
      cu=$(ls "$d"/*.cu)
      k=$(basename "$cu" .cu)
      # shellcheck disable=SC2086  # the probe's arguments are words
      python3 "bench/gpu/probes/$probe" "$cu" "$cu.new" $pargs && mv "$cu.new" "$cu" &&
        echo "$name${SUFFIX:-} (edited by $probe $pargs): $("$CGDEV" --compile-cu "$cu" "$k" "$d/$k.cubin" 2>&1 | tail -1)"
    done
    ;;
  run)
    shift
    OUT=${OUT:-bench/out}
    mkdir -p "$OUT/variants"
    # Every variant's run.py in one process (bench/gpu/run_many.py), then one row a variant.
    jobs=$OUT/variants/JOBS
    : >"$jobs"
    names=()
    for dir in "$V"/*/; do
      name=$(basename "$dir")
      read -r stem map compile <"$dir/RUN"
      flags=(--artifacts "$dir" --fusions "$D/fusions/$stem.py" --out "$OUT/variants" --tag "$name")
      [ "${THREE_SHAPES:-0}" = 1 ] || flags+=(--three-shapes)  # an empty list: no check
      [ "$compile" = 1 ] || flags+=(--no-compile)
      [ "$map" != "-" ] && flags+=(--size-map "$map")
      flags+=("$@")
      printf '%s\t%s\n' "$OUT/variants/$name.log" "$(printf '%q ' "${flags[@]}")" >>"$jobs"
      names+=("$name")
    done
    python3 bench/gpu/run_many.py "$jobs" 2>&1 | tee "$OUT/variants/run_many.log" >&2
    printf '%-28s %s\n' variant "fusion                   shape               floor us  eager us compile us   ours us ours/compile ours %bw  cmp %bw  ours err result"
    for name in "${names[@]}"; do
      read -r stem _ <"$V/$name/RUN"
      row=$(grep -E "^$stem " "$OUT/variants/$name.log" 2>/dev/null | tail -1)
      printf '%-28s %s\n' "$name" "${row:-FAILED}"
      case "$row" in *PASS) ;; *) grep -iE 'error|fail|exception' "$OUT/variants/$name.log" | head -3 ;; esac
      grep -hE 'CUDA-graph replay|steady state|one cubin at|^FAILED' "$OUT/variants/$name.log" | sed 's/^ */    /'
    done
    # The run as one report and chart (a device call returns only a few files).
    reports=("$OUT"/variants/gpu-*.json)
    [ -e "${reports[0]}" ] && python3 bench/gpu/merge_reports.py "$OUT/variants-all" "${reports[@]}"
    ;;
  *) sed -n 2,17p "$0"; exit 2 ;;
esac
