# torch.logsumexp(x, dim=-1) through PyTorch's reference decomposition as
# Thunder prints it: amax with keepdim, the max replaced by 0 where it is
# infinite (masked_fill(maxes.abs() == inf, 0): rows of -inf give -inf, not
# NaN), exp, sum, log and the squeezed max added back. float32 [B*T, V].
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id17(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.max(T1, dims=[1], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[8192, 1], broadcast_dims=[0])
    T4 = fd.ops.abs(T3)
    S5 = fd.define_scalar(float("inf"), dtype=DataType.Double)
    T6 = fd.ops.eq(T4, S5)
    S7 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T8 = fd.ops.where(T6, S7, T3)
    T9 = fd.ops.broadcast_in_dim(T8, shape=[8192, 50304], broadcast_dims=[0, 1])
    T10 = fd.ops.sub(T1, T9)
    T11 = fd.ops.exp(T10)
    T12 = fd.ops.sum(T11, dims=[1], keepdim=False, dtype=DataType.Null)
    T13 = fd.ops.log(T12)
    T14 = fd.ops.squeeze(T8, dims=[1])
    T15 = fd.ops.add(T13, T14)
    fd.add_output(T15)


with FusionDefinition() as fd:
    nvfuser_fusion_id17(fd)

inputs = [
    torch.testing.make_tensor((8192, 50304), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
