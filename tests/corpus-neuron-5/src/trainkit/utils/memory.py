"""Memory reporting that also works where torch is not installed."""
import gc
import logging

try: import torch
except ImportError: torch = None

logger = logging.getLogger(__name__)


def log_memory(tag: str = "") -> None:
    if torch is None or not torch.cuda.is_available():  # may: device
        return
    allocated = torch.cuda.memory_allocated() / 2**30  # expect: device|runtime
    reserved = torch.cuda.memory_reserved() / 2**30  # expect: device|runtime
    peak = torch.cuda.max_memory_allocated() / 2**30  # expect: device|runtime
    logger.info("%s allocated=%.2fG reserved=%.2fG peak=%.2fG", tag, allocated, reserved, peak)


def free_memory() -> None:
    gc.collect()
    if torch is not None and torch.cuda.is_available():  # may: device
        torch.cuda.empty_cache()  # expect: device|runtime
        torch.cuda.reset_peak_memory_stats()  # expect: device|runtime
