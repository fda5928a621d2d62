# Gemma's RMSNorm forward as Thunder prints it: the variance in float32 over
# the hidden axis, and the weight applied as (1 + weight) (Gemma stores the
# weight offset from 1), cast back to bfloat16 at the end. Outputs the
# normalized bf16 activations and the saved rstd [B, T, 1].
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id7(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.mul(T2, T2)
    T4 = fd.ops.sum(T3, dims=[2], keepdim=False, dtype=DataType.Null)
    T5 = fd.ops.broadcast_in_dim(T4, shape=[4, 2048, 1], broadcast_dims=[0, 1])
    S6 = fd.define_scalar(3072.00, dtype=DataType.Double)
    S7 = fd.ops.reciprocal(S6)
    T8 = fd.ops.mul(T5, S7)
    S9 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T10 = fd.ops.add(T8, S9)
    T11 = fd.ops.rsqrt(T10)
    T12 = fd.ops.broadcast_in_dim(T11, shape=[4, 2048, 3072], broadcast_dims=[0, 1, 2])
    T13 = fd.ops.mul(T2, T12)
    T14 = fd.ops.cast(T1, dtype=DataType.Float)
    S15 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T16 = fd.ops.add(S15, T14)
    T17 = fd.ops.broadcast_in_dim(T16, shape=[4, 2048, 3072], broadcast_dims=[2])
    T18 = fd.ops.mul(T13, T17)
    T19 = fd.ops.cast(T18, dtype=DataType.BFloat16)
    fd.add_output(T19)
    fd.add_output(T11)


with FusionDefinition() as fd:
    nvfuser_fusion_id7(fd)

inputs = [
    torch.testing.make_tensor((4, 2048, 3072), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((3072,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
