# Token embedding lookup through nvFuser's own embedding op (Thunder hands
# torch.nn.functional.embedding to fd.ops.embedding_fwd): a gather, out of
# scope, refused naming it.
# expect: refused embedding_fwd
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id26(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Int, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    T2 = fd.ops.embedding_fwd(T0, T1, None, None, None, None, None)
    S3 = fd.define_scalar(64.0000, dtype=DataType.Double)
    T4 = fd.ops.mul(T2, S3)
    fd.add_output(T4)


with FusionDefinition() as fd:
    nvfuser_fusion_id26(fd)

inputs = [
    torch.testing.make_tensor((4, 2048), dtype=torch.int64, device='cuda:0', low=0, high=32000),
    torch.testing.make_tensor((32000, 4096), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
