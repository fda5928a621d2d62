# HuggingFace BERT/RoBERTa get_extended_attention_mask folded into the
# scores: the int64 attention_mask [B, S] (1 = keep) cast to fp16,
# (1 - mask) * torch.finfo(float16).min broadcast to [B, 1, 1, S] and added
# to fp16 scores [B, H, S, S], then the softmax; an integer input, a
# finite "minus infinity" (-65504), broadcast_dims [0, 3].
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id21(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.cast(T1, dtype=DataType.Half)
    S3 = fd.define_scalar(1.00000, dtype=DataType.Double)
    T4 = fd.ops.sub(S3, T2)
    S5 = fd.define_scalar(-65504.0, dtype=DataType.Double)
    T6 = fd.ops.mul(T4, S5)
    T7 = fd.ops.broadcast_in_dim(T6, shape=[T0.size(0), T0.size(1), T0.size(2), T0.size(3)], broadcast_dims=[0, 3])
    T8 = fd.ops.cast(T0, dtype=DataType.Float)
    T9 = fd.ops.cast(T7, dtype=DataType.Float)
    T10 = fd.ops.add(T8, T9)
    T11 = fd.ops.max(T10, dims=[3], keepdim=True, dtype=DataType.Null)
    T12 = fd.ops.broadcast_in_dim(T11, shape=T0.shape(), broadcast_dims=[0, 1, 2, 3])
    T13 = fd.ops.sub(T10, T12)
    T14 = fd.ops.exp(T13)
    T15 = fd.ops.sum(T14, dims=[3], keepdim=True, dtype=DataType.Null)
    T16 = fd.ops.broadcast_in_dim(T15, shape=T0.shape(), broadcast_dims=[0, 1, 2, 3])
    T17 = fd.ops.div(T14, T16)
    T18 = fd.ops.cast(T17, dtype=DataType.Half)
    fd.add_output(T18)


with FusionDefinition() as fd:
    nvfuser_fusion_id21(fd)

inputs = [
    torch.testing.make_tensor((16, 12, 512, 512), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((16, 512), dtype=torch.int64, device='cuda:0', low=0, high=2),
]
fd.execute(inputs)
