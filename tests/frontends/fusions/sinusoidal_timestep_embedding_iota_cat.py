# Diffusion timestep embedding (DDPM / Stable Diffusion's
# get_timestep_embedding): freqs = exp(-ln(10000) * arange(half) / half)
# from fd.ops.iota, args = t[:, None] * freqs[None, :], the embedding
# cat([cos(args), sin(args)], dim=-1); the timesteps a float32 input [B],
# iota's length, start and step as define_scalar Ints, as Thunder prints.
# expect: compiles
import torch
from nvfuser import FusionDefinition, DataType


def nvfuser_fusion_id23(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    S1 = fd.define_scalar(160, dtype=DataType.Int)
    S2 = fd.define_scalar(0, dtype=DataType.Int)
    S3 = fd.define_scalar(1, dtype=DataType.Int)
    T4 = fd.ops.iota(S1, S2, S3, dtype=DataType.Int)
    T5 = fd.ops.cast(T4, dtype=DataType.Float)
    S6 = fd.define_scalar(-9.21034, dtype=DataType.Double)
    T7 = fd.ops.mul(T5, S6)
    S8 = fd.define_scalar(160.000, dtype=DataType.Double)
    T9 = fd.ops.div(T7, S8)
    T10 = fd.ops.exp(T9)
    T11 = fd.ops.broadcast_in_dim(T0, shape=[T0.size(0), 1], broadcast_dims=[0])
    T12 = fd.ops.broadcast_in_dim(T10, shape=[1, 160], broadcast_dims=[1])
    T13 = fd.ops.mul(T11, T12)
    T14 = fd.ops.cos(T13)
    T15 = fd.ops.sin(T13)
    T16 = fd.ops.cat([T14, T15], dim=-1)
    fd.add_output(T16)


with FusionDefinition() as fd:
    nvfuser_fusion_id23(fd)

inputs = [
    torch.testing.make_tensor((256,), dtype=torch.float32, device='cuda:0', low=0, high=1000),
]
fd.execute(inputs)
