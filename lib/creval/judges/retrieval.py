"""Retrieval-based multi-agent judge (paper sec. 4.1 and app. D.2), re-implemented.

Three analysts, a = PA (problem), SA (solution), CA (criterion):

1. Initialisation. PA and SA write initial insights about the problem / solution with the *list* of all
   criteria in view (as in the paper's templates), so these two turns are shared by every criterion of a
   pair; CA writes insights per criterion. Each ``[[POINT]]`` becomes a fragment in the pair's ChromaDB
   collection (shared fragments carry ``criterion="*"``). The shared turns' tokens are split evenly
   over the criteria judged together, so per-pair sums are exact.
2. Discussion, rounds r = 1..max_rounds. Each analyst gets GET(Q_a + questions addressed to it, k) over
   the fragments that existed before round r (so the three turns of a round are independent and are
   sent in one ``chat_many`` batch), answers, gives an opinion and asks "To <Role>: ..." questions.
   Answers and opinion become fragments of round r; questions are routed to their addressees.
3. Confidence. After each round each analyst states a certainty in [0, 1] from GET(Q_a, j) (batched).
   If the mean of the parsed certainties is >= T the discussion stops early. Unparsed certainties are
   left out of the mean; if none parses the mean is undefined and the discussion goes on.
   With a local model (raw log-probs) the certainty is read, not parsed: the expected value of the
   model's distribution over the paper's eleven answers ``[[0.0]]`` ... ``[[1.0]]``, each scored exactly.
   With a server the analyst writes ``[[0.x]]`` and it is parsed (bounded retries, then unparsed).
   Our prompt names the format without an example value: the paper's prompt shows one, and SmolLM2
   put 88-93% of its mass on that example's value whatever the discussion said.
4. Verdict. The analyst with the highest certainty of the last round (ties: first of PA, SA, CA; no
   certainty at all: CA) gives [[YES]] / [[NO]] from GET(Q_max, l).

The verdict's ``confidence`` (used for AUARC) is the mean certainty of the last round: the panel's own
belief that it can decide correctly; ``None`` when no certainty parsed.

The criteria of a pair are discussed together, each by its own :class:`Panel`: every step (CA's insights, a
round's turns, the certainties, the verdicts) is one batch over the panels still discussing. A panel sees only
its criterion's fragments and the shared ones, so each judgement is the one its criterion gets in turn (the
``fragments`` count too: the pair's fragments once the criteria before it and itself were judged).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Sequence

from creval.core.ledger import LEDGER
from creval.judges.base import (
    Judgement,
    Turn,
    clip_words,
    crit_def,
    crit_name,
    fill_tokens,
    records_for,
    render,
    split_evenly,
)
from creval.judges.parsing import ask_parsed, ask_verdict, parse_confidence, parse_stance
from creval.judges.store import Fragment, FragmentStore

ROLES = {"PA": "problem analyst", "SA": "solution analyst", "CA": "criterion analyst"}
FOCUS = {"PA": "the problem: its constraints, the items and their properties, the outcome wanted",
         "SA": "the solution: what each step does, which items it uses and how, and doubtful steps",
         "CA": "the criterion: what it demands in this situation and how fully it must be met"}
QUERY = {"PA": "problem constraints, available items and their properties, desired outcome; {criterion}",
         "SA": "solution steps, how the items are used, vague or doubtful steps; {criterion}",
         "CA": "{criterion}: {definition} evidence in the solution for or against it"}
ADDRESS = re.compile(r"To\s+(?:the\s+)?(Problem|Solution|Criterion)\s+Analyst\s*:\s*(.+?)"
                     r"(?=To\s+(?:the\s+)?(?:Problem|Solution|Criterion)\s+Analyst\s*:|\[\[|\Z)", re.I | re.S)
SCORES = tuple(f"[[{i / 10:.1f}]]" for i in range(11))     # the paper's certainty format, one decimal


def score_expectation(scores: dict[str, float]) -> float | None:
    """Expected certainty under the model's distribution over the answers ``[[0.0]]`` ... ``[[1.0]]``
    (``scores``: their log-probs, e.g. ``ChoiceScores.logprobs``; renormalised over those eleven answers).
    None when no answer has a finite log-prob: the certainty is unparsed, not zero."""
    lps = [scores.get(s, -math.inf) for s in SCORES]
    top = max(lps)
    if top == -math.inf:
        return None
    w = [math.exp(x - top) for x in lps]
    return sum(i / 10 * wi for i, wi in enumerate(w)) / sum(w)


SECTION = re.compile(r"\[\[\s*([A-Za-z ]+?)\s*\]\]\s*:?")


def split_points(text: str, words: int) -> list[str]:
    """Fragments from an initial-insight reply: one per ``[[POINT]]``; the whole reply if none."""
    parts = [p.strip(" \n:-*") for p in re.split(r"\[\[\s*POINT\s*\]\]", text, flags=re.I)]
    parts = [p for p in parts if len(p.split()) >= 3]
    if not parts:
        parts = [text.strip()] if text.strip() else []
    return [clip_words(p, words) for p in parts]


def split_discussion(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(fragments, [(addressee, question)]) from a discussion reply."""
    questions = [({"problem": "PA", "solution": "SA", "criterion": "CA"}[m.group(1).lower()],
                  re.sub(r"\s+", " ", m.group(2)).strip()) for m in ADDRESS.finditer(text)]
    body = ADDRESS.sub("", text)
    pieces, label = {}, "opinion"
    pos = 0
    for m in SECTION.finditer(body):
        pieces.setdefault(label, []).append(body[pos:m.start()])
        label, pos = m.group(1).strip().lower(), m.end()
    pieces.setdefault(label, []).append(body[pos:])
    frags = []
    for lab, chunks in pieces.items():
        if lab.startswith("question"):
            continue
        t = " ".join(c.strip() for c in chunks).strip(" \n:-*")
        if len(t.split()) >= 3 and t.lower() not in ("none", "none."):
            frags.append(t)
    return frags, questions


@dataclass
class Panel:
    """One criterion's discussion in progress: its turns, the questions routed to each analyst, the last
    round's certainties and leanings, the rounds held, and the fragments it added."""
    crit: object
    turns: list = field(default_factory=list)
    questions: dict = field(default_factory=lambda: {a: [] for a in ROLES})
    conf: dict = field(default_factory=lambda: {a: None for a in ROLES})
    stance: dict = field(default_factory=lambda: {a: None for a in ROLES})
    mean_conf: float | None = None
    rounds: int = 0
    early: bool = False
    done: bool = False
    retries: int = 0
    fragments: int = 0


class RetrievalJudge:
    name = "retrieval"

    def __init__(self, model, *, store: FragmentStore | None = None, k: int = 5, j: int = 4, l: int = 8,  # noqa: E741 (the paper's l)
                 threshold: float = 0.5, max_rounds: int = 2, word_limit: int = 150, init_words: int | None = None,
                 fragment_words: int = 60, retries: int = 2, verdict_via: str = "text", seed: int = 0,
                 tokens_per_word: float = 1.6, confidence_via: str = "auto"):
        self.model, self.store = model, store or FragmentStore(None)
        self.k, self.j, self.l, self.threshold, self.max_rounds = k, j, l, threshold, max_rounds
        self.word_limit, self.init_words = word_limit, init_words or word_limit
        self.fragment_words, self.retries, self.verdict_via, self.seed = fragment_words, retries, verdict_via, seed
        self.tpw = tokens_per_word
        if confidence_via not in ("auto", "logprobs", "text"):
            raise ValueError(f"confidence_via must be 'auto', 'logprobs' or 'text', not {confidence_via!r}")
        if confidence_via == "auto":   # exact multi-token choice scores need a local model's raw log-probs
            confidence_via = "logprobs" if getattr(model, "logprob_kind", None) == "raw" else "text"
        self.confidence_via = confidence_via

    def params(self) -> dict:
        return {"k": self.k, "j": self.j, "l": self.l, "threshold": self.threshold, "max_rounds": self.max_rounds,
                "word_limit": self.word_limit, "init_words": self.init_words, "retries": self.retries,
                "verdict_via": self.verdict_via, "confidence_via": self.confidence_via,
                "embedder": self.store.embedder.name}

    def _max_tokens(self, words: int) -> int:
        return int(words * self.tpw) + 16

    # -- helpers ------------------------------------------------------------------------------
    def _notes(self, frags: list[Fragment]) -> str:
        return "\n".join(f"- [{f.agent}] {f.text}" for f in frags) or "- (none yet)"

    def _get(self, pair_id, agent, crit, n, max_round, questions=()):
        q = QUERY[agent].format(criterion=crit_name(crit), definition=crit_def(crit))
        if questions:
            q = q + " " + " ".join(questions)
        return self.store.get(pair_id, q, n, crit_name(crit), max_round)

    def _frags(self, pair_id, texts, agent, phase, rnd, crit_label) -> list[Fragment]:
        base = f"{agent}:{phase}:{rnd}:{crit_label}"
        return [Fragment(f"{base}:{i}", f"{clip_words(t, self.fragment_words)}", agent, phase, rnd, crit_label)
                for i, t in enumerate(texts)]

    # -- the judge ----------------------------------------------------------------------------
    def judge(self, problem: str, solution: str, criteria: Sequence, pair_id: str) -> list[Judgement]:
        """Every criterion's discussion goes on together: each step (CA's insights, a round's turns, its
        certainties, the verdicts) is one batch over the criteria still discussing; a criterion sees only its
        own fragments and the shared ones, so its judgement is the one it would get alone."""
        info = render("info", problem=problem.strip(), solution=solution.strip())
        self.store.reset(pair_id)
        crit_list = "; ".join(f"{crit_name(c)} ({crit_def(c)})" for c in criteria)
        shared_turns = []
        with LEDGER.collect() as shared, LEDGER.tagged(judge=self.name, pair=pair_id, criterion="*", phase="init"):
            msgs = {a: [{"role": "user", "content": render(f"retrieval_init_{a}", criteria_list=crit_list, info=info,
                                                            words=self.init_words)}] for a in ("PA", "SA")}
            out = self._chat_many_tagged([msgs["PA"], msgs["SA"]], ["PA", "SA"], self._max_tokens(self.init_words))
            comps = dict(zip(("PA", "SA"), out))
        n_shared = 0
        for a, c in comps.items():
            frags = self._frags(pair_id, split_points(c.text, self.fragment_words), a, "init", 0, "*")
            self.store.add(pair_id, frags)
            n_shared += len(frags)
            about = "problem" if a == "PA" else "solution"
            shared_turns.append(Turn(a, "init", 0, f"initial insights about the {about}", c.text, c.input_tokens,
                                     c.output_tokens, retrieved_ids=[f.id for f in frags]).to_dict())
        shared_records = shared.records
        shares_in = split_evenly(sum(r.input_tokens for r in shared_records if r.kind == "chat"), len(criteria))
        shares_out = split_evenly(sum(r.output_tokens for r in shared_records if r.kind == "chat"), len(criteria))
        panels = [Panel(crit) for crit in criteria]
        with LEDGER.collect() as calls, LEDGER.tagged(judge=self.name, pair=pair_id):
            self._insights(info, panels, pair_id)
            for rnd in range(1, self.max_rounds + 1):
                talking = [p for p in panels if not p.done]
                if not talking:
                    break
                self._round(info, talking, rnd, pair_id)
            verdicts = self._verdicts(info, panels, pair_id)
        for ci, (p, v) in enumerate(zip(panels, verdicts)):
            v.extra["fragments"] = n_shared + sum(q.fragments for q in panels[:ci + 1])   # as judged one by one
            fill_tokens(v, records_for(calls.records, criterion=crit_name(p.crit)))
            v.input_tokens += shares_in[ci]
            v.output_tokens += shares_out[ci]
            v.calls += 0 if ci else len([r for r in shared_records if r.kind == "chat"])
            v.tokens_by["PA+SA/init (shared)"] = [shares_in[ci], shares_out[ci]]
            v.transcript = shared_turns + v.transcript
        return verdicts

    def _add(self, pair_id, panel: "Panel", frags: list[Fragment]) -> None:
        self.store.add(pair_id, frags)
        panel.fragments += len(frags)

    def _insights(self, info, panels: list["Panel"], pair_id) -> None:
        """CA's initial insights on each criterion (one batch)."""
        convs = [[{"role": "user", "content": render("retrieval_init_CA", criterion=crit_name(p.crit),
                                                     definition=crit_def(p.crit), info=info, words=self.init_words)}]
                 for p in panels]
        with LEDGER.tagged(agent="CA", phase="init"):
            comps = self.model.chat_many(convs, max_tokens=self._max_tokens(self.init_words), seed=self.seed,
                                         tags=[{"criterion": crit_name(p.crit)} for p in panels])
        for p, c in zip(panels, comps):
            cname = crit_name(p.crit)
            frags = self._frags(pair_id, split_points(c.text, self.fragment_words), "CA", "init", 0, cname)
            self._add(pair_id, p, frags)
            p.turns.append(Turn("CA", "init", 0, f"initial insights about {cname}", c.text, c.input_tokens,
                                c.output_tokens, retrieved_ids=[f.id for f in frags]).to_dict())

    def _round(self, info, panels: list["Panel"], rnd: int, pair_id) -> None:
        """Round ``rnd`` of the panels still discussing: their turns, then each analyst's certainty; a panel
        whose mean certainty reaches T stops."""
        self._discuss(info, panels, rnd, pair_id)
        cgs = [{a: self._get(pair_id, a, p.crit, self.j, rnd) for a in ROLES} for p in panels]
        if self.confidence_via == "logprobs":
            self._confidence_logprobs(info, panels, cgs, rnd)
        else:
            self._confidence_text(info, panels, cgs, rnd)
        for p in panels:
            p.rounds = rnd
            parsed = [x for x in p.conf.values() if x is not None]
            p.mean_conf = sum(parsed) / len(parsed) if parsed else None
            if p.mean_conf is not None and p.mean_conf >= self.threshold:
                p.early, p.done = rnd < self.max_rounds, True

    def _discuss(self, info, panels: list["Panel"], rnd: int, pair_id) -> None:
        """Every analyst's turn on every panel over the fragments from before the round (one batch); answers
        and opinions become fragments of round ``rnd``, questions go to their addressees."""
        got = [{a: self._get(pair_id, a, p.crit, self.k, rnd - 1, p.questions[a]) for a in ROLES} for p in panels]
        convs = [[{"role": "user", "content": render(
            "retrieval_discuss", role=ROLES[a], criterion=crit_name(p.crit), definition=crit_def(p.crit),
            focus=FOCUS[a], info=info, notes=self._notes(g[a]), words=self.word_limit,
            questions="\n".join(f"- {q}" for q in p.questions[a]) or "- none")}]
            for p, g in zip(panels, got) for a in ROLES]
        with LEDGER.tagged(phase="discussion", round=rnd):
            outs = iter(self.model.chat_many(convs, max_tokens=self._max_tokens(self.word_limit), seed=self.seed,
                                             tags=self._tags(panels)))
        for p, g in zip(panels, got):
            new_questions: dict[str, list[str]] = {a: [] for a in ROLES}
            for a in ROLES:
                comp = next(outs)
                texts, qs = split_discussion(comp.text)
                if not texts and comp.text.strip():
                    texts = [comp.text]
                self._add(pair_id, p, self._frags(pair_id, texts, a, "discussion", rnd, crit_name(p.crit)))
                for to, q in qs:
                    if to != a:
                        new_questions[to].append(f"From {ROLES[a]}: {q}")
                p.turns.append(Turn(a, "discussion", rnd,
                                    f"answer {len(p.questions[a])} question(s), opinion, new questions", comp.text,
                                    comp.input_tokens, comp.output_tokens, retrieved_ids=[f.id for f in g[a]],
                                    retrieved=[f.text for f in g[a]]).to_dict())
            p.questions = new_questions

    def _verdicts(self, info, panels: list["Panel"], pair_id) -> list[Judgement]:
        """Each criterion's verdict by its most confident analyst (first attempts in one batch)."""
        asked = []
        for p in panels:
            best = max(ROLES, key=lambda a: (p.conf[a] if p.conf[a] is not None else -1.0, -list(ROLES).index(a)))
            if all(x is None for x in p.conf.values()):
                best = "CA"
            vg = self._get(pair_id, best, p.crit, self.l, p.rounds)
            asked.append((best, vg, [{"role": "user", "content": render(
                "retrieval_verdict", role=ROLES[best], focus=FOCUS[best], criterion=crit_name(p.crit),
                definition=crit_def(p.crit), info=info, notes=self._notes(vg))}]))
        firsts = [None] * len(panels)
        if self.verdict_via != "logprobs":
            with LEDGER.tagged(phase="verdict", attempt=0):
                firsts = self.model.chat_many([conv for _, _, conv in asked], max_tokens=48, seed=self.seed,
                                              tags=[{"criterion": crit_name(p.crit), "agent": best, "round": p.rounds}
                                                    for p, (best, _, _) in zip(panels, asked)])
        return [self._decide(pair_id, p, best, vg, conv, first)
                for p, (best, vg, conv), first in zip(panels, asked, firsts)]

    def _decide(self, pair_id, p: "Panel", best, vg, conv, first) -> Judgement:
        cname = crit_name(p.crit)
        with LEDGER.tagged(criterion=cname, agent=best, phase="verdict", round=p.rounds):
            res = ask_verdict(self.model, conv, via=self.verdict_via, max_tokens=48, retries=self.retries,
                              seed=self.seed, first=first)
        p.retries += max(res.attempts - 1, 0)
        p.turns.append(Turn(best, "verdict", p.rounds, f"final [[YES]]/[[NO]] from top-{self.l} fragments",
                            "\n---retry---\n".join(res.replies) or res.text,
                            res.input_tokens, res.output_tokens, res.attempts,
                            retrieved_ids=[f.id for f in vg], retrieved=[f.text for f in vg],
                            parsed={"verdict": res.value, "path": res.path}).to_dict())
        return Judgement(pair_id, cname, res.value, self.name, self.model.name,
                         confidence=p.mean_conf if res.value is not None else None, p_yes=res.p_yes, rounds=p.rounds,
                         early_exit=p.early, parsed_by=res.path, retries=p.retries, transcript=p.turns,
                         extra={"confidences": p.conf, "stances": p.stance, "verdict_agent": best,
                                "fragments": None, "threshold": self.threshold})

    def _confidence_convs(self, template, info, panels, cgs) -> list[list[dict]]:
        return [[{"role": "user", "content": render(template, role=ROLES[a], criterion=crit_name(p.crit),
                                                    definition=crit_def(p.crit), focus=FOCUS[a], info=info,
                                                    notes=self._notes(cg[a]))}]
                for p, cg in zip(panels, cgs) for a in ROLES]

    @staticmethod
    def _tags(panels) -> list[dict]:
        return [{"agent": a, "criterion": crit_name(p.crit)} for p in panels for a in ROLES]

    def _confidence_logprobs(self, info, panels, cgs, rnd) -> None:
        """Certainty read from log-probs (no free text to parse): the expected score under the model's
        distribution over the eleven answers ``[[0.0]]`` ... ``[[1.0]]``, scored exactly; unparsed (None) when the
        backend gave none of them a finite log-prob."""
        convs = self._confidence_convs("retrieval_confidence_score", info, panels, cgs)
        with LEDGER.tagged(phase="confidence", round=rnd):      # independent turns -> one batch
            scores = iter(self.model.choice_logprobs_many([(conv, SCORES) for conv in convs], tags=self._tags(panels)))
        for p, cg in zip(panels, cgs):
            for a in ROLES:
                sc = next(scores)
                p.conf[a] = score_expectation(sc.logprobs)
                said = "unparsed: no answer had a log-prob" if p.conf[a] is None else f"certainty {p.conf[a]:.2f}"
                p.turns.append(Turn(a, "confidence", rnd, "certainty: expected [[0.0]]-[[1.0]] score from log-probs",
                                    said, sc.input_tokens, 1,
                                    retrieved_ids=[f.id for f in cg[a]], retrieved=[f.text for f in cg[a]],
                                    parsed={"confidence": p.conf[a],
                                            "path": "unparsed" if p.conf[a] is None else "logprobs"}).to_dict())

    def _confidence_text(self, info, panels, cgs, rnd) -> None:
        """Certainty written as [[0.x]] and parsed, with bounded retries (then unparsed)."""
        convs = self._confidence_convs("retrieval_confidence", info, panels, cgs)
        with LEDGER.tagged(phase="confidence", round=rnd):
            firsts = iter(self.model.chat_many(convs, max_tokens=48, seed=self.seed, tags=self._tags(panels)))
            convs = iter(convs)
            for p, cg in zip(panels, cgs):
                for a in ROLES:
                    conv, first = next(convs), next(firsts)
                    with LEDGER.tagged(agent=a, criterion=crit_name(p.crit)):
                        res = ask_parsed(self.model, conv, parse_confidence, fmt="[[0.x]] ([YES] or [NO])",
                                         max_tokens=48, retries=self.retries, seed=self.seed, first=first)
                    p.retries += res.attempts - 1
                    p.conf[a] = res.value
                    p.stance[a] = parse_stance(res.text)
                    p.turns.append(Turn(a, "confidence", rnd, "certainty [[0.x]] and leaning ([YES]/[NO])",
                                        "\n---retry---\n".join(res.replies), first.input_tokens, first.output_tokens,
                                        res.attempts, retrieved_ids=[f.id for f in cg[a]],
                                        retrieved=[f.text for f in cg[a]],
                                        parsed={"confidence": res.value, "stance": p.stance[a],
                                                "path": res.path}).to_dict())

    def _chat_many_tagged(self, convs, agents, max_tokens):
        """One batch of independent turns, each recorded in the ledger under its agent."""
        return self.model.chat_many(convs, max_tokens=max_tokens, seed=self.seed, tags=[{"agent": a} for a in agents])
