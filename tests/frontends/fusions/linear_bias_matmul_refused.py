# A linear layer inside the fusion (Thunder hands matmuls to nvFuser when
# asked): out of scope, refused naming fd.ops.matmul.
# expect: refused matmul
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id40(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0])
    T3 = fd.ops.matmul(T0, T1)
    T4 = fd.ops.broadcast_in_dim(T2, shape=[2048, 4096], broadcast_dims=[1])
    T5 = fd.ops.add(T3, T4)
    fd.add_output(T5)


with FusionDefinition() as fd:
    nvfuser_fusion_id40(fd)

inputs = [
    torch.testing.make_tensor((2048, 1024), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((1024, 4096), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
