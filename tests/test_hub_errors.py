"""The shared answers: is a Hub error "unreachable"? which device by default?"""

from __future__ import annotations

import socket

import pytest
import torch

from hf_bgbench.hub.errors import HubUnreachableError, http_status, is_hub_unreachable
from hf_bgbench.models.devices import default_device, resolve_device


class _Response:
    def __init__(self, status_code: int) -> None:
        self.status_code = status_code


def _with_status(err: Exception, status: int) -> Exception:
    err.response = _Response(status)  # type: ignore[attr-defined]
    return err


def _wrapped(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as err:
            raise outer from err
    except Exception as err:
        return err


def test_one_error_class_for_models_and_publishing():
    from hf_bgbench import models
    from hf_bgbench.hub import publish as hub_publish

    assert models.HubUnreachableError is HubUnreachableError
    assert hub_publish.HubUnreachableError is HubUnreachableError
    for base in (ConnectionError, OSError, ValueError):
        assert issubclass(HubUnreachableError, base)


def test_network_and_offline_failures_are_unreachable():
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

    cases = [
        ConnectionError("no route"),
        TimeoutError("timed out"),
        socket.gaierror("Name or service not known"),
        OfflineModeIsEnabled("offline mode is enabled"),
        LocalEntryNotFoundError("not in the cache"),
        HubUnreachableError("already decided"),
        OSError("We couldn't connect to 'https://huggingface.co' to load the files"),
        _with_status(OSError("503"), 503),
        _hub_answer(503),
        # datasets: FileNotFoundError("... is not cached") raised while handling a ConnectionError
        _wrapped(FileNotFoundError("Dataset x/y is not cached"), ConnectionError("Couldn't reach")),
    ]
    import httpx

    cases.append(httpx.ConnectError("no DNS"))
    for err in cases:
        assert is_hub_unreachable(err), err


def _hub_answer(status: int) -> Exception:
    from huggingface_hub.errors import RepositoryNotFoundError

    httpx2 = pytest.importorskip("httpx2")  # huggingface_hub's HTTP client since 1.0
    request = httpx2.Request("GET", "https://huggingface.co/api/models/a/b")
    response = httpx2.Response(status, request=request)
    return RepositoryNotFoundError(f"{status} Client Error", response=response)


def test_answers_of_a_reachable_hub_and_bugs_are_not_unreachable():

    cases = [
        KeyError("bug"),
        ValueError("bad config"),
        PermissionError("cannot write the local cache"),
        FileNotFoundError("weights.safetensors"),
        _with_status(PermissionError("401"), 401),
        _with_status(OSError("404"), 404),
        _hub_answer(404),
        _hub_answer(401),
    ]
    for err in cases:
        assert not is_hub_unreachable(err), err


def test_http_status():
    assert http_status(_with_status(OSError("x"), 401)) == 401
    assert http_status(OSError("x")) is None


def test_default_device_is_the_best_available(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    if getattr(torch.backends, "mps", None) is not None:
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert default_device() == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_device() == torch.device("cuda")
    assert resolve_device(None) == resolve_device("auto") == torch.device("cuda")
    assert resolve_device("cpu") == torch.device("cpu")


def test_loader_uses_the_shared_device_picker():
    import hf_bgbench.models.loader as loader

    assert loader.resolve_device is resolve_device
    with pytest.raises(RuntimeError):
        resolve_device("not-a-device")


def test_an_unreachable_hub_is_asked_once_then_the_cache_only(monkeypatch, caplog, capsys):
    """Without HF_HUB_OFFLINE and without a network, the first Hub id is met by one quick
    probe: offline mode from then on, said once, instead of a minute of retries per file."""
    import socket

    import huggingface_hub.constants as hub_constants

    from hf_bgbench.cli import main
    from hf_bgbench.hub import reachable

    probes = []

    def no_network(address, timeout=None):
        probes.append(address)
        raise OSError("[Errno -2] Name or service not known")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(reachable, "_reachable", None)
    monkeypatch.setattr(socket, "create_connection", no_network)
    argv = ["evaluate", "someone/unknown-model", "--benchmark", "in9", "--data", "nowhere/x"]
    assert main([*argv, "--quiet"]) == 2
    assert main([*argv, "--quiet"]) == 2  # the same process: not asked again
    assert len(probes) == 1 and hub_constants.HF_HUB_OFFLINE
    said = [r.getMessage() for r in caplog.records if "cannot be reached" in r.getMessage()]
    assert len(said) == 1 and "working offline" in said[0]
    assert "not in the local Hugging Face cache" in capsys.readouterr().err
