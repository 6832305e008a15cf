"""LLM judges of convergent creativity (paper sec. 4, app. D, M, N).

- :class:`~creval.judges.retrieval.RetrievalJudge` ("retrieval"): the paper's retrieval-based discussion;
- :class:`~creval.judges.chateval.ChatEvalJudge` ("chateval"): one-by-one discussion with full history;
- :class:`~creval.judges.single.SingleJudge` ("zero-shot", "few-shot", "cot");
- :func:`run_judge` writes ``verdicts.jsonl`` / ``transcripts.jsonl`` / manifest (resumable);
- :mod:`~creval.datasets.judge_labels` MacGyver human labels and metrics; :mod:`~creval.studies.convergent.report` chapter tables.
"""
from creval.judges.base import Judge, Turn, Verdict
from creval.judges.runner import JUDGES, make_judge, pair_of, run_judge

__all__ = ["Judge", "Turn", "Verdict", "JUDGES", "make_judge", "pair_of", "run_judge"]
