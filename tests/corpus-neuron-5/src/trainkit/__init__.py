"""trainkit: small training utilities shared by the example scripts."""
__version__ = "0.4.1"
