"""fusiond: the Python client of the fusion compilation service.

Three ways in from PyTorch (README.md, "From PyTorch"):

    from fusiond import FusionDefinition, DataType   # nvFuser's frontend, drop-in
    torch.compile(model, backend="fusiond")            # fusiond.torch_backend
    fusionc compile FILE --out DIR                     # then fusiond.runtime.load(DIR)

With no configuration, definitions compile with this node's `fusionc` and its
persistent kernel cache; with FUSIOND_SERVER=HOST:PORT, through that daemon
(fusiond.compiler). The gRPC client (FusionClient, GraphBuilder, ...) needs
grpcio and the generated protobuf modules and is imported on first use, so
`import fusiond` and fusiond.runtime work where they are missing.
"""

from ._version import __version__
from .compiler import CompileError
from .definition import (SUPPORTED_OPS, DataType, FusionDefinition, Scalar, Tensor,
                         UnsupportedOpError, Vector)

_CLIENT_NAMES = ["CompileResult", "FusionClient", "FusionError", "GraphBuilder", "make_request"]
__all__ = ["__version__", "CompileError", "DataType", "FusionDefinition", "Scalar", "Tensor",
           "UnsupportedOpError", "Vector", "SUPPORTED_OPS"] + _CLIENT_NAMES


def __getattr__(name):
    if name in _CLIENT_NAMES:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module 'fusiond' has no attribute {name!r}")
