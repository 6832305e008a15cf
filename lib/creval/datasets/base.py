"""The one fallback chain every external dataset is found through.

:func:`resolve` tries, in this order, and returns the first that holds the dataset's required files:

1. ``local``    an explicit path (a loader's ``source=`` argument) or the dataset's environment
                variable (``CREVAL_MACGYVER_DIR``, ``CREVAL_SICK_DIR``, ...): a folder, or for some
                datasets a single file. A broken explicit source is a :class:`CrevalError` naming the
                path and what is missing; it never falls through silently.
2. ``shared``   the staged copy ``<repo>/../shared/data/<folder>`` when it sits beside the checkout
                (moved with ``CREVAL_SHARED_DATA``; ``CREVAL_SHARED_DATA=none`` hides it).
3. ``download`` a previous download under ``creval.core.paths.downloads_dir()/<name>/``, or, where the
                caller allows it (a loader, or :func:`fetch_dataset`, a study's fetch step), a fresh
                download of the public files there (short timeout, each file checked against its pinned
                sha256, a mismatch is refused; a partial earlier download is completed). Skipped when
                ``CREVAL_OFFLINE=1``, tried once per process; a failure only logs a warning.
4. ``sample``   the small sample written for this project under ``data/samples/<name>/`` (numbers on it
                say nothing about the real dataset). A dataset without a sample raises a
                :class:`CrevalError` saying how to provide it.

The :class:`Source` returned says which step answered (``str(source)`` is ``"<kind>:<path>"``). A lookup
(``source()``, a Config's ``resolved``, a run id) never downloads: what it names is what is on disk now.
Inside a folder a file is looked up as ``<folder>/<rel>`` and ``<folder>/data/<rel>``.
"""
from __future__ import annotations

import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from creval.core import paths
from creval.core.errors import CrevalError
from creval.core.io import download, offline

log = logging.getLogger("creval.datasets")

KINDS = ("local", "shared", "download", "sample")


@dataclass(frozen=True)
class Remote:
    """One public file: where it comes from, its pinned sha256, and its name in the download folder."""
    url: str
    sha256: str | None
    name: str


@dataclass(frozen=True)
class Dataset:
    """What the fallback chain needs to know about one external dataset.

    ``files`` maps a logical file to the relative paths it may have (first found wins); ``required``
    names the logical files a folder must hold to count as this dataset. ``fetch`` replaces the plain
    download of ``remotes`` (e.g. an API that returns rows)."""
    name: str
    env: str
    shared: str                                   # folder under ../shared/data
    files: dict[str, tuple[str, ...]]
    required: tuple[str, ...]
    remotes: tuple[Remote, ...] = ()
    fetch: Callable[[Path], None] | None = None
    sample: bool = True                           # data/samples/<name>/ exists
    file_ok: bool = False                         # an explicit single file is accepted
    how: str = ""                                 # how to provide it, for error messages
    unit: str = ""                                # the independent unit every interval on it resamples whole
    stratum: str = ""                             # the prompt each text answers: fixed, units drawn within it
    unit_why: str = ""                            # one sentence: why that unit (docs, card, chapters)


@dataclass(frozen=True)
class Source:
    """Where a dataset was read from: ``kind`` in local/shared/download/sample, and the folder or file."""
    kind: str
    path: Path

    def __str__(self) -> str:
        return f"{self.kind}:{self.path}"

    @property
    def is_sample(self) -> bool:
        return self.kind == "sample"


def find(root: Path, rels: tuple[str, ...] | list[str]) -> Path | None:
    """The first of ``rels`` present under ``root`` (also looked for under ``root/data``)."""
    for rel in rels:
        for cand in (root / rel, root / "data" / rel):
            if cand.exists():
                return cand
    return None


def file_of(ds: Dataset, src: Source, logical: str, required: bool = True) -> Path | None:
    """The path of ``logical`` (a key of ``ds.files``) in ``src``; a missing required file is a CrevalError."""
    if src.path.is_file():
        if required:
            raise CrevalError(f"{ds.name}: {src.path} is a single file, but {logical} needs the dataset folder",
                              f"point {ds.env} at the folder holding {ds.files[logical][0]}")
        return None
    f = find(src.path, ds.files[logical])
    if f is None and required:
        raise CrevalError(f"{ds.name}: no {' or '.join(ds.files[logical])} in {src}",
                          ds.how or f"point {ds.env} at a folder holding it")
    return f


def table_file(ds: Dataset, src: Source, logical: str) -> Path:
    """The file holding ``logical``: the source itself when it is a single file (datasets with ``file_ok``),
    else that file inside the source's folder."""
    return src.path if src.path.is_file() else file_of(ds, src, logical)


def _holds(ds: Dataset, root: Path) -> bool:
    return root.is_dir() and all(find(root, ds.files[k]) is not None for k in ds.required)


def _complete(ds: Dataset, dest: Path) -> bool:
    return all((dest / r.name).exists() for r in ds.remotes)


def _explicit(ds: Dataset, source: str | Path | None) -> Source | None:
    given = source or os.environ.get(ds.env)
    if not given:
        return None
    how = "source" if source else f"${ds.env}"
    p = Path(given).expanduser()
    if not p.exists():
        raise CrevalError(f"{ds.name} dataset {how} {p} does not exist",
                          f"give an existing file or folder, or unset {ds.env} to use the fallbacks")
    if p.is_file():
        if not ds.file_ok:
            raise CrevalError(f"{ds.name} dataset {how} {p} is a file; a folder is needed",
                              f"give the folder holding {ds.files[ds.required[0]][0]}")
        return Source("local", p)
    if not _holds(ds, p):
        missing = [ds.files[k][0] for k in ds.required if find(p, ds.files[k]) is None]
        raise CrevalError(f"{ds.name} dataset {how} {p} has no {', '.join(missing)}",
                          ds.how or f"point {ds.env} at the {ds.name} folder, or unset it to use the fallbacks")
    return Source("local", p)


class DownloadFailures:
    """The datasets whose download failed in this process: tried once, then the next fallback answers."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def reset(self) -> None:
        """Let the next :func:`resolve` try downloads again (tests; a long session that came online)."""
        self.names.clear()


FAILURES = DownloadFailures()


def _download(ds: Dataset, dest: Path) -> None:
    if ds.fetch is not None:
        ds.fetch(dest)
        return
    for r in ds.remotes:
        if not (dest / r.name).exists():
            download(r.url, dest / r.name, r.sha256)


def resolve(ds: Dataset, source: str | Path | None = None, *, allow_download: bool = False) -> Source:
    """The first place in the documented order that holds ``ds`` (see the module doc). A loader passes
    ``allow_download=True``; a lookup leaves it false and never downloads."""
    got = _explicit(ds, source)
    if got is not None:
        return got
    shared = paths.shared_data_dir()
    if shared is not None and _holds(ds, shared / ds.shared):
        return Source("shared", shared / ds.shared)
    dest = paths.downloads_dir() / ds.name
    may_download = allow_download and bool(ds.remotes or ds.fetch) and ds.name not in FAILURES.names and not offline()
    if may_download and not (_holds(ds, dest) and _complete(ds, dest)):
        try:    # a first download, or completing a partial one
            _download(ds, dest)
            log.info("downloaded the %s dataset to %s", ds.name, dest)
        except Exception as e:  # offline, timeout, HTTP error, sha256 mismatch: fall through
            FAILURES.names.add(ds.name)  # try once per process
            log.info("%s: download failed (%s: %s); using the next fallback", ds.name, type(e).__name__, e)
    if _holds(ds, dest):
        return Source("download", dest)
    if ds.sample:
        return Source("sample", paths.samples_dir() / ds.name)
    raise CrevalError(f"{ds.name} data not found: not in ${ds.env}, not staged in ../shared/data/{ds.shared}, "
                      f"not downloaded to {dest}" + (" (CREVAL_OFFLINE=1)" if offline() else ""),
                      ds.how or f"set {ds.env} to a folder holding it, or run once with internet access")


def fetch_dataset(ds: Dataset) -> Source | None:
    """Download ``ds`` when no earlier step of the chain holds it (a study's fetch step, before its run id is
    named); the source that answers then, or None when none does (the study's own lookup says what it does
    without it). A broken explicit source is still a :class:`CrevalError`."""
    _explicit(ds, None)
    try:
        return resolve(ds, allow_download=True)
    except CrevalError:
        return None


def provenance(ds: Dataset, src: Source, what: str) -> str:
    """One line for a chapter: where ``what`` (e.g. "human originality ratings") came from, and, when it is
    only the bundled sample, that its numbers mean nothing and how to provide the real data."""
    if not src.is_sample:
        return f"{what}: {ds.name} from {src}"
    return (f"{what}: the real {ds.name} data was not found, so the bundled hand-written sample is used "
            f"(its numbers mean nothing); to use the real data, {ds.how or f'set {ds.env}'}")


def check_pins(ds: Dataset, src: Source) -> None:
    """Refuse a copy of ``ds`` that is not the pinned release: every file of ``ds.remotes`` must be in ``src``
    and hash to its pinned sha256. One :class:`CrevalError` naming the first file missing or changed. The
    bundled sample (written for creval, pinned to nothing) and remotes without a pin are not checked."""
    if src.is_sample or src.path.is_file():
        return
    for r in ds.remotes:
        f = find(src.path, (r.name,))
        if f is None:
            raise CrevalError(f"{ds.name}: {src.path / r.name} is missing (the pinned release has it)",
                              ds.how or f"restore the file, or point {ds.env} at a complete copy")
        if r.sha256 and hashlib.sha256(f.read_bytes()).hexdigest() != r.sha256:
            raise CrevalError(f"{ds.name}: {f} has changed: its sha256 is not the pinned {r.sha256[:12]}…",
                              f"restore it from {r.url}, or point {ds.env} at an unchanged copy")
