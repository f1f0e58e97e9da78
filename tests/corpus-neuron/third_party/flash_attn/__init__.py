# Vendored copy of the flash-attn package (github.com/Dao-AILab/flash-attention), trimmed.
__version__ = "2.5.9.post1"

from flash_attn.flash_attn_interface import (  # expect-one(flash-attn-package): kernels|dependencies
    flash_attn_func,
    flash_attn_kvpacked_func,
    flash_attn_qkvpacked_func,
    flash_attn_varlen_func,
    flash_attn_varlen_qkvpacked_func,
)
