"""The heavy optional libraries, each loaded lazily in this one place (importing creval never loads them): a
module function per library returns the imported module. A missing library raises ``ImportError`` as usual;
the registry's install hint (:func:`creval.models.registry.load_backend`) names the extra to install."""
from __future__ import annotations

import atexit
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
