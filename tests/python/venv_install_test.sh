#!/usr/bin/env bash
# `pip install ./client/python` into a fresh virtual environment, offline
# (--no-index; the [server] extra's grpcio and protobuf, where the daemon
# client is tested, come from the system's site-packages),
# then `import fusiond` from outside the checkout and the package's non-GPU
# tests against the installed copy.
# Usage: venv_install_test.sh PYTHON SOURCE_DIR WORK_DIR [FUSIONC]
set -euo pipefail
PYTHON=$1 SRC=$2 WORK=$3 FUSIONC=${4:-}
rm -rf "$WORK" && mkdir -p "$WORK/src"
# A copy, so the build's egg-info and build/ never land in the checkout.
cp -r "$SRC/client" "$SRC/proto" "$WORK/src/"
rm -rf "$WORK/src/client/python/build" "$WORK/src/client/python"/*.egg-info
VPY="$WORK/venv/bin/python"
if "$PYTHON" -m venv --system-site-packages "$WORK/venv"; then
  PIP=("$VPY" -m pip)
else  # an interpreter without ensurepip: a bare venv, filled by this pip (--python)
  rm -rf "$WORK/venv"
  "$PYTHON" -m venv --system-site-packages --without-pip "$WORK/venv"
  PIP=("$PYTHON" -m pip --python "$VPY")
fi
"${PIP[@]}" install --quiet --no-build-isolation --no-index "$WORK/src/client/python"
cd "$WORK"
version=$("$VPY" -c "import fusiond; print(fusiond.__version__)")
echo "installed fusiond $version"
# The gRPC client's modules exist where the build had protoc.
PB2=0
command -v protoc >/dev/null && command -v grpc_python_plugin >/dev/null && PB2=1
FUSIOND_EXPECT_PB2=$PB2 "$VPY" - <<'PY'
import importlib.metadata as md
import os
import sys

import fusiond
where = os.path.dirname(fusiond.__file__)
assert where.startswith(sys.prefix), f"fusiond imported from {where}, not the venv {sys.prefix}"
assert md.version("fusiond") == fusiond.__version__, (md.version("fusiond"), fusiond.__version__)
eps = md.entry_points()
group = eps.select(group="torch_dynamo_backends") if hasattr(eps, "select") else eps.get("torch_dynamo_backends", [])
names = {e.name: e.value for e in group}
assert names.get("fusiond") == "fusiond.torch_backend:fusiond_backend", names
mods = ["fusiond.runtime", "fusiond.manifest", "fusiond.frontend_torch", "fusiond.torch_backend",
        "fusiond.partition", "fusiond.compiler", "fusiond.definition"]
if os.environ["FUSIOND_EXPECT_PB2"] == "1":
    mods += ["fusiond.fusion_pb2", "fusiond.service_pb2_grpc", "fusiond.client"]
for mod in mods:
    __import__(mod)
reqs = md.requires("fusiond")
server = [r for r in reqs if "extra == 'server'" in r.replace('"', "'")]
assert any(r.startswith("grpcio") for r in server) and any(r.startswith("protobuf") for r in server), reqs
assert not [r for r in reqs if "extra ==" not in r], f"a required dependency: {reqs}"
print("entry point, modules and declared dependencies: ok")
PY
export FUSIOND_TEST_INSTALLED=1
[ -n "$FUSIONC" ] && export FUSIOND_FUSIONC=$FUSIONC
for t in definition_test runtime_test torch_backend_test readme_test wire_test; do
  echo "== $t (installed package)"
  "$VPY" "$SRC/tests/python/$t.py"
done
