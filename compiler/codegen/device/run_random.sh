#!/bin/bash
# Runs run_random.py, restarting after a case that kills the CUDA context.
n=$(ls -d rnd/r* | wc -l); echo 0 > /tmp/rr_next
while [ "$(cat /tmp/rr_next)" -lt "$n" ]; do
  python3 run_random.py rnd "$(cat /tmp/rr_next)" 2>&1 | grep -v Warning
done
