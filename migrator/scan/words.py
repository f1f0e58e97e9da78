"""The shared PyTorch vocabulary (rules/vocabulary.yaml) as the constants the scan uses."""

from __future__ import annotations

from migrator.core.catalogue import load_vocabulary

# The shared PyTorch words are data (rules/vocabulary.yaml, schema-checked), read once.
_WORDS = load_vocabulary()
CUDA_DEVICE = _WORDS["cuda_device"]
DEVICE_NAME = _WORDS["device_name"]
ALLOW_LIST_NAME = _WORDS["allow_list_names"]
ALLOW_LIST_OPTION = _WORDS["allow_list_options"]
TENSOR_METADATA = frozenset(_WORDS["tensor_metadata"])
DEVICE_ARG0 = frozenset(_WORDS["device_argument_calls"])
DEVICE_TYPE_ARG0 = frozenset(_WORDS["device_type_argument_calls"])
DEVICE_KEYWORDS = {word: "device" for word in _WORDS["device_keywords"]}
DEVICE_TYPE_CALLS = DEVICE_TYPE_ARG0 | frozenset(_WORDS["device_type_keyword_calls"])
DTYPE_KEYWORDS = frozenset(_WORDS["dtype_keywords"])
ENV_METHODS = frozenset(_WORDS["environ_methods"])
QUIET_CALLS = frozenset(_WORDS["quiet_calls"])
MASK_CALLS = frozenset(_WORDS["mask_calls"])  # their result is a boolean mask (scan/matchers/mask_index.py)
# Names that hold a device index (an int), calls whose result is one, process-count keywords,
# the keywords the value analysis follows as a device, process-group calls.
INDEX_NAME = _WORDS["index_names"]
INDEX_CALLS = _WORDS["index_calls"]
NPROCS_KEYWORDS = frozenset(_WORDS["nprocs_keywords"])
TRACKED_DEVICE_KEYWORDS = frozenset(_WORDS["tracked_device_keywords"])
BACKEND_CALLS = frozenset(_WORDS["backend_calls"])
# Top-level packages of PyTorch's own wheel: their files are the framework, not code to migrate (NRN002).
FRAMEWORK_PACKAGES = frozenset(_WORDS["framework_packages"])
# Accelerators other than CUDA GPUs, by device type: a branch chain testing one besides CUDA dispatches per vendor.
OTHER_ACCELERATORS = frozenset(_WORDS["other_accelerators"])
# A class an argument matcher names -> subclasses in other libraries that take its arguments (TRL's configs).
SUBCLASSES: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _WORDS.get("subclasses", {}).items()}
