"""fusiond: the Python client of the fusion compilation daemon.

    from fusiond import FusionClient, GraphBuilder
    client = FusionClient("127.0.0.1:50051")
    result = client.compile(graph, shapes=[[2048, 8192]])
    result.cache            # "hit" or "miss"
    result.kernels          # [fusiond.cache_pb2.Kernel] with cubins and manifests

The generated protobuf modules (fusion_pb2, cache_pb2, service_pb2,
service_pb2_grpc) are produced by the build into <build>/python/fusiond,
next to copies of these files; put <build>/python on PYTHONPATH.
Launching kernels on torch tensors is fusiond.runtime (imported lazily).
"""

from .client import CompileResult, FusionClient, FusionError, GraphBuilder, make_request

__all__ = ["CompileResult", "FusionClient", "FusionError", "GraphBuilder", "make_request"]
