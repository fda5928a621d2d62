"""Prints the Triton kernels torch.compile generates for fusion definitions
(the same function run.py compiles): their launch configs and code, to see
what the baseline does at each shape.

  python3 bench/gpu/inductor_code.py [--size-map 2048:16384,...] FUSION.py ...
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as harness  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("fusions", nargs="+")
    p.add_argument("--size-map", default="", help="symbolic definitions: old:new extents, as run.py")
    args = p.parse_args()
    size_map = harness.parse_size_map(args.size_map)
    import torch
    torch._logging.set_logs(output_code=True)
    for path in args.fusions:
        script = harness.frontend.load_script(path)
        inputs = script.make_inputs("cuda", seed=1, size_map=size_map if script.program.symbolic else None)
        shapes = [tuple(x.shape) for x in inputs if isinstance(x, torch.Tensor)]
        print(f"==== {os.path.basename(path)}: {shapes}", flush=True)
        torch._dynamo.reset()
        compiled = torch.compile(script.program.function("native"), dynamic=False)
        compiled(*inputs)
        torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
