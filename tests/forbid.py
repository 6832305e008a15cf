"""Every expensive call made to raise (the study contract: reports are pure). Shared by
``tests/integration/test_contract.py`` (a chapter's cells run under it) and ``tests/unit/test_expensive_paths.py``
(each expensive path is seen to reach one of these choke points).

The choke points are module attributes: a caller reaches them through the module (``callcache.cached_batch``,
``sandbox.run_units``, ``judges.judge_codes``, ``registry.load_model``), never through a name bound at import,
so patching the attribute here catches every path. Model calls are patched on the :class:`Model` class itself.
"""
import importlib


class Forbidden(AssertionError):
    """An expensive call where none may happen."""


# (module, attribute): every model load, backend load, cache lookup (hit or miss), sandbox batch and launch,
# NeoCoder judging, and each heavy neural library
CHOKE_POINTS = (
    ("creval.core.cache", "cached_batch"),
    ("creval.models.registry", "load_model"),
    ("creval.models.registry", "load_backend"),
    ("creval.sandbox", "run_units"),
    ("creval.sandbox.batches", "run_units"),
    ("creval.sandbox.batches", "launch"),
    ("creval.measures.neocoder.judges", "judge_codes"),
    ("creval.models.heavy", "torch"),
    ("creval.models.heavy", "transformers"),
    ("creval.models.heavy", "llama_cpp"),
    ("creval.models.heavy", "sentence_transformers"),
)
MODEL_VERBS = ("sample", "chat", "chat_many", "choice_logprobs", "loglikelihood")


def forbid_expensive_calls(monkeypatch) -> list[str]:
    """Patch every choke point (and every model verb) to raise :class:`Forbidden`; the names patched."""
    cached = importlib.import_module("creval.models.cached")
    done = []

    def boom(what):
        def raise_(*a, **k):
            raise Forbidden(f"an expensive call: {what}")
        return raise_
    for mod, attr in CHOKE_POINTS:
        monkeypatch.setattr(importlib.import_module(mod), attr, boom(f"{mod}.{attr}"))
        done.append(f"{mod}.{attr}")
    for name in MODEL_VERBS:
        monkeypatch.setattr(cached.Model, name, boom(f"Model.{name}"))
        done.append(f"Model.{name}")
    registry = importlib.import_module("creval.models.registry")
    monkeypatch.setattr(registry, "LOADED", registry.Loaded())   # weights loaded earlier are not at hand either
    return done
