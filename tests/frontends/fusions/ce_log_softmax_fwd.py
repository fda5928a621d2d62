# Cross-entropy forward, the part before the gather: log_softmax of bf16
# logits over a 32000-word vocabulary in float, and the per-row
# logsumexp saved for the backward.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id16(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.max(T1, dims=[1], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[4096, 1], broadcast_dims=[0])
    T4 = fd.ops.broadcast_in_dim(T3, shape=[4096, 32000], broadcast_dims=[0, 1])
    T5 = fd.ops.sub(T1, T4)
    T6 = fd.ops.exp(T5)
    T7 = fd.ops.sum(T6, dims=[1], keepdim=False, dtype=DataType.Null)
    T8 = fd.ops.broadcast_in_dim(T7, shape=[4096, 1], broadcast_dims=[0])
    T9 = fd.ops.log(T8)
    T10 = fd.ops.add(T9, T3)
    T11 = fd.ops.broadcast_in_dim(T9, shape=[4096, 32000], broadcast_dims=[0, 1])
    T12 = fd.ops.sub(T5, T11)
    fd.add_output(T12)
    fd.add_output(T10)


with FusionDefinition() as fd:
    nvfuser_fusion_id16(fd)

inputs = [
    torch.testing.make_tensor((4096, 32000), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
