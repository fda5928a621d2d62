# expect: no fusion definition found
# expect-line: 3
import torch
from nvfuser import FusionDefinition, DataType
