# HuggingFace BERT's attention softmax as PyTorch's nvprims executor
# printed it in early 2023: the batched scores [B * H, S, S] (what bmm
# gives) reshaped to [B, H, S, S] with the old three-argument spelling
# fd.ops.reshape(T, original_shape=[...], new_shape=[...]), the additive
# mask [B, 1, 1, S] squeezed with fd.ops.squeeze(T, original_shape=[...],
# dims=[...]) and broadcast back, softmax in float, reshaped back for the
# next bmm; define_tensor(symbolic_sizes=, contiguous=), define_constant,
# axes= and output_shape= keywords.
# expect: compiles
# small: 512->32
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id25(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(symbolic_sizes=[-1, -1, -1], contiguous=[True, True, True], dtype=DataType.Half, is_cpu=False)
    T1 = fd.define_tensor(symbolic_sizes=[-1, 1, 1, -1], contiguous=[True, True, True, True], dtype=DataType.Half, is_cpu=False)
    T2 = fd.ops.reshape(T0, original_shape=[96, 512, 512], new_shape=[8, 12, 512, 512])
    T3 = fd.ops.squeeze(T1, original_shape=[8, 1, 1, 512], dims=[1, 2])
    T4 = fd.ops.broadcast_in_dim(T3, output_shape=[8, 12, 512, 512], broadcast_dims=[0, 3])
    T5 = fd.ops.cast(T2, dtype=DataType.Float)
    S6 = fd.define_constant(0.125000)
    T7 = fd.ops.mul(T5, S6)
    T8 = fd.ops.cast(T4, dtype=DataType.Float)
    T9 = fd.ops.add(T7, T8)
    T10 = fd.ops.max(T9, axes=[3], keepdim=False, dtype=DataType.Null)
    T11 = fd.ops.broadcast_in_dim(T10, output_shape=[8, 12, 512, 1], broadcast_dims=[0, 1, 2])
    T12 = fd.ops.broadcast_in_dim(T11, output_shape=[8, 12, 512, 512], broadcast_dims=[0, 1, 2, 3])
    T13 = fd.ops.sub(T9, T12)
    T14 = fd.ops.exp(T13)
    T15 = fd.ops.sum(T14, axes=[3], keepdim=False, dtype=DataType.Null)
    T16 = fd.ops.broadcast_in_dim(T15, output_shape=[8, 12, 512, 1], broadcast_dims=[0, 1, 2])
    T17 = fd.ops.broadcast_in_dim(T16, output_shape=[8, 12, 512, 512], broadcast_dims=[0, 1, 2, 3])
    T18 = fd.ops.div(T14, T17)
    T19 = fd.ops.cast(T18, dtype=DataType.Half)
    T20 = fd.ops.reshape(T19, original_shape=[8, 12, 512, 512], new_shape=[96, 512, 512])
    fd.add_output(T20)


with FusionDefinition() as fd:
    nvfuser_fusion_id25(fd)

inputs = [
    torch.randn((96, 512, 512), dtype=torch.float16, device='cuda:0'),
    torch.randn((8, 1, 1, 512), dtype=torch.float16, device='cuda:0'),
]
fd.execute(inputs)
