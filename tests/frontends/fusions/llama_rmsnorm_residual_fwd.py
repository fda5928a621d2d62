# LLaMA block entry: residual add, then RMSNorm (Thunder's decomposition:
# pow 2, mean as sum times 1/n, rsqrt, weight), symbolic inputs with the
# concrete shapes Thunder writes into broadcast_in_dim.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.cast(T1, dtype=DataType.Float)
    T5 = fd.ops.add(T3, T4)
    T6 = fd.ops.cast(T5, dtype=DataType.BFloat16)
    T7 = fd.ops.cast(T6, dtype=DataType.Float)
    S8 = fd.define_scalar(2.00000, dtype=DataType.Double)
    T9 = fd.ops.pow(T7, S8)
    T10 = fd.ops.sum(T9, dims=[2], keepdim=False, dtype=DataType.Null)
    T11 = fd.ops.broadcast_in_dim(T10, shape=[4, 2048, 1], broadcast_dims=[0, 1])
    S12 = fd.define_scalar(4096.00, dtype=DataType.Double)
    S13 = fd.ops.reciprocal(S12)
    T14 = fd.ops.mul(T11, S13)
    S15 = fd.define_scalar(1.00000e-06, dtype=DataType.Double)
    T16 = fd.ops.add(T14, S15)
    T17 = fd.ops.rsqrt(T16)
    T18 = fd.ops.broadcast_in_dim(T17, shape=[4, 2048, 4096], broadcast_dims=[0, 1, 2])
    T19 = fd.ops.mul(T7, T18)
    T20 = fd.ops.cast(T2, dtype=DataType.Float)
    T21 = fd.ops.broadcast_in_dim(T20, shape=[4, 2048, 4096], broadcast_dims=[2])
    T22 = fd.ops.mul(T19, T21)
    T23 = fd.ops.cast(T22, dtype=DataType.BFloat16)
    fd.add_output(T6)
    fd.add_output(T17)
    fd.add_output(T23)


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.testing.make_tensor((4, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4, 2048, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
