#!/bin/bash
# Runs run_random.py, restarting after a case that kills the CUDA context
# (each restart prints the JSON summary of the cases since the last one).
# Stops with status 1 when a run makes no progress (python, torch or CUDA
# missing): it used to restart that forever.
n=$(ls -d rnd/r* | wc -l); echo 0 > /tmp/rr_next
while [ "$(cat /tmp/rr_next)" -lt "$n" ]; do
  before=$(cat /tmp/rr_next)
  python3 run_random.py rnd "$before" 2>&1 | grep -v Warning
  if [ "$(cat /tmp/rr_next)" = "$before" ]; then
    echo "run_random.sh: no case ran from case $before on; giving up" >&2
    exit 1
  fi
done
