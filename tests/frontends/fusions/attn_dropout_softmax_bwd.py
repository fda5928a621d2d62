# Backward of dropout on attention probabilities then softmax: the saved
# keep mask (bool) rescales the gradient by 1/keep, then the softmax
# backward with the saved probabilities; fp16.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id15(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[32, 16, 512, 512], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T1 = fd.define_tensor(shape=[32, 16, 512, 512], contiguity=[True, True, True, True], dtype=DataType.Bool, is_cpu=False, stride_order=[3, 2, 1, 0])
    T2 = fd.define_tensor(shape=[32, 16, 512, 512], contiguity=[True, True, True, True], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    T3 = fd.ops.cast(T0, dtype=DataType.Float)
    T4 = fd.ops.cast(T1, dtype=DataType.Float)
    T5 = fd.ops.mul(T3, T4)
    S6 = fd.define_scalar(1.11111, dtype=DataType.Double)
    T7 = fd.ops.mul(T5, S6)
    T8 = fd.ops.cast(T2, dtype=DataType.Float)
    T9 = fd.ops.mul(T7, T8)
    T10 = fd.ops.sum(T9, dims=[3], keepdim=True, dtype=DataType.Null)
    T11 = fd.ops.broadcast_in_dim(T10, shape=[32, 16, 512, 512], broadcast_dims=[0, 1, 2, 3])
    T12 = fd.ops.sub(T7, T11)
    T13 = fd.ops.mul(T8, T12)
    T14 = fd.ops.cast(T13, dtype=DataType.Half)
    fd.add_output(T14)


with FusionDefinition() as fd:
    nvfuser_fusion_id15(fd)

inputs = [
    torch.testing.make_tensor((32, 16, 512, 512), dtype=torch.float16, device='cuda:0'),
    torch.testing.make_tensor((32, 16, 512, 512), dtype=torch.bool, device='cuda:0'),
    torch.softmax(torch.randn((32, 16, 512, 512), dtype=torch.float32, device='cuda:0'), dim=-1).to(torch.float16),
]
fd.execute(inputs)
