# Attention heads read through a permuted layout: a [B, H, S, D] tensor
# whose memory is [B, S, H, D] (stride_order [3, 1, 2, 0]), scaled and
# cast to a contiguous bf16 tensor with a float32 row sum of squares.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id32(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 1, 2, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    S2 = fd.define_scalar(0.0883883, dtype=DataType.Double)
    T3 = fd.ops.mul(T1, S2)
    T4 = fd.ops.cast(T3, dtype=DataType.BFloat16)
    T5 = fd.ops.mul(T1, T1)
    T6 = fd.ops.sum(T5, dims=[3], keepdim=True, dtype=DataType.Null)
    fd.add_output(T4)
    fd.add_output(T6)


with FusionDefinition() as fd:
    nvfuser_fusion_id32(fd)

inputs = [
    torch.randn(16777216, dtype=torch.bfloat16, device='cuda:0').as_strided((8, 32, 512, 128), (2097152, 128, 4096, 1)),
]
fd.execute(inputs)
