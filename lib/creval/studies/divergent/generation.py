"""Step-wise generation with semantic entropy at every step (paper sections 3.2 and 5, appendix F).

Procedure for one problem (:func:`solve`):

1. **Budget.** One chat call (temperature 0, at most ``max_steps * max_step_tokens + 32`` tokens) writes a
   complete answer. Its length fixes the step budget:
   for step domains the number of lines that look like steps ("Step 3: ...", "3. ...", "- ..."; if none,
   the non-empty lines), for the sentence domain (BookMIA) the number of sentences; the count is
   clamped to ``[1, max_steps]``.
2. **Steps.** For step ``k = 1..budget``: one ``model.sample`` call draws ``n`` candidates for the *next*
   unit only (the prompt shows the chosen units so far), one ``cluster`` call groups them by
   bidirectional entailment, and the semantic, naive and discrete entropies are computed from the
   samples' mean token log-probs and cluster ids. The candidate with the highest mean log-prob among
   those that did not vote STOP is appended (greedy selection, as in the paper).
3. **STOP protocol.** From the second step on, the prompt says: if the solution is complete, reply with
   the single word ``STOP``. A sample votes STOP when its cleaned text is empty or begins with the
   word STOP. When more than half of the ``n`` samples vote STOP the problem ends there; that step's
   row is still written (``is_stop = true``, ``chosen_index = null``) but it is not part of the solution
   and is left out of the solution's entropy summary. The loop also ends when the budget is reached.
4. **Cleaning.** Sampling stops at a newline (and, for sentences, at the end of a sentence), so the
   log-probs cover exactly the generated text. The cleaned text used for clustering and the solution
   drops a leading "Step 3:", "3.", "-" or "*" marker, keeps only the first line (for sentences, only the
   first sentence, closed with a period when unterminated) and collapses whitespace. All STOP votes are
   clustered as the literal text ``STOP`` (they mean the same thing).
5. **Duplicate filter (app. F).** A solution in which two consecutive chosen units are identical (after
   lower-casing and collapsing whitespace) is flagged ``duplicate_filtered = true``: tables report results
   with those solutions removed (filtered) and with them kept (unfiltered).

The rows it returns are :class:`~creval.studies.divergent.records.StepRecord` and
:class:`~creval.studies.divergent.records.ProblemRecord` (their fields are the one schema of the tables).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from creval.domains import STOP, Domain, Problem
from creval.domains.steps import (
    clean_step,
    count_units,
    has_consecutive_duplicates,
    is_stop_vote,
    join_solution,
    step_messages,
)
from creval.measures import entropy
from creval.measures.clustering import cluster
from creval.studies.divergent.records import ProblemRecord, StepRecord

__all__ = ["solve", "SolveResult"]

@dataclass
class SolveResult:
    steps: list[StepRecord]     # rows of steps.jsonl
    problem: ProblemRecord      # the row of problems.jsonl


def _summary(values: list[float]) -> tuple[float, float, float]:
    if not values:
        return math.nan, math.nan, math.nan
    return sum(values) / len(values), min(values), max(values)


def solve(model, domain: Domain, problem: Problem, *, nli, nli_name: str, n: int = 10, temperature: float = 1.0,
          top_p: float = 0.9, max_steps: int = 5, max_step_tokens: int = 48, strict: bool = True, seed: int = 0,
          first_answer_tokens: int | None = None, cluster_fn: Callable | None = None) -> SolveResult:
    """Solve ``problem`` unit by unit, measuring semantic entropy at each unit (see module docstring).

    ``nli`` is a loaded entailment backend passed to ``cluster_fn`` (default
    :func:`creval.measures.clustering.cluster`); ``nli_name`` is what the records store. The budget answer is
    limited to ``first_answer_tokens`` (default ``max_steps * max_step_tokens + 32``: enough to show
    ``max_steps`` steps, and a longer answer could not raise the clamped budget anyway).
    """
    cluster_fn = cluster if cluster_fn is None else cluster_fn
    if n < 1:
        raise ValueError("n must be at least 1")
    unit = domain.unit
    system = {"role": "system", "content": domain.system_prompt}

    first_msgs = [system, {"role": "user", "content": domain.render(domain.first_prompt, problem,
                                                                   max_steps=max_steps)}]
    if first_answer_tokens is None:
        first_answer_tokens = max_steps * max_step_tokens + 32
    first = model.chat(first_msgs, temperature=0.0, max_tokens=first_answer_tokens, seed=seed).text
    budget = min(max(count_units(first, unit), 1), max_steps)

    stop_seqs = ("\n", ". ", "! ", "? ") if unit == "sentence" else ("\n",)
    chosen: list[str] = []
    rows: list[dict] = []
    stopped_by = "budget"
    for k in range(budget):
        samples = model.sample(step_messages(domain, problem, chosen, max_steps), n, temperature=temperature,
                               top_p=top_p, max_tokens=max_step_tokens, stop=stop_seqs, seed=seed)
        cleans = [clean_step(s.text, unit) for s in samples]
        votes = [is_stop_vote(c) for c in cleans]
        texts = [STOP if v else c for c, v in zip(cleans, votes)]
        ids = [int(i) for i in cluster_fn(texts, nli, strict=strict)]
        lps = [s.mean_logprob for s in samples]
        n_stop = sum(votes)
        is_stop = k > 0 and n_stop * 2 > n
        candidates = [i for i, v in enumerate(votes) if not v]
        pick = None if (is_stop or not candidates) else max(candidates, key=lambda i: (lps[i], -i))
        rows.append(StepRecord(
            problem_id=problem.problem_id, domain=domain.name, model=model.name, step_index=k,
            samples=[{**s.to_dict(), "clean": c, "stop_vote": v} for s, c, v in zip(samples, cleans, votes)],
            cluster_ids=ids,
            semantic_entropy=entropy.semantic_entropy(lps, ids),
            naive_entropy=entropy.naive_entropy(lps),
            discrete_entropy=entropy.discrete_entropy(ids),
            n_clusters=len(set(ids)), chosen_index=pick, stop_votes=n_stop, is_stop=bool(is_stop),
            temperature=temperature, top_p=top_p, n=n, nli=nli_name, strict=strict,
            logprob_kind=model.logprob_kind, seed=seed))
        if is_stop:
            stopped_by = "vote"
            break
        if pick is None:
            stopped_by = "no_candidate"
            break
        chosen.append(texts[pick])

    used = [r for r in rows if r.chosen_index is not None]
    mean_se, min_se, max_se = _summary([r.semantic_entropy for r in used])
    mean = lambda key: _summary([getattr(r, key) for r in used])[0]  # noqa: E731
    prow = ProblemRecord(
        problem_id=problem.problem_id, domain=domain.name, model=model.name,
        problem_text=problem.text, solution=join_solution(chosen, unit), steps=chosen,
        n_steps=len(chosen), budget=budget, first_answer=first, stopped_by=stopped_by,
        mean_semantic_entropy=mean_se, min_semantic_entropy=min_se, max_semantic_entropy=max_se,
        mean_naive_entropy=mean("naive_entropy"), mean_discrete_entropy=mean("discrete_entropy"),
        mean_n_clusters=mean("n_clusters"), duplicate_filtered=has_consecutive_duplicates(chosen),
        temperature=temperature, n=n, nli=nli_name)
    return SolveResult(rows, prow)
