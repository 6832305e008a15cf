"""Small text utilities shared by the dataset loaders, the domains and the studies."""
from __future__ import annotations

import re

SENT_RE = re.compile(r"([.!?][\"'”’)]?)\s+(?=[\"'“‘(]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """A simple sentence splitter: break after . ! ? (optionally closed by a quote) before a capital."""
    text = " ".join(str(text).split())
    return [s.strip() for s in SENT_RE.sub(r"\1\n", text).split("\n") if s.strip()]
