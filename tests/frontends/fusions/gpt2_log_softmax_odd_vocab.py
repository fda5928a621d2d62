# GPT-2's vocabulary is 50257 words: log_softmax of bf16 logits whose rows
# are an odd number of elements (no row starts 16-byte aligned but the
# first), float32 out, as the loss before the gather reads it.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id46(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.max(T1, dims=[1], keepdim=True, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=T0.shape(), broadcast_dims=[0, 1])
    T4 = fd.ops.sub(T1, T3)
    T5 = fd.ops.exp(T4)
    T6 = fd.ops.sum(T5, dims=[1], keepdim=True, dtype=DataType.Null)
    T7 = fd.ops.log(T6)
    T8 = fd.ops.broadcast_in_dim(T7, shape=T0.shape(), broadcast_dims=[0, 1])
    T9 = fd.ops.sub(T4, T8)
    fd.add_output(T9)


with FusionDefinition() as fd:
    nvfuser_fusion_id46(fd)

inputs = [
    torch.testing.make_tensor((1024, 50257), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
