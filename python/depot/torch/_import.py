"""The one place depot.torch imports torch: a missing torch raises an ImportError that names the extra."""

__all__ = ["torch_module"]


def torch_module():
    """The ``torch`` module; raises ImportError naming the extra to install when it is missing."""
    try:
        import torch
    except ImportError:
        raise ImportError("depot.torch needs PyTorch: pip install 'depot-shm[torch]' (or torch itself; "
                          "the rest of depot works without it)") from None
    return torch
