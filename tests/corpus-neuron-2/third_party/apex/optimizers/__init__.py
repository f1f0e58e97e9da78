from .fused_sgd import FusedSGD  # expect-one(vendored-apex): kernels
from .fused_adam import FusedAdam  # expect-one(vendored-apex): kernels
from .fused_novograd import FusedNovoGrad  # expect-one(vendored-apex): kernels
from .fused_lamb import FusedLAMB  # expect-one(vendored-apex): kernels
from .fused_adagrad import FusedAdagrad  # expect-one(vendored-apex): kernels
from .fused_mixed_precision_lamb import FusedMixedPrecisionLamb  # expect-one(vendored-apex): kernels
