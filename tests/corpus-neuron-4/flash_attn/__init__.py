__version__ = "2.5.8"

from flash_attn.flash_attn_interface import (  # expect-one(flash-attn-pkg): kernels
    flash_attn_func,
    flash_attn_kvpacked_func,
    flash_attn_qkvpacked_func,
    flash_attn_varlen_qkvpacked_func,
)
