"""Builds the fusiond package (metadata in pyproject.toml).

The gRPC client's modules (fusion_pb2, cache_pb2, service_pb2,
service_pb2_grpc) are generated from ../../proto with protoc and
grpc_python_plugin when both are on PATH and the proto folder is there (a
checkout); otherwise the package has no daemon client and says so when
FUSIOND_SERVER asks for it. Generated code is Python only: one wheel serves
every CPython.
"""

import os
import re
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

_HERE = os.path.dirname(os.path.abspath(__file__))
_PROTO = os.path.normpath(os.path.join(_HERE, "..", "..", "proto"))
_FILES = ("fusion.proto", "cache.proto", "service.proto")


class BuildWithProtos(build_py):
    def run(self):
        super().run()
        protoc, plugin = shutil.which("protoc"), shutil.which("grpc_python_plugin")
        if not (protoc and plugin and all(os.path.exists(os.path.join(_PROTO, f)) for f in _FILES)):
            print("fusiond: protoc, grpc_python_plugin or ../../proto missing: "
                  "no generated gRPC modules (FUSIOND_SERVER will not work)")
            return
        out = os.path.join(self.build_lib, "fusiond")
        os.makedirs(out, exist_ok=True)
        subprocess.check_call([protoc, f"--python_out={out}", f"--grpc_out={out}",
                               f"--plugin=protoc-gen-grpc={plugin}", "-I", _PROTO,
                               *[os.path.join(_PROTO, f) for f in _FILES]])
        # The generated modules import each other as top-level modules.
        for name in os.listdir(out):
            if name.endswith(("_pb2.py", "_pb2_grpc.py")):
                path = os.path.join(out, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                text = re.sub(r"^import (fusion|cache|service)_pb2", r"from . import \1_pb2", text,
                              flags=re.M)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)


setup(cmdclass={"build_py": BuildWithProtos})
