"""Retrieval and ChatEval judges with the real SmolLM2-135M, real ChromaDB and MiniLM embeddings."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_retrieval_and_chateval_on_macgyver(tmp_path):
    from creval.domains import get_domain
    from creval.judges import human, run_judge
    from creval.models.registry import load_model

    model = load_model("smollm2-135m")
    crits = get_domain("macgyver").criteria
    pairs = human.sample_pairs(3, seed=0)
    assert len(pairs) == 3
    totals, rows_by = {}, {}
    for name in ("retrieval", "chateval"):
        st = run_judge(name, model, pairs, crits, tmp_path / name, progress=False, word_limit=30, retries=1)
        rows = st.read("verdicts")
        assert {(r["pair_id"], r["criterion"]) for r in rows} == {(p["pair_id"], c.name) for p in pairs for c in crits}
        for r in rows:
            assert (r["verdict"] is None) == bool(r["unparsed"])
            assert r["input_tokens"] > 0 and r["calls"] > 0
        assert len(st.read("transcripts")) == 9
        totals[name] = sum(r["input_tokens"] + r["output_tokens"] for r in rows)
        rows_by[name] = st.read("transcripts")
    assert (tmp_path / "retrieval" / "fragments").exists()
    # every retrieval discussion turn saw at most k=5 retrieved fragments; both judges' token counts are real
    for t in (x for row in rows_by["retrieval"] for x in row["transcript"]):
        if t["phase"] == "discussion":
            assert len(t.get("retrieved_ids") or []) <= 5
    assert totals["retrieval"] > 0 and totals["chateval"] > 0
    # The paper's ~37% comes from long ChatEval histories (150-word GPT-4o turns). With 30-word turns of a
    # 135M model the histories stay short, so the ratio is reported (the chapter shows it), not asserted here.
    print(f"retrieval/chateval tokens: {totals['retrieval'] / totals['chateval']:.2f}")
