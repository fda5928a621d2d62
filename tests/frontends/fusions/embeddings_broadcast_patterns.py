# BERT embeddings after the lookups: word embeddings [B, S, H] plus
# position embeddings [S, H] (broadcast_in_dim to [1, 2]), token-type
# embeddings [H] (fd.ops.broadcast then expand), scaled by sqrt(H) with a
# size-derived scalar, then LayerNorm over H.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id35(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T3 = fd.ops.broadcast_in_dim(T1, shape=T0.shape(), broadcast_dims=[1, 2])
    T4 = fd.ops.add(T0, T3)
    T5 = fd.ops.broadcast(T2, is_broadcast_dim=[True, True, False])
    T6 = fd.ops.expand(T5, shape=[T0.size(0), T0.size(1), -1])
    T7 = fd.ops.add(T4, T6)
    S8 = fd.ops.size(T0, dim=2)
    S9 = fd.ops.cast(S8, dtype=DataType.Double)
    S10 = fd.ops.sqrt(S9)
    T11 = fd.ops.mul(T7, S10)
    T12, T13 = fd.ops.var_mean(T11, dims=[2], correction=0, keepdim=True)
    T14 = fd.ops.add(T12, 1e-12)
    T15 = fd.ops.rsqrt(T14)
    T16 = fd.ops.sub(T11, T13)
    T17 = fd.ops.mul(T16, T15)
    T18 = fd.ops.cast(T17, dtype=DataType.BFloat16)
    fd.add_output(T18)


with FusionDefinition() as fd:
    nvfuser_fusion_id35(fd)

inputs = [
    torch.testing.make_tensor((32, 512, 768), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((512, 768), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((768,), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
