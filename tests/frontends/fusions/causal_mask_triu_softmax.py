# A causal attention mask as Thunder prints it from torch.triu: the scores
# of a batch of heads with everything above the diagonal zeroed by triu /
# kept by tril, masked scores to -inf where the upper triangle is set, and
# a softmax over the last axis in float, bf16 out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id23(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, 256, 256], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.full(shape=[256, 256], fill_value=1.0, dtype=DataType.Float)
    T3 = fd.ops.triu(T2, diagonal=1)
    S4 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T5 = fd.ops.gt(T3, S4)
    T6 = fd.ops.broadcast_in_dim(T5, shape=T0.shape(), broadcast_dims=[2, 3])
    S7 = fd.define_scalar(float("-inf"), dtype=DataType.Double)
    T8 = fd.ops.where(T6, S7, T1)
    T9 = fd.ops.max(T8, dims=[3], keepdim=False, dtype=DataType.Null)
    T10 = fd.ops.broadcast_in_dim(T9, shape=T0.shape(), broadcast_dims=[0, 1, 2])
    T11 = fd.ops.sub(T8, T10)
    T12 = fd.ops.exp(T11)
    T13 = fd.ops.sum(T12, dims=[3], keepdim=False, dtype=DataType.Null)
    T14 = fd.ops.broadcast_in_dim(T13, shape=T0.shape(), broadcast_dims=[0, 1, 2])
    T15 = fd.ops.div(T12, T14)
    T16 = fd.ops.tril(T1, diagonal=-2)
    T17 = fd.ops.add(T15, T16)
    T18 = fd.ops.cast(T17, dtype=DataType.BFloat16)
    fd.add_output(T18)


with FusionDefinition() as fd:
    nvfuser_fusion_id23(fd)

inputs = [
    torch.testing.make_tensor((2, 4, 256, 256), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
