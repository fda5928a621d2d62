# Cross-entropy backward with label_smoothing=0.1 and ignore_index=-100
# (torch.compile's decomposition of the loss, mean reduction): the softmax
# recomputed from logits and the saved logsumexp, minus (1 - eps) at the
# target (an iota compared with the target) and eps / V everywhere, scaled
# by the upstream gradient over the valid-token count, zero on ignored
# rows. bf16 logits [N, V], fp32 lse [N], int64 target [N], the grad and
# count as 0-dim tensors; bf16 gradient out.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id88(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int, is_cpu=False, stride_order=[0])
    T3 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=False)
    T4 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=False)
    T5 = fd.ops.cast(T0, dtype=DataType.Float)
    T6 = fd.ops.broadcast_in_dim(T1, shape=[8192, 32000], broadcast_dims=[0])
    T7 = fd.ops.sub(T5, T6)
    T8 = fd.ops.exp(T7)
    S9 = fd.define_scalar(0, dtype=DataType.Int)
    S10 = fd.define_scalar(32000, dtype=DataType.Int)
    S11 = fd.define_scalar(1, dtype=DataType.Int)
    T12 = fd.ops.iota(S10, S9, S11, dtype=DataType.Int)
    T13 = fd.ops.broadcast_in_dim(T12, shape=[8192, 32000], broadcast_dims=[1])
    T14 = fd.ops.broadcast_in_dim(T2, shape=[8192, 32000], broadcast_dims=[0])
    T15 = fd.ops.eq(T13, T14)
    S16 = fd.define_scalar(0.900000, dtype=DataType.Double)
    S17 = fd.define_scalar(0.00000, dtype=DataType.Double)
    T18 = fd.ops.where(T15, S16, S17)
    S19 = fd.define_scalar(3.12500e-06, dtype=DataType.Double)
    T20 = fd.ops.add(T18, S19)
    T21 = fd.ops.sub(T8, T20)
    T22 = fd.ops.div(T3, T4)
    T23 = fd.ops.broadcast_in_dim(T22, shape=[8192, 32000], broadcast_dims=[])
    T24 = fd.ops.mul(T21, T23)
    S25 = fd.define_scalar(-100, dtype=DataType.Int)
    T26 = fd.ops.ne(T2, S25)
    T27 = fd.ops.broadcast_in_dim(T26, shape=[8192, 32000], broadcast_dims=[0])
    T28 = fd.ops.where(T27, T24, S17)
    T29 = fd.ops.cast(T28, dtype=DataType.BFloat16)
    fd.add_output(T29)


with FusionDefinition() as fd:
    nvfuser_fusion_id88(fd)

inputs = [
    torch.testing.make_tensor((8192, 32000), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((8192,), dtype=torch.float32, device='cuda:0', low=10, high=11),
    torch.testing.make_tensor((8192,), dtype=torch.int64, device='cuda:0', low=0, high=32000),
    torch.testing.make_tensor((), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((), dtype=torch.float32, device='cuda:0', low=4000, high=8192),
]
fd.execute(inputs)
