"""fusiond: the Python client of the fusion compilation daemon.

    from fusiond import FusionClient, GraphBuilder
    client = FusionClient("127.0.0.1:50051")
    result = client.compile(graph, shapes=[[2048, 8192]])
    result.cache            # "hit" or "miss"
    result.kernels          # [fusiond.cache_pb2.Kernel] with cubins and manifests

The generated protobuf modules (fusion_pb2, cache_pb2, service_pb2,
service_pb2_grpc) are produced by the build into <build>/python/fusiond,
next to copies of these files; put <build>/python on PYTHONPATH.
Launching kernels on torch tensors is fusiond.runtime. The client names are
imported on first use, so `import fusiond.runtime` works where grpcio or the
generated protobuf modules are missing (e.g. a GPU host with only torch).
"""

__all__ = ["CompileResult", "FusionClient", "FusionError", "GraphBuilder", "make_request"]


def __getattr__(name):
    if name in __all__:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module 'fusiond' has no attribute {name!r}")
