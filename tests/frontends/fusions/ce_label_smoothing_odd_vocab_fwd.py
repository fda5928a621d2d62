# cross_entropy(logits, target, label_smoothing=0.1) over GPT-2's 50257-word
# vocabulary, the target as a one-hot bf16 input (no gather): per row
# loss = (1 - eps) * -logp[target] + eps * mean(-logp), with
# logp = x - max - log(sum(exp(x - max))); the mean over rows is a rank-0
# output. Static shapes as Thunder writes them; fp32 logits.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id6(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[2048, 50257], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[2048, 50257], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.max(T0, dims=[1], keepdim=False, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[2048, 1], broadcast_dims=[0])
    T4 = fd.ops.broadcast_in_dim(T3, shape=[2048, 50257], broadcast_dims=[0, 1])
    T5 = fd.ops.sub(T0, T4)
    T6 = fd.ops.exp(T5)
    T7 = fd.ops.sum(T6, dims=[1], keepdim=False, dtype=DataType.Null)
    T8 = fd.ops.log(T7)
    T9 = fd.ops.broadcast_in_dim(T8, shape=[2048, 1], broadcast_dims=[0])
    T10 = fd.ops.broadcast_in_dim(T9, shape=[2048, 50257], broadcast_dims=[0, 1])
    T11 = fd.ops.sub(T5, T10)
    T12 = fd.ops.cast(T1, dtype=DataType.Float)
    T13 = fd.ops.mul(T11, T12)
    T14 = fd.ops.sum(T13, dims=[1], keepdim=False, dtype=DataType.Null)
    T15 = fd.ops.neg(T14)
    T16 = fd.ops.sum(T11, dims=[1], keepdim=False, dtype=DataType.Null)
    S17 = fd.define_scalar(50257.0, dtype=DataType.Double)
    T18 = fd.ops.div(T16, S17)
    T19 = fd.ops.neg(T18)
    S20 = fd.define_scalar(0.900000, dtype=DataType.Double)
    T21 = fd.ops.mul(T15, S20)
    S22 = fd.define_scalar(0.100000, dtype=DataType.Double)
    T23 = fd.ops.mul(T19, S22)
    T24 = fd.ops.add(T21, T23)
    T25 = fd.ops.sum(T24, dims=[0], keepdim=False, dtype=DataType.Null)
    S26 = fd.define_scalar(2048.00, dtype=DataType.Double)
    T27 = fd.ops.div(T25, S26)
    T28 = fd.ops.add(T2, T8)
    fd.add_output(T27)
    fd.add_output(T28)


with FusionDefinition() as fd:
    nvfuser_fusion_id6(fd)

inputs = [
    torch.testing.make_tensor((2048, 50257), dtype=torch.float32, device='cuda:0', low=-8, high=8),
    torch.testing.make_tensor((2048, 50257), dtype=torch.bfloat16, device='cuda:0', low=0, high=1),
]
fd.execute(inputs)
