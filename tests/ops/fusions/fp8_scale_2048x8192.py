# fp8 training's per-tensor scaling: amax, a power-of-two scale to 448,
# clamp and cast to e4m3fn; and an e5m2 tensor dequantized to bf16.
import torch
from nvfuser import FusionDefinition, DataType


def fusion(fd: FusionDefinition) -> None:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float8_e5m2, is_cpu=False)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.max(fd.ops.abs(T2), dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T4 = fd.ops.exp2(fd.ops.floor(fd.ops.log2(fd.ops.div(448.0, T3))))
    T5 = fd.ops.clamp(fd.ops.mul(T2, T4), -448.0, 448.0)
    T6 = fd.ops.cast(T5, dtype=DataType.Float8_e4m3fn)
    T7 = fd.ops.cast(fd.ops.mul(fd.ops.cast(T1, dtype=DataType.Float), 0.5), dtype=DataType.BFloat16)
    fd.add_output(T6)
    fd.add_output(T3)
    fd.add_output(T7)


with FusionDefinition() as fd:
    fusion(fd)

inputs = [
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0"),
    torch.randn((2048, 8192), dtype=torch.bfloat16, device="cuda:0").to(torch.float8_e5m2),
]
fd.execute(inputs)
