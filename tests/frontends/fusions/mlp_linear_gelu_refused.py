# An MLP's up projection handed to nvFuser with its bias (fd.ops.linear, as
# Thunder does when nvFuser takes linear layers), then a tanh activation:
# matrix multiplication is out of scope, refused naming fd.ops.linear.
# expect: refused linear
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id29(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[8, 1024, 768], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T1 = fd.define_tensor(shape=[3072, 768], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[3072], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T3 = fd.ops.linear(T0, T1, T2)
    T4 = fd.ops.cast(T3, dtype=DataType.Float)
    T5 = fd.ops.tanh(T4)
    T6 = fd.ops.cast(T5, dtype=DataType.BFloat16)
    fd.add_output(T6)


with FusionDefinition() as fd:
    nvfuser_fusion_id29(fd)

inputs = [
    torch.testing.make_tensor((8, 1024, 768), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((3072, 768), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((3072,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
