"""cudaresolve: a GPU-aware resolver for the PyTorch stack."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
