# PaLM / OLMo auxiliary z-loss on bf16 logits [tokens, vocab]: z =
# logsumexp(x) with torch's guard for rows whose max is infinite
# (where(isinf(max), 0, max)), loss_z = 1e-4 * z^2 summed over tokens
# and divided by a token count given as an Int scalar input; z kept
# [tokens, 1] for the backward.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id7(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    S1 = fd.define_scalar(None, dtype=DataType.Int)
    T2 = fd.ops.cast(T0, dtype=DataType.Float)
    T3 = fd.ops.max(T2, dims=[1], keepdim=False, dtype=DataType.Null)
    T4 = fd.ops.abs(T3)
    S5 = fd.define_scalar(float("inf"), dtype=DataType.Double)
    T6 = fd.ops.eq(T4, S5)
    S7 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T8 = fd.ops.where(T6, S7, T3)
    T9 = fd.ops.broadcast_in_dim(T8, shape=[8192, 1], broadcast_dims=[0])
    T10 = fd.ops.broadcast_in_dim(T9, shape=[8192, 32000], broadcast_dims=[0, 1])
    T11 = fd.ops.sub(T2, T10)
    T12 = fd.ops.exp(T11)
    T13 = fd.ops.sum(T12, dims=[1], keepdim=False, dtype=DataType.Null)
    T14 = fd.ops.log(T13)
    T15 = fd.ops.add(T14, T8)
    T16 = fd.ops.mul(T15, T15)
    S17 = fd.define_scalar(0.000100000, dtype=DataType.Double)
    T18 = fd.ops.mul(T16, S17)
    T19 = fd.ops.sum(T18, dims=[0], keepdim=False, dtype=DataType.Null)
    S20 = fd.ops.cast(S1, dtype=DataType.Double)
    T21 = fd.ops.div(T19, S20)
    T22 = fd.ops.broadcast_in_dim(T15, shape=[8192, 1], broadcast_dims=[0])
    fd.add_output(T21)
    fd.add_output(T22)


with FusionDefinition() as fd:
    nvfuser_fusion_id7(fd)

inputs = [
    torch.testing.make_tensor((8192, 32000), dtype=torch.bfloat16, device='cuda:0', low=-16, high=16),
    8192,
]
fd.execute(inputs)
