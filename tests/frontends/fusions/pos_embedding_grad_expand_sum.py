# Backward of a learned absolute position embedding [1, T, D] added with
# broadcasting to token embeddings [B, T, D] (GPT-2 / ViT), and of the
# bias [D] of the layer before: the sum of the bf16 upstream gradient over
# the batch axis kept as [1, T, D] (AOTAutograd's sum_to_size) and over
# batch and sequence for the bias, both in float32 and rounded to bf16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id97(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.ops.cast(T0, dtype=DataType.Float)
    T2 = fd.ops.sum(T1, dims=[0], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[1, 1024, 768], broadcast_dims=[1, 2])
    T4 = fd.ops.cast(T3, dtype=DataType.BFloat16)
    T5 = fd.ops.sum(T1, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T6 = fd.ops.cast(T5, dtype=DataType.BFloat16)
    fd.add_output(T4)
    fd.add_output(T6)


with FusionDefinition() as fd:
    nvfuser_fusion_id97(fd)

inputs = [
    torch.testing.make_tensor((32, 1024, 768), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
