# Mixed precision at a module boundary: an fp16 activation from one
# submodule, a bf16 residual stream and an fp32 master copy of a per-
# channel scale; the sum promotes to float by itself (fp16 + bf16), then
# explicit bf16 -> fp32 -> bf16 round-trips (each cast rounds) and an fp16
# output; also a Float scalar input times an Int scalar input.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id22(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    S3 = fd.define_scalar(None, dtype=DataType.Float)
    S4 = fd.define_scalar(None, dtype=DataType.Int)
    T5 = fd.ops.add(T0, T1)
    T6 = fd.ops.cast(T5, dtype=DataType.BFloat16)
    T7 = fd.ops.cast(T6, dtype=DataType.Float)
    T8 = fd.ops.broadcast_in_dim(T2, shape=[8192, 5120], broadcast_dims=[1])
    T9 = fd.ops.mul(T7, T8)
    S10 = fd.ops.mul(S3, S4)
    T11 = fd.ops.mul(T9, S10)
    T12 = fd.ops.cast(T11, dtype=DataType.BFloat16)
    T13 = fd.ops.cast(T12, dtype=DataType.Float)
    T14 = fd.ops.add(T13, T7)
    T15 = fd.ops.cast(T14, dtype=DataType.Half)
    fd.add_output(T6)
    fd.add_output(T15)


with FusionDefinition() as fd:
    nvfuser_fusion_id22(fd)

inputs = [
    torch.testing.make_tensor((8192, 5120), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((8192, 5120), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((5120,), dtype=torch.float32, device='cuda:0'),
    0.5,
    3,
]
fd.execute(inputs)
