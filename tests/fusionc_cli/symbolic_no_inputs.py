# A symbolic definition without an inputs list: eval needs --shapes.
from nvfuser import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    T1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    T2 = fd.ops.broadcast_in_dim(T1, shape=T0.shape(), broadcast_dims=[1])
    T3 = fd.ops.add(T0, T2)
    fd.add_output(T3)
