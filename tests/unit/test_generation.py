"""Step-wise generation with a scripted fake model (fakes are allowed in unit tests only)."""
import math

import pandas as pd
import pytest

from creval.core.errors import CrevalError
from creval.domains import get_domain
from creval.domains.steps import clean_step, count_units, has_consecutive_duplicates, is_stop_vote
from creval.models.records import Completion, Sample
from creval.models.spec import ModelSpec
from creval.studies.divergent.config import DivergentConfig
from creval.studies.divergent.generation import solve
from creval.studies.divergent.run import solve_domain


class FakeModel:
    """Answers the budget chat with ``first`` and sample call number k with ``script[k]`` (text, mean lp)."""
    logprob_kind = "raw"

    def __init__(self, first, script, name="fake"):
        self.first, self.script, self.name = first, script, name
        self.spec = ModelSpec(name=name, backend="llamacpp")
        self.sample_calls, self.chat_calls, self.prompts = 0, 0, []

    def chat(self, messages, **kw):
        self.chat_calls += 1
        self.k = 0
        return Completion(self.first, 10, 10)

    def sample(self, messages, n, **kw):
        self.sample_calls += 1
        self.prompts.append(messages[-1]["content"])
        rows = self.script[min(self.k, len(self.script) - 1)]
        self.k += 1
        assert len(rows) == n
        return [Sample(t, (lp, lp)) for t, lp in rows]


def exact_cluster(texts, nli, strict=True, compare="first"):
    seen = {}
    return [seen.setdefault(t, len(seen)) for t in texts]


def H(lps, ids):   # independent few-line semantic entropy
    mass = {}
    for lp, c in zip(lps, ids):
        mass[c] = mass.get(c, 0.0) + math.exp(lp)
    tot = sum(mass.values())
    return -sum(m / tot * math.log(m / tot) for m in mass.values())


SCRIPT = [
    [("Step 1: Bend the clip.", -1.0), ("Bend the clip.", -1.0), ("Use floss.", -2.0), ("Use floss.\nmore", -2.0)],
    [("STOP", -0.1), ("Hook the zip.", -0.5), ("", -0.2), ("Hook the zip.", -0.7)],
    [("STOP", -0.1), ("STOP.", -0.3), ("stop", -0.2), ("Pull it.", -0.4)],
]


def test_cleaning_rules():
    assert clean_step("Step 3: Tie the rope.\nStep 4: more") == "Tie the rope."
    assert clean_step("\n  2. Cut   the cup ") == "Cut the cup"
    assert clean_step("- Step 2: use the pen") == "use the pen"
    assert clean_step("She ran home. Then it rained.", "sentence") == "She ran home."
    assert clean_step("she waited", "sentence") == "she waited."
    assert [is_stop_vote(x) for x in ["", "STOP", "Stop.", "stopper is used", "Use STOP sign"]] == \
        [True, True, True, False, False]
    assert count_units("Step 1: a\nStep 2: b\nnote\n3. c", "step") == 3
    assert count_units("just one paragraph\nand another", "step") == 2
    assert count_units("One. Two! Three?", "sentence") == 3
    assert has_consecutive_duplicates(["a b", "A  b"]) and not has_consecutive_duplicates(["a", "b", "a"])


def test_solve_steps_entropy_stop_and_choice():
    m = FakeModel("Step 1: a\nStep 2: b\nStep 3: c\nStep 4: d\nStep 5: e\nStep 6: f", SCRIPT)
    res = solve(m, get_domain("macgyver"), get_domain("macgyver").load(limit=1)[0], nli=None, nli_name="exact",
                n=4, max_steps=5, cluster_fn=exact_cluster)
    assert m.chat_calls == 1 and m.sample_calls == 3          # one sample call per step
    s0, s1, s2 = [s.to_dict() for s in res.steps]
    assert s0["cluster_ids"] == [0, 0, 1, 1] and s0["chosen_index"] == 0 and s0["stop_votes"] == 0
    assert s0["semantic_entropy"] == pytest.approx(0.5822031088882179, abs=1e-12)
    assert s0["discrete_entropy"] == pytest.approx(math.log(2), abs=1e-12)
    assert s0["naive_entropy"] == pytest.approx(H([-1, -1, -2, -2], [0, 1, 2, 3]), abs=1e-12)
    assert s1["stop_votes"] == 2 and not s1["is_stop"] and s1["chosen_index"] == 1   # a tie is not a majority
    assert s1["cluster_ids"] == [0, 1, 0, 1]
    assert s2["stop_votes"] == 3 and s2["is_stop"] and s2["chosen_index"] is None
    assert "STOP" not in m.prompts[0] and "STOP" in m.prompts[1] and "Step 1: Bend the clip." in m.prompts[1]
    p = res.problem.to_dict()
    assert p["steps"] == ["Bend the clip.", "Hook the zip."] and p["n_steps"] == 2 and p["budget"] == 5
    assert p["solution"] == "Step 1: Bend the clip.\nStep 2: Hook the zip."
    assert p["stopped_by"] == "vote" and p["duplicate_filtered"] is False
    expect = [H([-1, -1, -2, -2], [0, 0, 1, 1]), H([-0.1, -0.5, -0.2, -0.7], [0, 1, 0, 1])]
    assert p["mean_semantic_entropy"] == pytest.approx(sum(expect) / 2, abs=1e-12)
    assert p["max_semantic_entropy"] == pytest.approx(max(expect))
    assert p["min_semantic_entropy"] == pytest.approx(min(expect))
    assert all(len(s["samples"]) == 4 and s["samples"][0]["n_tokens"] == 2 for s in [r.to_dict() for r in res.steps])
    # typed records round-trip through their JSONL rows (a row's extra keys, e.g. ``run``, are ignored)
    from creval.studies.divergent.records import ProblemRecord, StepRecord
    assert StepRecord.from_dict({**s1, "run": "."}) == res.steps[1]
    assert ProblemRecord.from_dict(p) == res.problem and ProblemRecord.from_dict(p).to_dict() == p


def test_budget_clamp_and_duplicates():
    same = [[("Wait here.", -1.0), ("Wait here.", -1.5)]]
    m = FakeModel("a single line answer", same)
    res = solve(m, get_domain("macgyver"), get_domain("macgyver").load(limit=1)[0], nli=None, nli_name="x",
                n=2, max_steps=5, cluster_fn=exact_cluster)
    p = res.problem.to_dict()
    assert p["budget"] == 1 and p["stopped_by"] == "budget" and len(res.steps) == 1
    assert res.steps[0].to_dict()["semantic_entropy"] == 0.0
    m = FakeModel("Step 1: x\nStep 2: y\nStep 3: z", same)
    res = solve(m, get_domain("macgyver"), get_domain("macgyver").load(limit=1)[0], nli=None, nli_name="x",
                n=2, max_steps=2, cluster_fn=exact_cluster)
    assert res.problem.to_dict()["budget"] == 2 and res.problem.to_dict()["steps"] == ["Wait here.", "Wait here."]
    assert res.problem.to_dict()["duplicate_filtered"] is True


def test_bookmia_sentences():
    script = [[("He rowed closer. The sea was calm.", -0.5), ("The boat came near", -0.9)]]
    m = FakeModel("One. Two. Three.", script)
    dom = get_domain("bookmia")
    prob = dom.load(limit=1)[0]
    res = solve(m, dom, prob, nli=None, nli_name="x", n=2, max_steps=2, cluster_fn=exact_cluster)
    assert res.problem.to_dict()["steps"] == ["He rowed closer.", "He rowed closer."]
    p = res.problem.to_dict()
    assert p["solution"] == "He rowed closer. He rowed closer." and p["duplicate_filtered"]
    assert prob.fields["ending"] in m.prompts[1] and "Story so far: He rowed closer." in m.prompts[1]


@pytest.fixture
def fake_stack(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CREVAL_MACGYVER_DIR", raising=False)
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")   # the bundled sample, not ../shared
    models = []

    def load_model(name):
        models.append(FakeModel("Step 1: a\nStep 2: b\nStep 3: c", SCRIPT, name=name))
        return models[-1]
    import creval.measures.nli.backends
    import creval.models.registry
    monkeypatch.setattr(creval.models.registry, "load_model", load_model)
    monkeypatch.setattr(creval.measures.nli.backends, "load_nli", lambda name: object())
    import creval.studies.divergent.generation
    monkeypatch.setattr(creval.studies.divergent.generation, "cluster", exact_cluster)
    return models


def test_solve_domain_records_and_resume(fake_stack, tmp_path):
    out = tmp_path / "run"
    cfg = DivergentConfig(divergent_nli="exact")
    rows = solve_domain(cfg, "smollm2-135m", "macgyver", out, n=4, limit=2, progress=False)
    steps, probs = pd.DataFrame(rows["steps"]), pd.DataFrame(rows["problems"])
    ids = [p.problem_id for p in get_domain("macgyver").load(limit=3)]
    assert len(fake_stack) == 2 and (out / "units" / "solve.jsonl").exists()        # one unit per problem
    assert probs["problem_id"].tolist() == ids[:2] and len(steps) == 6 and set(steps["problem_id"]) == set(ids[:2])
    for _, r in steps.iterrows():
        lps = [s["mean_logprob"] for s in r["samples"]]
        assert r["semantic_entropy"] == pytest.approx(H(lps, r["cluster_ids"]), abs=1e-9)
    # a larger limit solves only the new problem; the finished units are read back
    again = solve_domain(cfg, "smollm2-135m", "macgyver", out, n=4, limit=3, progress=False)
    assert len(fake_stack) == 3 and fake_stack[-1].sample_calls == 3
    assert [p["problem_id"] for p in again["problems"]] == ids and again["steps"][:6] == rows["steps"]
    with pytest.raises(CrevalError, match="bad sizes"):
        solve_domain(cfg, "smollm2-135m", "macgyver", out, n=0, progress=False)


def test_run_command_refuses_bad_parameters_in_one_line(tmp_path, capsys):
    from creval.cli import main
    assert main(["run", "divergent", "-p", "divergent_domains=[chess]", "-p", f"run_root={tmp_path}"]) == 2
    assert "chess" in capsys.readouterr().err
    assert main(["run", "neocoder", "-p", "neocoder_model=x"]) == 2
    assert "use model" in capsys.readouterr().err
