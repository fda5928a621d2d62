# NLL loss with a one-hot target instead of a gather: the mean over rows of
# -sum(onehot * log_softmax(logits)), the whole of log_softmax in the same
# fusion; a rank-0 float loss.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id18(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[2048, 8192], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[2048, 8192], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.max(T0, dims=[1], keepdim=True, dtype=DataType.Null)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[2048, 8192], broadcast_dims=[0, 1])
    T4 = fd.ops.sub(T0, T3)
    T5 = fd.ops.exp(T4)
    T6 = fd.ops.sum(T5, dims=[1], keepdim=True, dtype=DataType.Null)
    T7 = fd.ops.log(T6)
    T8 = fd.ops.broadcast_in_dim(T7, shape=[2048, 8192], broadcast_dims=[0, 1])
    T9 = fd.ops.sub(T4, T8)
    T10 = fd.ops.mul(T9, T1)
    T11 = fd.ops.sum(T10, dims=[0, 1], keepdim=False, dtype=DataType.Null)
    T12 = fd.ops.neg(T11)
    S13 = fd.define_scalar(0.000488281, dtype=DataType.Double)
    T14 = fd.ops.mul(T12, S13)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id18(fd)

inputs = [
    torch.testing.make_tensor((2048, 8192), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((2048, 8192), dtype=torch.float32, device='cuda:0', low=0, high=1),
]
fd.execute(inputs)
