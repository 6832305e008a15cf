"""What the convergent study (chapter 03) costs before any call: the judges of Tan et al. 2026 section 4 on
chapter 02's solutions and the human-labelled pairs, and the confidence sweep (server path: every verdict and
certainty is written and parsed)."""
from __future__ import annotations

from creval.judges.base import crit_def, crit_name, render
from creval.judges.single import SingleJudge
from creval.studies.convergent.run import LABELLED
from creval.studies.estimate.parts import (
    TYPICAL,
    ZERO,
    Estimate,
    Part,
    Phase,
    Range,
    local,
    msg_toks,
    toks,
    words,
)
from creval.studies.estimate.sizes import criteria, macgyver_pairs, problems, typical_pair


def judge_chain(cfg, name: str, problem: str, solution: str, crits: list, fb: int) -> tuple[Range, Range, Range, Range]:
    """One judge on one pair: ``(calls, prompt tokens, completion tokens, depth)`` over ``crits``."""
    info = render("info", problem=problem.strip(), solution=solution.strip())
    r, R, wl = cfg.convergent_judge_retries, cfg.convergent_judge_max_rounds, cfg.convergent_judge_word_limit
    disc = int(wl * 1.6) + 16
    reply = Range(TYPICAL, 1.0)
    n, pt, ct, depth = ZERO, ZERO, ZERO, ZERO
    for c in crits:
        cn, cd = crit_name(c), crit_def(c)
        if name in ("zero-shot", "few-shot", "cot"):
            mt = int(40 * 1.6) + 24 if name == "cot" else 24
            p = msg_toks(SingleJudge(None, name).messages(problem, solution, c))
            k = Range(1, 1 + r + fb)
            n, pt, ct = n + k, pt + k * p, ct + Range(1, 1 + r) * (reply * mt) + Range(0, fb)
            depth = depth + Range(0, r + fb)
        elif name == "chateval":
            base = msg_toks([{"role": "system", "content": render(
                "chateval_turn", role="analyst", criterion=cn, definition=cd, focus="the problem", words=wl,
                info=info, history="")}, {"role": "user", "content": "Your turn."}])
            turns = 3 * R
            hist = reply * disc
            disc_prompt = Range(turns * base, turns * base) + hist * (turns * (turns - 1) / 2)
            verdict_prompt = (Range(base, base) + hist * turns) * 3
            k = Range(turns + 3, turns + 3 * (1 + r + fb))
            n = n + k
            pt = pt + disc_prompt + verdict_prompt * Range(1, 1 + r + fb)
            ct = ct + hist * turns + Range(3, 3 * (1 + r)) * (reply * 64) + Range(0, 3 * fb)
            depth = depth + Range(turns + 3, turns + 3 * (1 + r + fb))
        elif name == "retrieval":
            frag = words(60)
            notes = lambda k: "\n".join(f"- [PA] {frag}" for _ in range(k))  # noqa: E731
            kw = dict(role="analyst", criterion=cn, definition=cd, focus="the problem", info=info)
            ca = toks(render("retrieval_init_CA", criterion=cn, definition=cd, info=info, words=wl))
            dsc = toks(render("retrieval_discuss", notes=notes(cfg.convergent_judge_k), questions="- none", words=wl,
                              **kw))
            cnf = toks(render("retrieval_confidence", notes=notes(cfg.convergent_judge_j), **kw))
            ver = toks(render("retrieval_verdict", notes=notes(cfg.convergent_judge_l), **kw))
            rounds = Range(1, R)
            k_conf = rounds * Range(3, 3 * (1 + r))
            k_ver = Range(1, 1 + r + fb)
            n = n + Range(1, 1) + rounds * 3 + k_conf + k_ver
            pt = pt + Range(ca, ca) + rounds * (3 * dsc) + k_conf * cnf + k_ver * ver
            ct = (ct + reply * disc * (Range(1, 1) + rounds * 3) + k_conf * (reply * 48)
                  + Range(1, 1 + r) * (reply * 48) + Range(0, fb))
            depth = depth + Range(1, 1) + rounds * Range(2, 2 + r) + k_ver
        else:
            raise ValueError(f"no estimate for judge {name!r}")
    if name == "retrieval":                        # PA and SA initial insights, shared by the pair's criteria
        crit_list = "; ".join(f"{crit_name(c)} ({crit_def(c)})" for c in crits)
        init = 2 * toks(render("retrieval_init_PA", criteria_list=crit_list, info=info, words=wl))
        n, pt, ct, depth = n + Range(2, 2), pt + Range(init, init), ct + reply * disc * 2, depth + Range(1, 1)
    elif name in ("zero-shot", "few-shot", "cot"):
        depth = depth + Range(1, 1)                 # first attempts of every criterion in one batch
    return n, pt, ct, depth


def judge_phase(cfg, phase: str, judge: str, pairs: int, crits: list, problem: str, solution: str,
                what: str, min_share: float = 1.0) -> Phase:
    fb = 1 if cfg.convergent_judge_verdict_via == "text+logprobs" else 0
    n, pt, ct, depth = judge_chain(cfg, judge, problem, solution, crits, fb)
    lo = Range(min_share, 1.0)
    part = Part("judge", cfg.judge_model, what, n * pairs * lo, pt * pairs * lo, ct * pairs * lo)
    # the retrieval judge embeds each reply's fragments and each turn's query: about 1 to 4 texts a call
    work = (local("embedding", "fragments and queries embedded", n * pairs * lo * Range(1, 4)),) \
        if judge == "retrieval" else ()
    return Phase(phase, pairs, depth, (part,), breadth=3 if judge in ("retrieval", "chateval") else len(crits),
                 local=work)


def estimate(cfg) -> Estimate:
    """Tan et al. 2026 section 4 and Tables 2-5: ``bench_judge`` on every solution of chapter 02, each judge on
    the human-labelled pairs, the retrieval judge at each confidence threshold (Fig. 12)."""
    problem, solution = typical_pair()
    phases, div = [], cfg.divergent()               # the divergent run whose solutions are judged
    for m in cfg.tested:
        for d in div.divergent_domains:
            k = len(problems(d, div.divergent_limit, cfg.data_seed))
            phases.append(judge_phase(cfg, f"bench {m}/{d}", cfg.convergent_bench_judge, k, list(criteria(d)),
                                      problem, solution,
                                      f"{cfg.convergent_bench_judge} on chapter 02's solutions"))
    labelled = [c for c in criteria("macgyver") if crit_name(c).lower() in LABELLED]
    pairs = len(macgyver_pairs(cfg.convergent_human_pairs, cfg.data_seed))
    for j in cfg.convergent_judges:
        phases.append(judge_phase(cfg, f"human pairs: {j}", j, pairs, labelled, problem, solution,
                                  f"{j} on human-labelled pairs"))
    # every threshold repeats the same first round, so it is served by the cache: at most the rounds and
    # verdicts the other thresholds reach (at least nothing new when the retrieval judge already ran)
    for i, t in enumerate(cfg.convergent_confidence_thresholds):
        first = i == 0 and "retrieval" not in cfg.convergent_judges
        phases.append(judge_phase(cfg, f"sweep T={t:g}", "retrieval", pairs, labelled, problem, solution,
                                  "retrieval at a confidence threshold", min_share=1.0 if first else 0.0))
    return Estimate("convergent", phases, ["the sweep's thresholds reuse each other's cached turns: lower bound 0 "
                                           "for all but the first (upper bound: a full judge run each)",
                                           "bench solutions read as long as a human MacGyver solution"])
