# CLIP's contrastive head: F.normalize(x, dim=-1) of image and text
# embeddings (x / clamp_min(||x||, 1e-12)) and the logits scale exp(t)
# clamped to at most 100, as Thunder prints them: clamp as where(isnan(a) |
# (a >= min), a, min) (NaN kept), the scale a 0-dim CPU tensor written by
# the repro printer as make_tensor((), device='cpu'). bf16 [B, D] in,
# normalized bf16 embeddings out, each pre-multiplied by the scale.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float, is_cpu=True)
    tv3 = fd.ops.exp(tv2)
    c4 = fd.define_scalar(100.000, dtype=DataType.Double)
    tv5 = fd.ops.isnan(tv3)
    tv6 = fd.ops.le(tv3, c4)
    tv7 = fd.ops.logical_or(tv5, tv6)
    tv8 = fd.ops.where(tv7, tv3, c4)
    c9 = fd.define_scalar(1.00000e-12, dtype=DataType.Double)
    tv10 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv11 = fd.ops.mul(tv10, tv10)
    tv12 = fd.ops.sum(tv11, dims=[1], keepdim=False, dtype=DataType.Null)
    tv13 = fd.ops.sqrt(tv12)
    tv14 = fd.ops.isnan(tv13)
    tv15 = fd.ops.ge(tv13, c9)
    tv16 = fd.ops.logical_or(tv14, tv15)
    tv17 = fd.ops.where(tv16, tv13, c9)
    tv18 = fd.ops.broadcast_in_dim(tv17, shape=[32768, 768], broadcast_dims=[0])
    tv19 = fd.ops.div(tv10, tv18)
    tv20 = fd.ops.mul(tv19, tv8)
    tv21 = fd.ops.cast(tv20, dtype=DataType.BFloat16)
    tv22 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv23 = fd.ops.mul(tv22, tv22)
    tv24 = fd.ops.sum(tv23, dims=[1], keepdim=False, dtype=DataType.Null)
    tv25 = fd.ops.sqrt(tv24)
    tv26 = fd.ops.isnan(tv25)
    tv27 = fd.ops.ge(tv25, c9)
    tv28 = fd.ops.logical_or(tv26, tv27)
    tv29 = fd.ops.where(tv28, tv25, c9)
    tv30 = fd.ops.broadcast_in_dim(tv29, shape=[32768, 768], broadcast_dims=[0])
    tv31 = fd.ops.div(tv22, tv30)
    tv32 = fd.ops.cast(tv31, dtype=DataType.BFloat16)
    fd.add_output(tv21)
    fd.add_output(tv32)


with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((32768, 768), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((32768, 768), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((), dtype=torch.float32, device='cpu'),
]
fd.execute(inputs)
