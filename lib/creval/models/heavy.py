"""The heavy optional libraries, each loaded lazily in this one place (importing creval never loads them): a
module function per library returns the imported module. A missing library raises ``ImportError`` as usual;
the registry's install hint (:func:`creval.models.registry.load_backend`) names the extra to install."""
from __future__ import annotations

import atexit
import ctypes
import gc
import importlib
import threading
import weakref
from collections.abc import Callable
from types import ModuleType


def torch() -> ModuleType:
    """``torch`` (the hf backend, the NLI cross-encoder and its training, device choice)."""
    return importlib.import_module("torch")


def transformers() -> ModuleType:
    """``transformers`` (the hf backend, the NLI cross-encoder and its training)."""
    return importlib.import_module("transformers")


def transformers_logging() -> ModuleType:
    """``transformers.utils.logging`` (to quiet its warnings)."""
    return importlib.import_module("transformers.utils.logging")


def llama_cpp() -> ModuleType:
    """``llama_cpp`` (the embedded default backend)."""
    return importlib.import_module("llama_cpp")


def llama_chat_format() -> ModuleType:
    """``llama_cpp.llama_chat_format`` (the GGUF's own chat template)."""
    return importlib.import_module("llama_cpp.llama_chat_format")


def sentence_transformers() -> ModuleType:
    """``sentence_transformers`` (the sentence embedder)."""
    return importlib.import_module("sentence_transformers")


def spacy() -> ModuleType:
    """``spacy`` (the part-of-speech tagger of the templates measure)."""
    return importlib.import_module("spacy")


def chromadb() -> ModuleType:
    """``chromadb`` (the retrieval judge's fragment store)."""
    return importlib.import_module("chromadb")


def chromadb_settings() -> type:
    """``chromadb.config.Settings``."""
    return importlib.import_module("chromadb.config").Settings


class Loaded:
    """What this process loaded once and keeps (model weights, backends, taggers), by key: :meth:`get` loads a
    missing key under a lock (units run in threads: each is loaded once), :meth:`reset` forgets them all."""

    def __init__(self):
        self.lock = threading.RLock()
        self.items: dict = {}

    def get(self, key, make: Callable[[], object]):
        """The object for ``key``, made by ``make()`` the first time."""
        with self.lock:
            if key not in self.items:
                self.items[key] = make()
            return self.items[key]

    def __contains__(self, key) -> bool:
        return key in self.items

    def reset(self) -> None:
        """Forget every loaded object (the next :meth:`get` loads again)."""
        with self.lock:
            self.items.clear()


M_MMAP_THRESHOLD, M_ARENA_MAX = -3, -8
"""glibc's ``mallopt`` parameters: the size from which a block is mapped alone (and unmapped when freed), and the
most malloc arenas a process keeps."""


def _libc():
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None
    except OSError:                     # not glibc (macOS, musl): nothing to tune
        return None


def lean_heap(arenas: int = 2, map_from: int = 16 << 20) -> bool:
    """From now on, let glibc's malloc keep at most ``arenas`` arenas in this process and give each block of
    ``map_from`` bytes or more its own mapping. Model calls from 16 threads otherwise spread the tensors they free
    over as many arenas, which keep them: perplexity on 100 passages peaked at 1.6-1.9 GB instead of the 1.25 GB
    its model's load needs, for about 10% more time (docs/performance.md, issue 51). False off glibc (nothing
    done)."""
    libc = _libc()
    return bool(libc and libc.mallopt(M_ARENA_MAX, arenas) and libc.mallopt(M_MMAP_THRESHOLD, map_from))


def give_back(*loaded: "Loaded") -> None:
    """Forget what each of ``loaded`` holds, collect the garbage and hand freed heap back to the system
    (glibc's ``malloc_trim``), so the next library loads into memory the last one left."""
    for registry in loaded:
        registry.reset()
    gc.collect()
    libc = _libc()
    if libc:
        libc.malloc_trim(0)


_OPEN: "weakref.WeakSet" = weakref.WeakSet()


def close_at_exit(obj) -> None:
    """Call ``obj.close()`` when the interpreter exits, before the modules' globals are torn down: llama-cpp-python
    frees a model through its module's functions, which are None by the time a leftover model is collected
    (``TypeError: 'NoneType' object is not callable`` in ``free_model``)."""
    if not _OPEN:
        atexit.register(_close_all)
    _OPEN.add(obj)


def _close_all() -> None:
    for obj in list(_OPEN):
        try:
            obj.close()
        except Exception:   # noqa: BLE001 - best effort at exit: nothing is left to report it to
            pass


def quiet_transformers() -> None:
    """Turn off transformers' own "Loading weights" progress bars (our bars say what is loading and why); call it
    just before a ``from_pretrained``. A no-op when transformers is not installed."""
    try:
        hf_logging = transformers_logging()
    except ImportError:
        return
    hf_logging.disable_progress_bar()
