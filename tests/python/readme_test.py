"""Runs the examples of README.md's "From PyTorch" section, in order.

    python3 tests/python/readme_test.py

`sh` blocks run with fusionc (FUSIOND_FUSIONC, else PATH, else a build*/ of
this checkout) first on PATH; `/tmp/` in the examples is a fresh temporary
folder. `python` blocks run whole where torch with CUDA is present (the GPU
host); elsewhere only their statements that do not touch torch run (the
definitions, the imports of fusiond), and the rest is reported as skipped.
"""

import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCE = os.path.abspath(os.path.join(_HERE, "..", ".."))
if os.environ.get("FUSIOND_TEST_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(_SOURCE, "client", "python"))

from fusiond import compiler  # noqa: E402
from fusiond.manifest import FusionError  # noqa: E402

try:
    import torch
    _CUDA = torch.cuda.is_available()
except ImportError:
    _CUDA = False


def section_blocks():
    """(language, code) of each fenced block in "## From PyTorch"."""
    with open(os.path.join(_SOURCE, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## From PyTorch\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        raise AssertionError('README.md has no "## From PyTorch" section')
    return re.findall(r"^```(\w+)\n(.*?)^```", m.group(1), re.S | re.M)


def without_torch(code):
    """What of `code` runs without torch: its imports but torch's, and its
    `with` blocks and definitions that name no torch."""
    keep = []
    for stmt in ast.parse(code).body:
        names = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)}
        if isinstance(stmt, ast.Import):
            if all(a.name != "torch" for a in stmt.names):
                keep.append(stmt)
        elif isinstance(stmt, ast.ImportFrom) or (
                isinstance(stmt, (ast.With, ast.FunctionDef)) and "torch" not in names):
            keep.append(stmt)
    return ast.unparse(ast.Module(body=keep, type_ignores=[]))


class ReadmeTest(unittest.TestCase):
    def test_examples(self):
        blocks = section_blocks()
        self.assertEqual([lang for lang, _ in blocks], ["python", "python", "sh", "python"])
        try:
            fusionc = compiler.find_fusionc()
        except FusionError as e:
            self.skipTest(str(e))
        tmp = tempfile.mkdtemp(prefix="fusiond-readme-")
        self.addCleanup(shutil.rmtree, tmp, True)
        env = compiler._env_for(fusionc)  # a bundle's fusionc finds its libraries
        env["PATH"] = os.path.dirname(os.path.abspath(fusionc)) + os.pathsep + env.get("PATH", "")
        skipped = []
        for k, (lang, code) in enumerate(blocks):
            code = code.replace("/tmp/", tmp + "/")
            with self.subTest(block=k, lang=lang):
                if lang == "sh":
                    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=_SOURCE,
                                          env=env, capture_output=True, text=True)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    continue
                ns = {"__name__": f"readme_block_{k}"}
                if _CUDA:
                    exec(compile(code, f"README block {k}", "exec"), ns)  # noqa: S102
                    continue
                exec(compile(without_torch(code), f"README block {k} (no torch)", "exec"), ns)  # noqa: S102
                skipped.append(k)
                fd = ns.get("fd")
                if fd is not None:  # the definition compiles here (no GPU needed)
                    path = os.path.join(tmp, f"block{k}.py")
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(fd.definition_text())
                    compiler.run_fusionc(["compile", path, "--no-cache", "--shapes", "1024x4096;4096"],
                                         f"README block {k}")
        manifest = os.path.join(tmp, "softmax_fwd", "manifest.json")
        self.assertTrue(os.path.exists(manifest), "the CLI example wrote no manifest")
        from fusiond import runtime
        self.assertEqual(len(runtime.load(os.path.dirname(manifest)).manifest.kernels), 1)
        if skipped:
            print(f"README blocks {skipped}: only their torch-free statements ran (no torch with CUDA)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
