"""ChatEval-style one-by-one discussion (Chan et al. 2023; paper sec. 4 and app. D.4), the baseline.

The same three roles as the retrieval judge (PA, SA, CA) speak in turn for ``max_rounds`` rounds (all of
them: there is no early exit). Every turn
sees the problem, the solution, the criterion and the FULL discussion history, and each reply is
appended to the shared history at once (the paper's modification of ChatEval). Afterwards each analyst
gives a verdict with a probability that the criterion is met, from the full history (the three verdict
turns are independent, so they go in one ``chat_many`` batch). Final verdict: majority of the parsed
verdicts (a tie or no parsed verdict is ``unparsed``); ``p_yes`` = mean stated probability;
``confidence`` = ``p_yes`` if the verdict is YES else ``1 - p_yes``.
Nothing is truncated or summarised: this is the cost the retrieval judge is compared against.
"""
from __future__ import annotations

from typing import Sequence

from creval.core.ledger import LEDGER
from creval.judges.base import Judgement, Turn, crit_def, crit_name, fill_tokens, render, verdict_confidence
from creval.judges.parsing import ask_verdict, parse_verdict_and_probability
from creval.judges.retrieval import FOCUS, ROLES


class ChatEvalJudge:
    name = "chateval"

    def __init__(self, model, *, max_rounds: int = 2, word_limit: int = 150, retries: int = 2, verdict_via: str = "text",
                 seed: int = 0, tokens_per_word: float = 1.6):
        self.model, self.max_rounds, self.word_limit, self.retries = model, max_rounds, word_limit, retries
        self.verdict_via, self.seed, self.tpw = verdict_via, seed, tokens_per_word

    def params(self) -> dict:
        return {"max_rounds": self.max_rounds, "word_limit": self.word_limit, "retries": self.retries,
                "verdict_via": self.verdict_via}

    def judge(self, problem: str, solution: str, criteria: Sequence, pair_id: str) -> list[Judgement]:
        info = render("info", problem=problem.strip(), solution=solution.strip())
        out = []
        for crit in criteria:
            with LEDGER.collect() as calls, LEDGER.tagged(judge=self.name, pair=pair_id, criterion=crit_name(crit)):
                v = self._judge_one(info, crit, pair_id)
            out.append(fill_tokens(v, calls.records))
        return out

    def _system(self, a, crit, info, history):
        return render("chateval_turn", role=ROLES[a], criterion=crit_name(crit), definition=crit_def(crit),
                      focus=FOCUS[a], words=self.word_limit, info=info,
                      history="\n\n".join(history) if history else "(nobody has spoken yet)")

    def _judge_one(self, info, crit, pair_id) -> Judgement:
        history: list[str] = []
        turns = []
        for rnd in range(1, self.max_rounds + 1):
            for a in ROLES:
                conv = [{"role": "system", "content": self._system(a, crit, info, history)},
                        {"role": "user", "content": f"Your turn, {ROLES[a]}."}]
                with LEDGER.tagged(agent=a, phase="discussion", round=rnd):
                    c = self.model.chat(conv, max_tokens=int(self.word_limit * self.tpw) + 16, seed=self.seed)
                history.append(f"[{ROLES[a]}]: {c.text.strip()}")
                turns.append(Turn(a, "discussion", rnd, f"full history of {len(history) - 1} turn(s)", c.text,
                                  c.input_tokens, c.output_tokens).to_dict())
        votes, probs, paths, retries = [], [], [], 0
        for a in ROLES:
            conv = [{"role": "system", "content": self._system(a, crit, info, history)},
                    {"role": "user", "content": render("chateval_verdict", role=ROLES[a], criterion=crit_name(crit))}]
            with LEDGER.tagged(agent=a, phase="verdict", round=self.max_rounds):
                res = ask_verdict(self.model, conv, parse_verdict_and_probability, via=self.verdict_via,
                                  fmt="[[YES]] or [[NO]] and ([0.x])", max_tokens=64, retries=self.retries,
                                  seed=self.seed)
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
