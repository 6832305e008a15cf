"""ChatEval-style one-by-one discussion (Chan et al. 2023; paper sec. 4 and app. D.4), the baseline.

The same three roles as the retrieval judge (PA, SA, CA) speak in turn for ``max_rounds`` rounds (all of
them: there is no early exit). Every turn sees the problem, the solution, the criterion and the FULL
discussion history, and each reply is appended to the shared history at once (the paper's modification of
ChatEval). Afterwards each analyst gives a verdict with a probability that the criterion is met, from the
full history. Final verdict: majority of the parsed verdicts (a tie or no parsed verdict is ``unparsed``);
``p_yes`` = mean stated probability; ``confidence`` = ``p_yes`` if the verdict is YES else ``1 - p_yes``.
The criteria's discussions are independent, so each turn goes in one ``chat_many`` batch over all criteria,
and the verdict turns (independent of each other) in one batch over all analysts and criteria.
Nothing is truncated or summarised: this is the cost the retrieval judge is compared against.
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
from creval.judges.retrieval import FOCUS, ROLES


class ChatEvalJudge:
    name = "chateval"

    def __init__(self, model, *, max_rounds: int = 2, word_limit: int = 150, retries: int = 2,
                 verdict_via: str = "text", seed: int = 0, tokens_per_word: float = 1.6):
        self.model, self.max_rounds, self.word_limit, self.retries = model, max_rounds, word_limit, retries
        self.verdict_via, self.seed, self.tpw = verdict_via, seed, tokens_per_word

    def params(self) -> dict:
        return {"max_rounds": self.max_rounds, "word_limit": self.word_limit, "retries": self.retries,
                "verdict_via": self.verdict_via}

    def judge(self, problem: str, solution: str, criteria: Sequence, pair_id: str) -> list[Judgement]:
        """The criteria's discussions are independent: each turn of all of them goes in one batch, and so do
        the first verdict attempts of every analyst on every criterion."""
        info = render("info", problem=problem.strip(), solution=solution.strip())
        crits = list(criteria)
        with LEDGER.collect() as calls, LEDGER.tagged(judge=self.name, pair=pair_id):
            histories, turns = self._discuss(info, crits)
            verdicts = self._verdicts(info, crits, histories, turns, pair_id)
        return [fill_tokens(v, records_for(calls.records, criterion=v.criterion)) for v in verdicts]

    def _system(self, a, crit, info, history):
        return render("chateval_turn", role=ROLES[a], criterion=crit_name(crit), definition=crit_def(crit),
                      focus=FOCUS[a], words=self.word_limit, info=info,
                      history="\n\n".join(history) if history else "(nobody has spoken yet)")

    def _discuss(self, info, crits) -> tuple[list[list[str]], list[list[dict]]]:
        """``max_rounds`` rounds of PA, SA, CA turns on every criterion: per criterion its history and turns."""
        histories: list[list[str]] = [[] for _ in crits]
        turns: list[list[dict]] = [[] for _ in crits]
        for rnd in range(1, self.max_rounds + 1):
            for a in ROLES:
                convs = [[{"role": "system", "content": self._system(a, c, info, h)},
                          {"role": "user", "content": f"Your turn, {ROLES[a]}."}] for c, h in zip(crits, histories)]
                with LEDGER.tagged(agent=a, phase="discussion", round=rnd):
                    comps = self.model.chat_many(convs, max_tokens=int(self.word_limit * self.tpw) + 16,
                                                 seed=self.seed, tags=[{"criterion": crit_name(c)} for c in crits])
                for history, ts, c in zip(histories, turns, comps):
                    history.append(f"[{ROLES[a]}]: {c.text.strip()}")
                    ts.append(Turn(a, "discussion", rnd, f"full history of {len(history) - 1} turn(s)", c.text,
                                   c.input_tokens, c.output_tokens).to_dict())
        return histories, turns

    def _verdicts(self, info, crits, histories, turns, pair_id) -> list[Judgement]:
        convs = {(ci, a): [{"role": "system", "content": self._system(a, c, info, histories[ci])},
                           {"role": "user", "content": render("chateval_verdict", role=ROLES[a],
                                                             criterion=crit_name(c))}]
                 for ci, c in enumerate(crits) for a in ROLES}
        firsts = dict.fromkeys(convs)
        if self.verdict_via != "logprobs":     # first attempts: all independent, one batch
            with LEDGER.tagged(phase="verdict", round=self.max_rounds, attempt=0):
                got = self.model.chat_many(list(convs.values()), max_tokens=64, seed=self.seed,
                                           tags=[{"criterion": crit_name(crits[ci]), "agent": a} for ci, a in convs])
            firsts = dict(zip(convs, got))
        out = []
        for ci, crit in enumerate(crits):
            with LEDGER.tagged(criterion=crit_name(crit)):
                out.append(self._decide(crit, {a: (convs[ci, a], firsts[ci, a]) for a in ROLES}, turns[ci], pair_id))
        return out

    def _decide(self, crit, asked, turns, pair_id) -> Judgement:
        """Each analyst's verdict (re-asked while unparsed) and the majority."""
        votes, probs, paths, retries = [], [], [], 0
        for a, (conv, first) in asked.items():
            with LEDGER.tagged(agent=a, phase="verdict", round=self.max_rounds):
                res = ask_verdict(self.model, conv, parse_verdict_and_probability, via=self.verdict_via,
                                  fmt="[[YES]] or [[NO]] and ([0.x])", max_tokens=64, retries=self.retries,
                                  seed=self.seed, first=first)
            retries += max(res.attempts - 1, 0)
            paths.append(res.path)
            if res.value is not None:
                v, p = res.value if isinstance(res.value, tuple) else (res.value, res.p_yes)
                votes.append(v)
                if p is not None:
                    probs.append(p)
            turns.append(Turn(a, "verdict", self.max_rounds, "verdict [[YES]]/[[NO]] and ([0.x]) from full history",
                              "\n---retry---\n".join(res.replies) or res.text,
                              res.input_tokens, res.output_tokens, res.attempts,
                              parsed={"value": res.value, "path": res.path}).to_dict())
        yes, no = sum(votes), len(votes) - sum(votes)
        verdict = None if yes == no else yes > no
        p_yes = sum(probs) / len(probs) if probs else None
        return Judgement(pair_id, crit_name(crit), verdict, self.name, self.model.name,
                         confidence=verdict_confidence(verdict, p_yes), p_yes=p_yes, rounds=self.max_rounds,
                         parsed_by="majority:" + ",".join(paths), retries=retries, transcript=turns,
                         extra={"votes": votes, "probs": probs})
