# Phi-3's MLP activation: one fused gate_up projection [T, 2F] chunked into
# gate and up halves along the last axis (two slices), silu(gate) * up, as
# Thunder prints it (silu decomposed as x / (1 + exp(-x)) in float) with the
# bfloat16 rounding of silu's result before the product.
# small: 8192->64, 16384->128
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id4(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.slice(T0, start_indices=[0, 0], end_indices=[8192, 8192], strides=[1, 1], manual_normalization=0)
    T2 = fd.ops.slice(T0, start_indices=[0, 8192], end_indices=[8192, 16384], strides=[1, 1], manual_normalization=0)
    T3 = fd.ops.cast(T1, dtype=DataType.Float)
    T4 = fd.ops.neg(T3)
    T5 = fd.ops.exp(T4)
    S6 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T7 = fd.ops.add(S6, T5)
    T8 = fd.ops.reciprocal(T7)
    T9 = fd.ops.mul(T3, T8)
    T10 = fd.ops.cast(T9, dtype=DataType.BFloat16)
    T11 = fd.ops.cast(T10, dtype=DataType.Float)
    T12 = fd.ops.cast(T2, dtype=DataType.Float)
    T13 = fd.ops.mul(T11, T12)
    T14 = fd.ops.cast(T13, dtype=DataType.BFloat16)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id4(fd)

inputs = [
    torch.testing.make_tensor((8192, 16384), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
