"""Where kernels come from: the local compiler (embedded default) or a daemon.

With no configuration a definition is compiled by the ``fusionc`` binary of
this node (``fusionc compile FILE --out DIR``), which serves repeats from the
node's persistent kernel cache (RocksDB under $FUSIOND_CACHE_DIR, else
$XDG_CACHE_HOME/fusiond, else ~/.cache/fusiond) and writes manifest.json and
the cubins that fusiond.runtime launches. With FUSIOND_SERVER=HOST:PORT the
cluster's daemon compiles instead (fusiond.client; needs grpcio and the
generated protobuf modules).

Environment: FUSIOND_SERVER (daemon address) with, for a daemon that asks
for them, FUSIOND_CA_FILE, FUSIOND_CERT_FILE, FUSIOND_KEY_FILE,
FUSIOND_TOKEN_FILE and FUSIOND_SERVER_NAME (fusiond.client.FusionClient's
TLS and token arguments); FUSIOND_FUSIONC (path of the fusionc binary;
default: `fusionc` on PATH, else a build of this checkout); FUSIOND_ARCH
(sm_90 ...; default: the current GPU's, else sm_90).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from typing import Optional, Sequence

from .manifest import FusionError, InvalidArgument, NotFound, Unavailable

__all__ = ["CompileError", "find_fusionc", "default_arch", "compile_definition"]


class CompileError(FusionError, RuntimeError):
    """The compiler (or the daemon) refused or failed the definition; the
    message is the compiler's own (file:line:column: what; expected ...)."""

    code = "INVALID_ARGUMENT"


_lock = threading.Lock()
_arch_cache: list = []


def find_fusionc() -> str:
    """The fusionc binary: $FUSIOND_FUSIONC, `fusionc` on PATH, or a build
    of this checkout (build*/client/fusionc/fusionc)."""
    env = os.environ.get("FUSIOND_FUSIONC")
    if env:
        if not os.access(env, os.X_OK):
            raise NotFound(f"FUSIOND_FUSIONC={env} is not an executable file")
        return env
    found = shutil.which("fusionc")
    if found:
        return found
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    for build in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        candidate = os.path.join(root, build, "client", "fusionc", "fusionc")
        if build.startswith("build") and os.access(candidate, os.X_OK):
            return candidate
    raise NotFound("no fusionc found: put it on PATH, set FUSIOND_FUSIONC, or set "
                   "FUSIOND_SERVER=HOST:PORT to compile through a fusiond daemon")


def default_arch() -> str:
    """$FUSIOND_ARCH, else the current CUDA device's sm_XY (through torch),
    else sm_90."""
    env = os.environ.get("FUSIOND_ARCH")
    if env:
        return env
    if not _arch_cache:
        arch = "sm_90"
        try:
            import torch
            if torch.cuda.is_available():
                major, minor = torch.cuda.get_device_capability()
                arch = f"sm_{major}{minor}"
        except ImportError:
            pass
        _arch_cache.append(arch)
    return _arch_cache[0]


def _shapes_flag(shapes: Sequence[Optional[Sequence[int]]]) -> str:
    return ";".join("scalar" if s is None else ("x".join(str(int(d)) for d in s) or "scalar")
                    for s in shapes)


def _env_for(binary: str) -> dict:
    """A bundle keeps fusionc's libraries in ../lib beside bin/: put them on
    the loader's path."""
    env = dict(os.environ)
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(binary))), "lib")
    if os.path.isdir(lib):
        env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def run_fusionc(args: Sequence[str], what: str) -> subprocess.CompletedProcess:
    """Runs `fusionc ARGS`; CompileError with its stderr when it fails."""
    binary = find_fusionc()
    try:
        proc = subprocess.run([binary, *args], capture_output=True, text=True,
                              env=_env_for(binary), timeout=600)
    except OSError as e:
        raise Unavailable(f"cannot run {binary}: {e}") from None
    except subprocess.TimeoutExpired:
        raise Unavailable(f"fusionc did not finish {what} within 600 s") from None
    if proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip()
        if proc.returncode == 2:
            raise CompileError(f"{what}: {msg}")
        raise Unavailable(f"{what}: fusionc exited with {proc.returncode}: {msg}")
    return proc


def compile_definition(text: str, shapes: Sequence[Optional[Sequence[int]]],
                       symbolic: bool, arch: Optional[str] = None, name: str = "fusion",
                       general: bool = False, wire_form=None):
    """Compiles repro-script `text` for `shapes` (one per input, None for a
    scalar) and returns a fusiond.runtime.LoadedFusion ready to launch.
    Through FUSIOND_SERVER's daemon when set (the graph from `wire_form()`,
    a FusionGraph built in Python, else from `fusionc parse`), else the
    local fusionc."""
    from . import runtime
    arch = arch or default_arch()
    server = os.environ.get("FUSIOND_SERVER")
    with tempfile.TemporaryDirectory(prefix="fusiond-") as tmp:
        path = os.path.join(tmp, f"{name}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        if server:
            return _compile_remote(server, path, shapes, symbolic, arch, general, wire_form)
        out = os.path.join(tmp, "out")
        args = ["compile", path, "--arch", arch, "--out", out]
        if symbolic or any(s is None for s in shapes):
            args += ["--shapes", _shapes_flag(shapes)]
        if general:
            args.append("--general")
        run_fusionc(args, f"compiling {name}")
        return runtime.load(out)


def _compile_remote(server, path, shapes, symbolic, arch, general, wire_form):
    """The daemon compiles the definition's wire form, sent by fusiond.client
    (whose connection options, TLS and token, apply): built in Python, or
    by fusionc's front end (`fusionc parse --out`) for what the Python form
    lacks (extents computed from sizes)."""
    from . import client as rpc
    graph = None
    if wire_form is not None:
        try:
            graph = wire_form()
        except InvalidArgument:
            graph = None
    if graph is None:
        graph_path = path + ".pb"
        run_fusionc(["parse", path, "--out", graph_path], "reading the definition")
        with open(graph_path, "rb") as f:
            graph = f.read()
    with _lock:
        conn = _clients.get(server)
        if conn is None:
            conn = _clients[server] = rpc.FusionClient(server, **_connection_options())
    try:
        result = conn.compile(graph, shapes=[s or [] for s in shapes] if symbolic or
                              any(s is None for s in shapes) else None,
                              arch=arch, general_kernels=general)
    except rpc.FusionError as e:
        raise CompileError(f"fusiond at {server}: {e}") from None
    return result.load()


_clients: dict = {}
_CONNECTION_ENV = {"ca_file": "FUSIOND_CA_FILE", "cert_file": "FUSIOND_CERT_FILE",
                   "key_file": "FUSIOND_KEY_FILE", "token_file": "FUSIOND_TOKEN_FILE",
                   "server_name": "FUSIOND_SERVER_NAME"}


def _connection_options() -> dict:
    """FusionClient's TLS / token arguments from the environment (only those set)."""
    return {arg: os.environ[env] for arg, env in _CONNECTION_ENV.items() if os.environ.get(env)}

