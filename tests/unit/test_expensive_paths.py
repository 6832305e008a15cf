"""Every expensive path reaches a choke point that ``forbid_expensive_calls`` patches (tests/forbid.py): under it,
an embedding of new text, an entailment of a new pair, a sandbox run, the NeoCoder judge, a model call, a model
load and a cache lookup each raise, even when the caller holds the function object it got before the patch."""
import ast
from pathlib import Path

import pytest

from creval import sandbox
from creval.core import cache as callcache
from creval.core.cache import CallCache
from creval.core.errors import CrevalError
from creval.core.paths import REPO
from creval.datasets import neocoder as neocoder_data
from creval.measures.neocoder import judges as nc
from creval.measures.nli.backends import LLMNLI, CosineNLI, CrossEncoderNLI
from creval.measures.techniques import StaticDetector
from creval.models import heavy, registry
from creval.models.base import BackendBase
from creval.models.cached import Model
from creval.models.embeddings import Embedder
from creval.models.records import Sample
from creval.models.spec import ModelSpec
from creval.sandbox import batches
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.denial import judged_round
from forbid import CHOKE_POINTS, Forbidden, forbid_expensive_calls

CODE = "def solve():\n    print(1)\nsolve()\n"


class Backend(BackendBase):
    """A backend that must never be reached under the patch (it would answer)."""
    LOGPROB_KIND = "raw"

    def __init__(self):
        self.spec = ModelSpec(name="never", backend="llamacpp", model="never")
        self.asked = 0

    def sample(self, req, indices):
        self.asked += 1
        return [Sample("x", (-1.0,)) for _ in indices]

    def count_tokens(self, text):
        return len(text.split())


@pytest.fixture
def forbidden(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "calls.sqlite"))
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    return forbid_expensive_calls(monkeypatch)


@pytest.fixture
def problem(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    ps, _ = neocoder_data.load()
    return next(p for p in ps if not p.flags.single_test)


def test_every_choke_point_and_model_verb_is_patched(forbidden):
    assert len(forbidden) == len(CHOKE_POINTS) + 5
    assert "creval.core.cache.cached_batch" in forbidden and "Model.sample" in forbidden


def test_an_embedding_of_new_text_raises(forbidden):
    with pytest.raises(Forbidden, match="cached_batch"):
        Embedder().encode(["a sentence nobody embedded before"])


def test_an_entailment_of_a_new_pair_raises(forbidden):
    with pytest.raises(Forbidden, match="cached_batch"):
        CosineNLI().classify([("A lamp is on.", "A lamp is lit.")])
    with pytest.raises(Forbidden, match="cached_batch"):        # uncached: the embeddings are the cache call
        CosineNLI(use_cache=False).classify([("A lamp is on.", "A lamp is lit.")])
    with pytest.raises(Forbidden, match="cached_batch"):
        LLMNLI(Model(Backend(), CallCache(":memory:"))).classify([("A dog runs.", "An animal moves.")])
    with pytest.raises(CrevalError) as e:                       # a cross-encoder cannot even load
        CrossEncoderNLI("/nonexistent/nli-model")
    assert isinstance(e.value.__cause__, Forbidden) and "heavy.transformers" in str(e.value.__cause__)


def test_a_sandbox_run_raises_through_every_entry(forbidden):
    unit = sandbox.program_unit("print(1)", [""])
    for run_units in (sandbox.run_units, batches.run_units):
        with pytest.raises(Forbidden):
            run_units([unit])
    with pytest.raises(Forbidden, match="launch"):
        batches.launch([unit])


def test_the_sandbox_batch_reaches_the_cache_through_its_module(monkeypatch, tmp_path):
    real = batches.run_units                    # the function object, held before the patch
    forbid_expensive_calls(monkeypatch)
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    with pytest.raises(Forbidden, match="cached_batch"):
        real([sandbox.program_unit("print(1)", [""])])


def test_the_neocoder_judge_raises_even_held_before_the_patch(problem, monkeypatch, tmp_path):
    real = nc.judge_codes
    forbid_expensive_calls(monkeypatch)
    monkeypatch.setenv("CREVAL_CACHE", str(tmp_path / "c.sqlite"))
    with pytest.raises(Forbidden, match="judge_codes"):
        nc.judge_codes([(problem, CODE)])
    with pytest.raises(Forbidden, match="sandbox.run_units"):       # inside, the sandbox through its module
        real([(problem, CODE)])
    with pytest.raises(Forbidden, match="judge_codes"):             # Algorithm 1's rounds reach the judge so
        judged_round(NeoCoderConfig(), problem, StaticDetector(), CODE, [])


def test_a_model_sample_and_a_model_load_raise(forbidden):
    b = Backend()
    with pytest.raises(Forbidden, match="Model.sample"):
        Model(b, CallCache(":memory:")).sample([{"role": "user", "content": "go"}], 2)
    assert b.asked == 0
    with pytest.raises(Forbidden, match="load_model"):
        registry.load_model("smollm2-135m")
    with pytest.raises(Forbidden, match="load_backend"):      # a model loaded before: its weights are not
        registry.LazyBackend(registry.get_spec("smollm2-135m")).count_tokens("x")


def test_a_cache_lookup_and_the_heavy_libraries_raise(forbidden):
    with pytest.raises(Forbidden):
        callcache.cached_batch("t", {}, ["x"], lambda s: {"s": s}, lambda items: items)
    for load in (heavy.torch, heavy.transformers, heavy.llama_cpp, heavy.sentence_transformers):
        with pytest.raises(Forbidden):
            load()


# a module-level ``from creval.models.registry import load_model`` is no hole: the model it returns can neither
# load its weights (``load_backend``) nor answer (the model verbs); a function-local import looks the name up when
# the function runs, after the patch
BINDABLE = {("creval.models.registry", "load_model")}


def bound_choke_points(path: Path) -> list[str]:
    """Module-level ``from <module> import <choke point>`` statements of ``path`` (a name bound at import escapes
    the patch)."""
    chokes = set(CHOKE_POINTS) - BINDABLE
    return [f"{path.name}:{node.lineno} binds {node.module}.{a.name}" for node in ast.parse(path.read_text()).body
            if isinstance(node, ast.ImportFrom) for a in node.names if (node.module, a.name) in chokes]


def test_no_module_binds_a_choke_point_at_import():
    """The model verbs are patched on the class, so ``models/cached.py`` may bind ``cached_batch``; the sandbox
    package re-exports ``run_units`` (patched there too)."""
    allowed = {"lib/creval/models/cached.py", "lib/creval/sandbox/__init__.py"}
    bad = [b for f in sorted((REPO / "lib" / "creval").rglob("*.py")) if str(f.relative_to(REPO)) not in allowed
           for b in bound_choke_points(f)]
    assert bad == []


def test_the_scan_sees_a_bound_choke_point(tmp_path):
    g = tmp_path / "m.py"
    g.write_text("from creval.core.cache import CallCache, cached_batch\nfrom creval import sandbox\n"
                 "from creval.models.registry import load_model\n\n\ndef f():\n"
                 "    from creval.measures.neocoder.judges import judge_codes\n")
    assert bound_choke_points(g) == ["m.py:1 binds creval.core.cache.cached_batch"]
    assert bound_choke_points(REPO / "lib" / "creval" / "sandbox" / "__init__.py") == [
        "__init__.py:36 binds creval.sandbox.batches.run_units"]
