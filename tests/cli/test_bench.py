"""`grok bench`: a device that is not there is a one-line user error."""

from __future__ import annotations

import pytest
import torch

from tests.cli.conftest import grok


@pytest.mark.parametrize("device", ["cuda", "tpu"])
def test_unavailable_device_is_a_user_error(device):
    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    r = grok("bench", "--quick", "--device", device)
    assert r.returncode == 2
    assert r.stderr.startswith("error: --device") and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
