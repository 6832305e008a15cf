"""Where each domain's problems come from, and how raw rows become :class:`~creval.domains.Problem`.

Order of sources tried by :meth:`creval.domains.Domain.load`:

1. an explicit ``source`` path, else the domain's environment variable (``CREVAL_MACGYVER_DIR``,
   ``CREVAL_HYPOGEN_DIR``, ``CREVAL_BOOKMIA_DIR``): a file or a folder holding one;
2. a previously downloaded copy under ``creval.core.paths.home()/"datasets"/<domain>/``;
3. a download from the public source (short timeout; skipped when ``CREVAL_OFFLINE=1``), checked
   against a pinned sha256 where the upstream file is fixed, then stored for step 2;
4. the hand-written sample bundled in ``data/samples/``.

A source given explicitly (1) that is broken is an error (:class:`CrevalError` naming the file);
a failed download (3) only logs a warning and falls through to the bundled sample.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from pathlib import Path
from typing import Callable

from creval.core import paths
from creval.core.errors import CrevalError
from creval.core.io import download, download_rows, pick_file, read_any

log = logging.getLogger("creval.domains")

MACGYVER_URL = "https://raw.githubusercontent.com/allenai/MacGyver/main/data/MacGyver/problem_solution_pair.xlsx"
MACGYVER_SHA256 = "85faadd871e081066ed6dbe0ecafad82f4c79c16619f6b90da562a81f3ccceac"   # upstream commit 5e3ecc9


# ---------------------------------------------------------------------------------------------
# per-domain row -> fields
SENT_RE = re.compile(r"([.!?][\"'”’)]?)\s+(?=[\"'“‘(]?[A-Z0-9])")


def split_sentences(text: str) -> list[str]:
    """A simple sentence splitter: break after . ! ? (optionally closed by a quote) before a capital."""
    text = " ".join(str(text).split())
    return [s.strip() for s in SENT_RE.sub(r"\1\n", text).split("\n") if s.strip()]


def macgyver_rows(rows: list[dict], where: str) -> list[dict]:
    """Solvable MacGyver problems as fields dicts (``Solvable? == Yes``, as the paper's loader does)."""
    if rows and not {"Problem", "Solvable?"} <= set(rows[0]):
        raise CrevalError(f"{where}: MacGyver rows need the columns 'ID', 'Problem' and 'Solvable?'",
                          f"found columns {sorted(rows[0])}")
    out = []
    for i, r in enumerate(rows):
        if str(r.get("Solvable?", "")).strip().lower() != "yes" or not r.get("Problem"):
            continue
        out.append({"id": f"macgyver-{r.get('ID', i)}", "problem": str(r["Problem"]).strip(),
                    "reference_solution": str(r.get("Solution") or "").replace("<br>", "").strip(),
                    "unconventional": r.get("Unconventional?")})
    return out


def hypogen_rows(rows: list[dict], where: str) -> list[dict]:
    """HypoGen items: bit and flip are shown; the chain of reasoning is kept aside (never shown)."""
    if rows and not {"bit", "flip"} <= set(rows[0]):
        raise CrevalError(f"{where}: HypoGen rows need 'bit' and 'flip' fields", f"found fields {sorted(rows[0])}")
    return [{"id": f"hypogen-{r.get('paper_id', i)}", "bit": str(r["bit"]).strip(), "flip": str(r["flip"]).strip(),
             "title": r.get("title", ""), "hidden_chain_of_reasoning": r.get("chain_of_reasoning", "")}
            for i, r in enumerate(rows) if r.get("bit") and r.get("flip")]


def bookmia_rows(rows: list[dict], where: str) -> list[dict]:
    """Starter/ending pairs: given directly, or the first and last sentence of a BookMIA ``snippet``."""
    if rows and not ({"starter", "ending"} <= set(rows[0]) or "snippet" in rows[0]):
        raise CrevalError(f"{where}: BookMIA rows need 'snippet' or both 'starter' and 'ending'",
                          f"found fields {sorted(rows[0])}")
    out = []
    for i, r in enumerate(rows):
        if r.get("starter") and r.get("ending"):
            starter, ending = str(r["starter"]).strip(), str(r["ending"]).strip()
        else:
            sents = split_sentences(r.get("snippet") or "")
            if len(sents) < 3:
                continue
            starter, ending = sents[0], sents[-1]
        pid = f"bookmia-{r.get('book_id', 'x')}-{r.get('snippet_id', i)}".replace(" ", "_")
        out.append({"id": pid, "starter": starter, "ending": ending, "book": r.get("book", "")})
    return out


# per domain: env var, preferred local names, remote fetcher (dest -> path), row adapter, bundled sample
SOURCES: dict[str, dict] = {
    "macgyver": {"env": "CREVAL_MACGYVER_DIR",
                 "names": ["problem_solution_pair.jsonl", "problem_solution_pair.xlsx", "macgyver.jsonl"],
                 "cached": "problem_solution_pair.xlsx",
                 "fetch": lambda dest: download(MACGYVER_URL, dest, MACGYVER_SHA256),
                 "adapt": macgyver_rows, "sample": "macgyver.jsonl"},
    "hypogen": {"env": "CREVAL_HYPOGEN_DIR", "names": ["samples.json", "hypogen.json", "hypogen.jsonl", "train.jsonl"],
                "cached": "rows.json",
                "fetch": lambda dest: download_rows("UniverseTBD/hypogen-dr1", "train", dest),
                "adapt": hypogen_rows, "sample": "hypogen.json"},
    "bookmia": {"env": "CREVAL_BOOKMIA_DIR", "names": ["bookmia.jsonl", "BookMIA.jsonl", "bookmia.json"],
                "cached": "rows.json",
                "fetch": lambda dest: download_rows("swj0419/BookMIA", "train", dest),
                "adapt": bookmia_rows, "sample": "bookmia.jsonl"},
}


_FAILED: set[str] = set()


def resolve_rows(domain: str, source: str | Path | None = None) -> tuple[list[dict], str]:
    """(adapted rows, a description of the source used), trying the sources in the documented order."""
    s = SOURCES[domain]
    adapt: Callable = s["adapt"]
    explicit = source or os.environ.get(s["env"])
    if explicit:
        p = Path(explicit).expanduser()
        if not p.exists():
            how = "source" if source else f"${s['env']}"
            raise CrevalError(f"{domain} dataset {how} {p} does not exist", "give an existing file or folder")
        f = pick_file(p, s["names"]) if p.is_dir() else p
        return adapt(read_any(f), str(f)), f"local:{f}"
    cached = paths.home() / "datasets" / domain / s["cached"]
    if not cached.exists() and domain not in _FAILED:
        try:
            s["fetch"](cached)
            log.info("downloaded %s dataset to %s", domain, cached)
        except Exception as e:  # offline, timeout, HTTP error, checksum mismatch: fall back
            _FAILED.add(domain)   # try once per process
            log.warning("%s: download failed (%s: %s); using the bundled sample", domain, type(e).__name__, e)
    if cached.exists():
        return adapt(read_any(cached), str(cached)), f"download:{cached}"
    f = paths.samples_dir() / s["sample"]
    return adapt(read_any(f), str(f)), f"sample:{f}"
