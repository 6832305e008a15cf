"""Every registered backend keeps the one typed contract (:class:`creval.models.base.Backend`): a ``check`` of its
own, the flags callers read before anything is loaded (with their types), and the verbs."""
import inspect

import pytest

from creval.models.backends import BACKENDS
from creval.models.base import CONTRACT_FLAGS, Backend, BackendBase
from creval.models.registry import LazyBackend, backend_class_named, logprob_kind_of
from creval.models.spec import ModelSpec

VERBS = ("sample", "chat", "choice_logprobs", "loglikelihood", "count_tokens")


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_registered_backend_keeps_the_contract(name):
    cls = backend_class_named(name)
    assert issubclass(cls, BackendBase), f"{cls.__name__} does not inherit BackendBase"
    assert callable(getattr(cls, "check", None)), f"{cls.__name__} has no check (BackendBase gives none)"
    assert list(inspect.signature(cls.check).parameters) == ["spec"]
    for flag, ok in CONTRACT_FLAGS.items():
        assert ok(getattr(cls, flag)), f"{cls.__name__}.{flag} = {getattr(cls, flag)!r} breaks the contract"
    for verb in VERBS:
        assert callable(getattr(cls, verb, None)), f"{cls.__name__} lacks {verb}"
    spec = ModelSpec(name="m", backend=name, model="m")
    assert isinstance(logprob_kind_of(cls, spec), str)
    assert CONTRACT_FLAGS["CALL_LOCK"](LazyBackend(spec).CALL_LOCK)


def test_the_protocol_names_every_flag_and_the_base_gives_each_a_default():
    declared = Backend.__annotations__
    assert set(CONTRACT_FLAGS) <= set(declared) and callable(Backend.check)
    for flag, ok in CONTRACT_FLAGS.items():
        if flag != "LOGPROB_KIND":      # each backend says what its log-probs are: no default
            assert ok(getattr(BackendBase, flag))

