"""Runs bench/gpu/run.py several times in one Python process.

    python3 bench/gpu/run_many.py JOBS

JOBS holds one run a line: the log file, a tab, then run.py's arguments as
shell words. Each run's output goes to its log; this prints one line a run
(seconds, exit status, log) and the log's table rows, as each run ends. A sweep of many small runs (bench/gpu/variants.sh)
pays torch's import, CUDA's start and triton's warm-up once instead of once a
run. Exit status: 1 when any run failed, else 0.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def parse_jobs(text):
    """[(log, argv)] from JOBS' lines; blank lines and # comments skipped."""
    jobs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        log, sep, args = line.partition("\t")
        if not sep or not log:
            raise ValueError(f"line {number}: want LOG<TAB>run.py arguments, got {line!r}")
        jobs.append((log, shlex.split(args)))
    return jobs


def run_one(run, log, argv):
    """run.main(argv) with its output in LOG; its exit status (1 on an exception)."""
    with open(log, "w") as f, contextlib.redirect_stdout(f), contextlib.redirect_stderr(f):
        try:
            rc = run.main(argv)
        except SystemExit as e:  # argparse errors and --help
            rc = e.code if isinstance(e.code, int) else 1
        except Exception:  # noqa: BLE001 - one bad run must not stop the sweep
            traceback.print_exc()
            rc = 1
    return rc or 0


def table_rows(log):
    """run.py's result rows in LOG (they end in PASS or FAIL)."""
    with open(log, errors="replace") as f:
        return ["    " + line for line in f if line.rstrip().endswith(("PASS", "FAIL"))]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    with open(argv[0]) as f:
        jobs = parse_jobs(f.read())
    import run  # after the argument check: it imports the client package
    failed = 0
    for log, args in jobs:
        t0 = time.time()
        rc = run_one(run, log, args)
        failed += rc != 0
        print(f"[{time.time() - t0:6.1f}s] exit {rc} {log}")
        print("".join(table_rows(log)), end="", flush=True)
    print(f"run_many: {len(jobs) - failed} of {len(jobs)} runs exited 0")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
