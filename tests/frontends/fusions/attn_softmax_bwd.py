# Backward of the attention softmax (and of the 1/sqrt(d) scale): grad_in =
# scale * p * (g - sum(g * p)), with the saved probabilities p in bf16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id14(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.mul(T2, T3)
    T5 = fd.ops.sum(T4, dims=[3], keepdim=False, dtype=DataType.Null)
    T6 = fd.ops.broadcast_in_dim(T5, shape=[4, 16, 1024, 1], broadcast_dims=[0, 1, 2])
    T7 = fd.ops.broadcast_in_dim(T6, shape=[4, 16, 1024, 1024], broadcast_dims=[0, 1, 2, 3])
    T8 = fd.ops.sub(T2, T7)
    T9 = fd.ops.mul(T3, T8)
    S10 = fd.define_scalar(0.0883883, dtype=DataType.Double)
    T11 = fd.ops.mul(T9, S10)
    T12 = fd.ops.cast(T11, dtype=DataType.BFloat16)
    fd.add_output(T12)


with FusionDefinition() as fd:
    nvfuser_fusion_id14(fd)

inputs = [
    torch.testing.make_tensor((4, 16, 1024, 1024), dtype=torch.bfloat16, device='cuda:0'),
    torch.softmax(torch.randn((4, 16, 1024, 1024), dtype=torch.float32, device='cuda:0'), dim=-1).to(torch.bfloat16),
]
fd.execute(inputs)
