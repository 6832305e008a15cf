"""LLM judges of convergent creativity (paper sec. 4, app. D, M, N).

- :class:`~creval.judges.retrieval.RetrievalJudge` ("retrieval"): the paper's retrieval-based discussion;
- :class:`~creval.judges.chateval.ChatEvalJudge` ("chateval"): one-by-one discussion with full history;
- :class:`~creval.judges.single.SingleJudge` ("zero-shot", "few-shot", "cot");
- :mod:`~creval.judges.registry` the judges by name and their parameters (:func:`make_judge`, :func:`judge_settings`);
- :class:`~creval.judges.base.Judgement` one record per item and criterion (yes/no or a scale value);
- :func:`run_judge` judges pairs through the unit runner (:mod:`creval.core.units`: one resumable unit per
  pair) and writes ``verdicts.jsonl`` / ``transcripts.jsonl`` / manifest;
- :mod:`~creval.datasets.macgyver` MacGyver human labels (metrics: :mod:`~creval.measures.stats`);
  :mod:`~creval.studies.convergent.report` chapter tables.
"""
from creval.judges.base import Judge, Judgement, Turn
from creval.judges.registry import JUDGES, judge_names, judge_settings, make_judge
from creval.judges.runner import pair_of, run_judge

__all__ = ["Judge", "Judgement", "Turn", "JUDGES", "judge_names", "judge_settings", "make_judge", "pair_of",
           "run_judge"]
