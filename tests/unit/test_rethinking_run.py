"""Chapter 06's run with a fake model on the bundled samples: every table the report reads is written, a run
whose model fails keeps every other unit and the next run does only the failed ones (no text scored twice,
no row lost), and a finished run is read back without any call."""
import json
import math
from types import SimpleNamespace

import pytest

from creval.studies.rethinking import STUDY, report, run
from creval.studies.rethinking.config import RethinkingConfig


class FakeModel:
    """Log-likelihood 1 nat per word; the rubric's label log-probs favour 2; 'Yes' with P = 0.3 to the twist."""
    logprob_kind = "raw"

    def __init__(self, name, fail_after=None):
        self.name, self.fail_after, self.ll_texts, self.chats = name, fail_after, [], 0
        self.spec = SimpleNamespace(identity=lambda: {"name": name, "backend": "fake"})

    def loglikelihood_many(self, items, tags=None):
        if self.fail_after is not None and len(self.ll_texts) >= self.fail_after:
            raise KeyboardInterrupt("the machine went down")
        self.ll_texts += [t for t, _ in items]
        return [SimpleNamespace(sum_logprob=-float(len(t.split())), n_tokens=len(t.split()), n_bytes=len(t.encode()),
                                context_tokens=4 if c else 0, model=self.name, quantisation="", windows=1)
                for t, c in items]

    def chat_many(self, convs, temperature=0.0, max_tokens=256, **kw):
        self.chats += 1
        return [SimpleNamespace(text="an analysis") for _ in convs]

    def sample(self, messages, n, temperature=1.0, max_tokens=64, seed=0, **kw):
        return [SimpleNamespace(text=f"analysis {i}") for i in range(n)]

    def choice_logprobs_many(self, items, tags=None):
        out = []
        for _, choices in items:
            if list(choices) == ["A", "B"]:        # the novelty judge: always the answer shown first
                out.append(SimpleNamespace(logprobs={"A": math.log(0.6), "B": math.log(0.4)}))
            elif list(choices) == ["Yes", "No"]:
                out.append(SimpleNamespace(logprobs={"Yes": math.log(0.3), "No": math.log(0.7)}))
            else:
                out.append(SimpleNamespace(logprobs={c: 0.0 if ": 2]]" in c else -5.0 for c in choices}))
        return out


@pytest.fixture
def samples_only(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    for v in ("CREVAL_MACGYVER_DIR", "CREVAL_TTCW_DIR", "CREVAL_AUT_DIR", "CREVAL_MSRP_DIR", "CREVAL_LAMP_DIR",
              "CREVAL_CONFEDERACY_DIR"):
        monkeypatch.delenv(v, raising=False)
    return tmp_path


def unit_rows(path) -> dict:
    """``{table: rows}`` of the finished units in a runner's file."""
    out: dict = {}
    for line in path.read_text().splitlines():
        for table, rows in json.loads(line)["tables"].items():
            out.setdefault(table, []).extend(rows)
    return out


def cfg_for(root) -> RethinkingConfig:
    return RethinkingConfig(run_root=str(root / "runs"), model="fake-a", models=("fake-b",), judge_model="fake-j",
                            n_boot=20, rethink_ps_per_class=3, rethink_human_llm_problems=2, rethink_ci_sweep_max=8,
                            rethink_template_n_sweep=(4, 5), rethink_ttcw_stories=4, rethink_aut_ratings=6,
                            rethink_paraphrase_pairs=2, rethink_judge_items=1, rethink_ttcw_judge_stories=1,
                            rethink_judge_tokens=8, rethink_twist_items=2, rethink_rerun_items=1, rethink_reruns=2,
                            rethink_ppl_items=2, rethink_ppl_max_words=30, rethink_lamp_model_instructions=2,
                            rethink_confed_ppl_per_author=1)


def test_run_writes_every_table_and_resumes(samples_only, monkeypatch):
    cfg = cfg_for(samples_only)
    assert cfg.identity()["data"] == {"macgyver": "sample", "ttcw": "sample", "aut": "sample", "msrp": "missing",
                                      "lamp": "sample", "confederacy": "sample"}
    models = {n: FakeModel(n) for n in ("fake-a", "fake-b", "fake-j")}
    models["fake-a"].fail_after = 4              # dies after the first chunk: two ps texts, plain and given the problem
    monkeypatch.setattr(run, "load_model", lambda name, cache=None: models[name])
    monkeypatch.setattr(run, "PPL_CHUNK", 2)
    monkeypatch.setattr(run.widths, "width", lambda *names: 1)
    with pytest.raises(run.units.UnitsFailed):
        run.run(cfg)
    kept = unit_rows(cfg.run_dir / "units" / "calls.jsonl")
    first = [r["id"] for r in kept.get("perplexity", []) if r["model"] == "fake-a"]
    assert len(first) == 2 and not run.contract.is_finished(cfg)      # the units after the first chunk failed alone
    assert len(kept["judge"]) == 3 and not (cfg.run_dir / "judge.jsonl").exists()
    assert (cfg.run_dir / "units" / "texts.jsonl").exists()

    models["fake-a"] = FakeModel("fake-a")       # the machine is back
    run.run(cfg)
    assert run.contract.is_finished(cfg)
    again = models["fake-a"].ll_texts
    recs = STUDY.records(cfg)
    ppl = recs["perplexity"]
    done_a = ppl[ppl["model"] == "fake-a"]
    assert not done_a.duplicated(["set", "id"]).any() and first == list(done_a["id"][:2])
    with_ctx = int(done_a["set"].isin(run.WITH_CONTEXT).sum())
    assert len(again) == 2 * with_ctx + (len(done_a) - with_ctx) - 4      # the first chunk was not asked again
    assert models["fake-j"].chats == 2           # the judged sets' analyses were asked once, in the first run
    assert set(ppl["model"]) == {"fake-a", "fake-b"}
    assert ppl[ppl["set"] == "ps"]["ppl"].round(6).eq(round(math.e, 6)).all()    # 1 nat per word
    assert recs.manifest["models"].keys() == {"fake-a", "fake-b", "fake-j"}

    sets = recs["sets"].set_index("set")
    assert not sets.loc["ps", "labelled"] and sets.loc["msrp", "why"].startswith("MSRP not available here")
    ps = recs["measures_ps"]
    assert len(ps) == 6 and ps["ci"].between(0, 1).all() and {"uniq_2", "uniq_8", "tpt", "has_template"} <= set(ps)
    for s, kinds in (("lamp", {"raw", "writer_edit", "ai_edit"}), ("confed", {"person", "model"})):
        m = recs[f"measures_{s}"]             # the two sets of human judgment: every text, model-free measures
        assert set(m["kind"]) == kinds and m["ci"].between(0, 1).all() and {"mattr", "distinct_2"} <= set(m)
        assert not sets.loc[s, "labelled"]
    lamp_ppl = set(done_a[done_a["set"] == "lamp"]["id"])     # perplexity: every version of 2 instructions
    lamp_m = recs["measures_lamp"]
    assert len(lamp_ppl) == 6 and lamp_m[lamp_m["id"].isin(lamp_ppl)]["group"].nunique() == 2
    confed_m = recs["measures_confed"]                        # and the first story of each Confederacy author
    assert set(done_a[done_a["set"] == "confed"]["id"]) == set(confed_m.groupby("group")["id"].first())
    lj = recs["lamp_judge"]                                   # the judge: each edit of those items, both orders
    assert len(lj) == 4 and set(lj["pair"]) == {"writer_edit", "ai_edit"} and set(lj["group"]) == \
        set(lamp_m[lamp_m["id"].isin(lamp_ppl)]["group"])
    assert (lj["pref"] == 0.5).all() and lj["edit_shown_first"].all() and not lj["edit_shown_second"].any()
    assert {"over_raw", "n_writers"} <= set(recs["measures_lamp"])
    assert {"total", "creativity_r1", "creativity_r2", "rating_group"} <= set(recs["measures_confed"])
    j = recs["judge"]
    assert set(j["set"]) == {"ps", "ttcw"} and (j["judge"] > 1.9).all() and (j["judge"] < 2.1).all()
    assert recs["twist"]["contradiction"].all() and len(recs["rerun"]) == 2
    tpl = recs["templates"]
    assert set(tpl["mode"]) == {"sequence", "compat"} and set(tpl["n"]) == {4, 5}
    ex = recs.rows("example")[0]
    assert ex["id"] in set(j["id"]) and ex["tokens"] and ex["reference"]["reference"] == "macgyver-pool"

    # the report reads the records (checks skipped on samples, each with its reason)
    checks = report.table_checks(recs)
    assert checks["note"].str.startswith("skipped").all() and len(checks) == 4
    assert report.table_example(recs)["value"].iloc[-1] != "not judged"

    # a finished run is read back without a model
    monkeypatch.setattr(run, "load_model", lambda *a, **k: pytest.fail("a finished run loaded a model"))
    assert STUDY.records(cfg).root == cfg.run_dir
