# fp8 training's weight cast for the backward GEMM (Transformer Engine's
# transpose-cast as Thunder hands it to nvFuser): the bf16 weight arrives as
# a transposed view [K, N] (stride_order [0, 1]); its amax (abs, max over
# both axes) for the next step's scale, and x * scale clamped to +-448 cast
# to float8_e4m3fn, written row-major. The scale is a 1-element tensor.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id80(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0, 1])
    T1 = fd.define_tensor(shape=[1], contiguity=[None], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.abs(T2)
    T4 = fd.ops.max(T3, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T5 = fd.ops.broadcast_in_dim(T1, shape=[8192, 4096], broadcast_dims=[1])
    T6 = fd.ops.mul(T2, T5)
    S7 = fd.define_scalar(-448.000, dtype=DataType.Double)
    S8 = fd.define_scalar(448.000, dtype=DataType.Double)
    T9 = fd.ops.clamp(T6, S7, S8)
    T10 = fd.ops.cast(T9, dtype=DataType.Float8_e4m3fn)
    fd.add_output(T10)
    fd.add_output(T4)


with FusionDefinition() as fd:
    nvfuser_fusion_id80(fd)

inputs = [
    torch.randn(33554432, dtype=torch.bfloat16, device='cuda:0').as_strided((8192, 4096), (1, 8192)),
    torch.testing.make_tensor((1,), dtype=torch.float32, device='cuda:0', low=1, high=64),
]
fd.execute(inputs)
