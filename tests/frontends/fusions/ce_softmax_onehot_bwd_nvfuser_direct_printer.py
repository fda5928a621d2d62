# Cross-entropy backward (softmax minus one-hot of the target) in the form
# nvFuser's direct-bindings repro printer writes: reductions with dtype and
# no keepdim, fd.ops.broadcast + fd.ops.expand to fd.ops.size scalars, an
# iota and a full whose lengths are those scalars, inline constants and a
# segment_set before the output. float32 logits [N, V], int64 target [N].
# expect: compiles
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int, is_cpu=False, stride_order=[0])
    i2 = fd.ops.size(tv0, dim=0)
    i3 = fd.ops.size(tv0, dim=1)
    tv4 = fd.ops.max(tv0, dims=[1], dtype=DataType.Null)
    tv5 = fd.ops.broadcast(tv4, is_broadcast_dim=[False, True])
    tv6 = fd.ops.expand(tv5, shape=[i2, i3])
    tv7 = fd.ops.sub(tv0, tv6)
    tv8 = fd.ops.exp(tv7)
    tv9 = fd.ops.sum(tv8, dims=[1], dtype=DataType.Float)
    tv10 = fd.ops.broadcast(tv9, is_broadcast_dim=[False, True])
    tv11 = fd.ops.expand(tv10, shape=[i2, i3])
    tv12 = fd.ops.div(tv8, tv11)
    tv13 = fd.ops.iota(i3, 0, 1, dtype=DataType.Int)
    tv14 = fd.ops.broadcast(tv13, is_broadcast_dim=[True, False])
    tv15 = fd.ops.expand(tv14, shape=[i2, i3])
    tv16 = fd.ops.broadcast(tv1, is_broadcast_dim=[False, True])
    tv17 = fd.ops.expand(tv16, shape=[i2, i3])
    b18 = fd.ops.eq(tv15, tv17)
    tv19 = fd.ops.full(shape=[i2, i3], fill_value=0.0, dtype=DataType.Float)
    tv20 = fd.ops.where(b18, 1.0, tv19)
    tv21 = fd.ops.sub(tv12, tv20)
    tv22 = fd.ops.segment_set(tv21)
    fd.add_output(tv22)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((4096, 32000), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((4096,), dtype=torch.int64, device='cuda:0', low=0, high=32000),
]
fd.execute(inputs)
