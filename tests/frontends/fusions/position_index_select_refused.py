# Learned position embeddings picked by position_ids with index_select
# (GPT-2's wpe(position_ids) as Thunder prints it for nvFuser), then added
# to the token embeddings: index_select is a gather, out of scope, refused
# naming it.
# expect: refused index_select
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id27(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[1024, 768], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.define_tensor(shape=[512], contiguity=[True], dtype=DataType.Int, is_cpu=False, stride_order=[0])
    T2 = fd.define_tensor(shape=[8, 512, 768], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    T3 = fd.ops.index_select(T0, T1, dim=0)
    T4 = fd.ops.broadcast_in_dim(T3, shape=[8, 512, 768], broadcast_dims=[1, 2])
    T5 = fd.ops.add(T2, T4)
    fd.add_output(T5)


with FusionDefinition() as fd:
    nvfuser_fusion_id27(fd)

inputs = [
    torch.testing.make_tensor((1024, 768), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((512,), dtype=torch.int64, device='cuda:0', low=0, high=1024),
    torch.testing.make_tensor((8, 512, 768), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
