# Dropout on the attention output, the residual add and the next RMSNorm,
# forward, as Thunder prints a Llama block under torch.nn.functional.dropout
# (p=0.1): the philox seed and offset are scalar inputs (Thunder's
# get_and_update_rng_state), the mask from uniform(0, 1) in float32 over
# [B, T, H] compared with 1 - p, x * mask / (1 - p) added to the residual;
# outputs the bf16 normalized tensor, the bf16 residual sum and the mask.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id93(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    S3 = fd.define_scalar(None, dtype=DataType.Int)
    S4 = fd.define_scalar(None, dtype=DataType.Int)
    S5 = fd.define_scalar(0.00000, dtype=DataType.Double)
    S6 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T7 = fd.ops.uniform(S5, S6, shape=[2, 4096, 4096], rng_seed=S3, rng_offset=S4, dtype=DataType.Float)
    S8 = fd.define_scalar(0.900000, dtype=DataType.Double)
    T9 = fd.ops.lt(T7, S8)
    T10 = fd.ops.cast(T0, dtype=DataType.Float)
    T11 = fd.ops.mul(T10, T9)
    S12 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T13 = fd.ops.mul(T11, S12)
    T14 = fd.ops.cast(T1, dtype=DataType.Float)
    T15 = fd.ops.add(T13, T14)
    T16 = fd.ops.cast(T15, dtype=DataType.BFloat16)
    T17 = fd.ops.cast(T16, dtype=DataType.Float)
    T18 = fd.ops.mul(T17, T17)
    T19 = fd.ops.sum(T18, dims=[2], keepdim=False, dtype=DataType.Null)
    T20 = fd.ops.broadcast_in_dim(T19, shape=[2, 4096, 1], broadcast_dims=[0, 1])
    S21 = fd.define_scalar(4096.00, dtype=DataType.Double)
    T22 = fd.ops.div(T20, S21)
    S23 = fd.define_scalar(1.00000e-05, dtype=DataType.Double)
    T24 = fd.ops.add(T22, S23)
    T25 = fd.ops.rsqrt(T24)
    T26 = fd.ops.broadcast_in_dim(T25, shape=[2, 4096, 4096], broadcast_dims=[0, 1, 2])
    T27 = fd.ops.mul(T17, T26)
    T28 = fd.ops.cast(T2, dtype=DataType.Float)
    T29 = fd.ops.broadcast_in_dim(T28, shape=[2, 4096, 4096], broadcast_dims=[2])
    T30 = fd.ops.mul(T27, T29)
    T31 = fd.ops.cast(T30, dtype=DataType.BFloat16)
    fd.add_output(T31)
    fd.add_output(T16)
    fd.add_output(T9)


with FusionDefinition() as fd:
    nvfuser_fusion_id93(fd)

inputs = [
    torch.testing.make_tensor((2, 4096, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 4096, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
    2718,
    8,
]
fd.execute(inputs)
