# Mixed-precision gradient unscaling (GradScaler): fp16 gradients times
# 1/scale into float32, a found_inf flag from isfinite over the whole
# tensor (a max of the cast bool), and a bf16 copy through an fp16 + bf16
# add that promotes to float32 by itself.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id30(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    S2 = fd.define_scalar(None, dtype=DataType.Double)
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.mul(T3, S2)
    T5 = fd.ops.isfinite(T4)
    T6 = fd.ops.logical_not(T5)
    T7 = fd.ops.cast(T6, dtype=DataType.Float)
    T8 = fd.ops.max(T7, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T9 = fd.ops.add(T0, T1)
    T10 = fd.ops.mul(T9, S2)
    T11 = fd.ops.cast(T10, dtype=DataType.BFloat16)
    fd.add_output(T4)
    fd.add_output(T8)
    fd.add_output(T11)


with FusionDefinition() as fd:
    nvfuser_fusion_id30(fd)

inputs = [
    torch.testing.make_tensor((4096, 8192), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((4096, 8192), dtype=torch.bfloat16, device='cuda:0'),
    0.000244140625,
]
fd.execute(inputs)
