"""Single-call baselines (paper app. N, reworded): zero-shot, few-shot and few-shot with chain of thought.

Each asks once per criterion for ``[[YES]]`` / ``[[NO]]`` and the probability ``([0.x])`` that the
criterion is met (with bounded format retries, see :mod:`creval.judges.parsing`). ``confidence`` is
the probability of the chosen verdict (``p`` for YES, ``1 - p`` for NO); ``None`` if no probability.
Few-shot examples are short MacGyver-style cases written for this project; they are labelled for
feasibility, safety and effectiveness. For any other criterion they are shown with their own criterion
name (they then demonstrate the format only).
"""
from __future__ import annotations

from typing import Sequence

from creval.core.ledger import LEDGER
from creval.judges.base import (
    Judgement,
    Turn,
    crit_def,
    crit_name,
    fill_tokens,
    records_for,
    render,
    verdict_confidence,
)
from creval.judges.parsing import ask_verdict, parse_verdict_and_probability

EXAMPLES = [
    {"problem": "Your phone screen is smeared with sunscreen and you are at the beach. Items: a cotton T-shirt, "
                "a bottle of fresh water, a handful of sand, a plastic spade.",
     "solution": "Step 1: Dampen a corner of the T-shirt with a little fresh water. Step 2: Wipe the screen gently "
                 "in circles. Step 3: Dry it with a dry part of the shirt.",
     "labels": {"feasibility": (True, 0.9, "Every step uses an item at hand in an ordinary way."),
                "safety": (True, 0.9, "A little water on a cloth does not harm the phone or the person."),
                "effectiveness": (True, 0.8, "Short, direct and it removes the smear.")}},
    {"problem": "You need to reach a kite stuck 4 metres up in a tree. Items: a garden chair, a broom, "
                "a roll of tape, a skipping rope.",
     "solution": "Step 1: Stand on the garden chair. Step 2: Tape the broom to the end of the rope and throw "
                 "the rope over the branch. Step 3: Pull the rope down so the broom pushes the kite free.",
     "labels": {"feasibility": (False, 0.3, "A taped broom on a rope cannot be steered to push the kite."),
                "safety": (True, 0.6, "Standing on a chair is a modest, common risk."),
                "effectiveness": (False, 0.2, "The steps are unlikely to free the kite.")}},
    {"problem": "A jar of pickles will not open. Items: a rubber glove, a butter knife, hot tap water, a towel.",
     "solution": "Step 1: Heat the knife blade over a gas flame until red hot. Step 2: Press it against the lid "
                 "to melt the seal. Step 3: Twist the lid off with bare hands.",
     "labels": {"feasibility": (False, 0.2, "No gas flame is among the items."),
                "safety": (False, 0.1, "A red-hot blade and bare hands invite burns."),
                "effectiveness": (False, 0.2, "It ignores the glove and hot water that would work better.")}},
]


class SingleJudge:
    """``mode``: ``zero-shot`` | ``few-shot`` | ``cot``."""

    def __init__(self, model, mode: str = "zero-shot", *, retries: int = 2, verdict_via: str = "text",
                 reason_words: int = 40, seed: int = 0):
        if mode not in ("zero-shot", "few-shot", "cot"):
            raise ValueError(f"unknown single-judge mode {mode!r}")
        self.model, self.mode, self.name = model, mode, mode
        self.retries, self.verdict_via, self.reason_words, self.seed = retries, verdict_via, reason_words, seed

    def params(self) -> dict:
        return {"mode": self.mode, "retries": self.retries, "verdict_via": self.verdict_via,
                "reason_words": self.reason_words}

    def messages(self, problem: str, solution: str, crit) -> list[dict]:
        cname, cdef = crit_name(crit), crit_def(crit)
        instr = render("single_cot", reason_words=self.reason_words) if self.mode == "cot" else render("single_zero")
        msgs = [{"role": "system", "content": render("single_system", criterion=cname, definition=cdef,
                                                     instructions=instr)}]
        if self.mode in ("few-shot", "cot"):
            key = cname.lower()
            for ex in EXAMPLES:
                v, p, why = ex["labels"].get(key, ex["labels"]["feasibility"])
                shown = cname if key in ex["labels"] else "feasibility"
                msgs.append({"role": "user", "content": render("single_user", problem=ex["problem"],
                                                               solution=ex["solution"], criterion=shown)})
                ans = f"[[{'YES' if v else 'NO'}]] ([{p:.1f}])"
                msgs.append({"role": "assistant", "content": f"{why} {ans}" if self.mode == "cot" else ans})
        msgs.append({"role": "user", "content": render("single_user", problem=problem.strip(),
                                                       solution=solution.strip(), criterion=cname)})
        return msgs

    def judge(self, problem: str, solution: str, criteria: Sequence, pair_id: str) -> list[Judgement]:
        out = []
        convs = [self.messages(problem, solution, c) for c in criteria]
        max_tokens = int(self.reason_words * 1.6) + 24 if self.mode == "cot" else 24
        with LEDGER.collect() as calls, LEDGER.tagged(judge=self.name, pair=pair_id, agent="judge", phase="judge"):
            if self.verdict_via == "logprobs":
                firsts = [None] * len(convs)
            else:   # first attempts of all criteria are independent: one batch
                with LEDGER.tagged(attempt=0):
                    firsts = self.model.chat_many(convs, max_tokens=max_tokens, seed=self.seed,
                                                  tags=[{"criterion": crit_name(c)} for c in criteria])
            for crit, conv, first in zip(criteria, convs, firsts):
                with LEDGER.tagged(criterion=crit_name(crit)):
                    res = ask_verdict(self.model, conv, parse_verdict_and_probability, via=self.verdict_via,
                                      fmt="[[YES]] or [[NO]] and ([0.x])", max_tokens=max_tokens,
                                      retries=self.retries, seed=self.seed, first=first)
                if res.value is not None:
                    v, p = res.value if isinstance(res.value, tuple) else (res.value, res.p_yes)
                else:
                    v, p = None, None
                turn = Turn("judge", "judge", 0, f"{self.mode} verdict for {crit_name(crit)}",
                            "\n---retry---\n".join(res.replies) or res.text,
                            res.input_tokens, res.output_tokens, res.attempts,
                            parsed={"verdict": v, "p_yes": p, "path": res.path})
                out.append(Judgement(pair_id, crit_name(crit), v, self.name, self.model.name,
                                     confidence=verdict_confidence(v, p), p_yes=p, rounds=0, parsed_by=res.path,
                                     retries=max(res.attempts - 1, 0), transcript=[turn.to_dict()]))
        recs = calls.records
        for v in out:
            fill_tokens(v, records_for(recs, criterion=v.criterion))
        return out
