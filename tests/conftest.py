"""Fixtures shared by test modules."""
from __future__ import annotations

import pytest
import torch


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread: on a shared 2-core machine two OpenMP threads stall on every small operation."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
