"""Retrieval and ChatEval judges with the real SmolLM2-135M, real ChromaDB and MiniLM embeddings,
at the paper's settings (150-word turns, k=5, j=4, l=8, T=0.5, at most two rounds)."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_retrieval_and_chateval_on_macgyver(tmp_path):
    from creval.datasets import macgyver as human
    from creval.domains import get_domain
    from creval.judges import run_judge
    from creval.models.registry import load_model

    model = load_model("smollm2-135m")
    crits = get_domain("macgyver").criteria[:1]
    pairs = human.sample_pairs(1, seed=0)          # 1 pair x 1 criterion at the paper's turn length: CI's time budget
    assert len(pairs) == 1
    totals, verdicts, transcripts = {}, {}, {}
    for name in ("retrieval", "chateval"):
        st = run_judge(name, model, pairs, crits, tmp_path / name, progress=False,
                       word_limit=150, retries=1, verdict_via="text+logprobs")
        rows = st.read("verdicts")
        assert {(r["pair_id"], r["criterion"]) for r in rows} == {(p["pair_id"], c.name) for p in pairs for c in crits}
        for r in rows:
            assert (r["verdict"] is None) == bool(r["unparsed"])
            assert r["input_tokens"] > 0 and r["calls"] > 0
        assert len(st.read("transcripts")) == len(pairs) * len(crits) == 1
        totals[name] = sum(r["input_tokens"] + r["output_tokens"] for r in rows)
        verdicts[name], transcripts[name] = rows, st.read("transcripts")
    assert (tmp_path / "retrieval" / "fragments").exists()

    # retrieval: every discussion turn saw at most k=5 fragments; certainties are read from log-probs in
    # [0, 1]; the panel stopped after round 1 exactly when the mean certainty reached T
    for t in (x for row in transcripts["retrieval"] for x in row["transcript"]):
        if t["phase"] == "discussion":
            assert len(t.get("retrieved_ids") or []) <= 5
        if t["phase"] == "confidence":
            assert t["parsed"]["path"] == "logprobs" and 0.0 <= t["parsed"]["confidence"] <= 1.0
    for r in verdicts["retrieval"]:
        first = [t["parsed"]["confidence"] for row in transcripts["retrieval"] if row["pair_id"] == r["pair_id"]
                 and row["criterion"] == r["criterion"] for t in row["transcript"]
                 if t["phase"] == "confidence" and t["round"] == 1]
        assert len(first) == 3
        assert (r["rounds"] == 1) == (sum(first) / 3 >= 0.5)

    # chateval resends the whole history: each discussion turn's prompt is longer than the one before
    for row in transcripts["chateval"]:
        ins = [t["input_tokens"] for t in row["transcript"] if t["phase"] == "discussion"]
        assert len(ins) == 6 and all(b > a for a, b in zip(ins, ins[1:]))

    share = totals["retrieval"] / totals["chateval"]
    print(f"retrieval/chateval tokens: {share:.2f}")
    # Measured 0.44 here with SmolLM2 (the paper: 0.365 with GPT-4o); the bound guards against regressions
    # in the mechanism (bounded prompts, early exit), not a tuned number.
    assert share < 0.6
