"""What a run will cost before any call: units, calls, tokens, money and wall time, per study and model role.

One small pure function per study (:data:`ESTIMATORS`) reads only the study's Config (and, where a key means
"all" or a dataset may hold fewer items than asked, the dataset's size, read cheaply from its loader) and
returns an :class:`Estimate`: the study's phases (run one after another), each with its independent units,
the longest chain of requests inside one unit (``depth``) and its calls (:class:`Part`, one per model and kind
of call). What the counts mean:

- **calls** are what the ledger counts (:mod:`creval.core.ledger`) and what a server receives: one request per
  sample index, chat turn, scored choice or log-likelihood. Calls the call cache serves within the run (the
  same prompt asked again) are left out, except where two units may ask it at the same moment (upper bound).
- a **range** ``lo..hi`` where a chain's length depends on the model: the step budget and STOP votes of step-wise
  generation, format re-asks, the log-prob fallback of a verdict, a discussion's early exit, merge-sort
  comparisons, a list that comes back short.
- **prompt tokens** come from the real prompt templates rendered for a few real items (characters / 4, as a
  server client counts them; a local tokenizer differs a little); **completion tokens** from each call's
  ``max_tokens`` (the upper bound) and :data:`TYPICAL` of it (the lower bound).
- **cost** from each model spec's ``price_in``/``price_out`` (USD per 1M tokens).
- **wall time** (:func:`wall`): per phase the longer of the longest unit's chain and the requests spread over
  the endpoint's in-flight limit (never more at once than the units can send), at ``latency + completion /
  tokens_per_s`` a request; the speed comes from the command's flags, else the spec's
  ``extra: {latency_s, tokens_per_s}``, else a local model's measured speed (``creval throughput``).

The estimate assumes a server (the OpenAI-compatible path); on a local model a few judges score choices by
log-probs instead of parsing text (fewer, shorter calls), so its figures are an upper bound there.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from creval.studies.config import Config

TYPICAL = 0.5          # share of a call's max_tokens a reply typically uses: the lower bound of completion tokens
LIST_WORDS = 6         # words of one alternative use as generators write them (the prompt asks for about five)


# -- ranges and parts ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Range:
    """A quantity known only within bounds (``lo == hi`` when exact)."""
    lo: float
    hi: float

    def __add__(self, o) -> "Range":
        o = Range.of(o)
        return Range(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __mul__(self, k) -> "Range":
        return Range(self.lo * k.lo, self.hi * k.hi) if isinstance(k, Range) else Range(self.lo * k, self.hi * k)

    __rmul__ = __mul__

    @staticmethod
    def of(x) -> "Range":
        return x if isinstance(x, Range) else Range(x, x)


ZERO = Range(0, 0)


@dataclass(frozen=True)
class Part:
    """The calls of one kind that one model makes in a phase."""
    role: str              # model (under test) | judge
    model: str
    what: str
    calls: Range           # one request each
    prompt: Range          # tokens, all calls together
    completion: Range


@dataclass(frozen=True)
class Phase:
    """Units that run together; phases of a study run one after another."""
    name: str
    units: int
    depth: Range           # requests one after another in the longest unit
    parts: tuple[Part, ...]
    breadth: int = 1       # requests one unit sends at once at most (a batch inside the unit)


@dataclass
class Estimate:
    study: str
    phases: list[Phase]
    notes: list[str] = field(default_factory=list)

    @property
    def parts(self) -> list[Part]:
        return [p for ph in self.phases for p in ph.parts]

    @property
    def units(self) -> int:
        return sum(ph.units for ph in self.phases)


def calls(role: str, model: str, what: str, n, prompt_each, max_tokens: int, *,
          completion: Range | None = None) -> Part:
    """``n`` calls (a number or a Range) of about ``prompt_each`` prompt tokens and at most ``max_tokens``
    reply tokens each (``completion``: per call, when it is not that)."""
    n = Range.of(n)
    each = completion if completion is not None else Range(TYPICAL * max_tokens, max_tokens)
    return Part(role, model, what, n, n * Range.of(prompt_each), n * each)


def choices(role: str, model: str, what: str, n, prompt_each) -> Part:
    """Scored choices: one request each, one reply token counted (as the ledger does)."""
    return calls(role, model, what, n, prompt_each, 1, completion=Range(1, 1))


# -- token counts of real prompts ------------------------------------------------------------------------
def toks(text: str) -> int:
    """Tokens of a text as a server client counts them (about four characters a token)."""
    return max(1, round(len(text) / 4))


def msg_toks(messages) -> int:
    """Prompt tokens of a chat (contents plus a few template tokens per message, as Model.prompt_tokens)."""
    return toks("\n".join(m["content"] for m in messages)) + 4 * len(messages)


def mean(xs) -> float:
    xs = list(xs)
    return sum(xs) / len(xs) if xs else 0.0


def words(n: int) -> str:
    """Filler text of ``n`` words (the length of a reply not written yet)."""
    return " ".join(["word"] * max(0, int(n)))


def reply_words(max_tokens: int) -> str:
    """A typical reply to a call of ``max_tokens`` (TYPICAL of it; 'word ' is 5 characters, 4 a token)."""
    return words(TYPICAL * max_tokens * 4 / 5)


# -- dataset sizes, read cheaply from the loaders (the bundled samples where the real data is not staged) ---
@lru_cache(maxsize=None)
def problems(domain: str, limit: int, seed: int) -> tuple:
    """The first ``limit`` problems of a domain as the study draws them (fewer when the data holds fewer)."""
    from creval.domains import get_domain
    return tuple(get_domain(domain).load_with_source(limit=limit, seed=seed)[0])


@lru_cache(maxsize=None)
def criteria(domain: str) -> tuple:
    from creval.domains import get_domain
    return tuple(get_domain(domain).criteria)


@lru_cache(maxsize=None)
def macgyver_pairs(n: int, seed: int) -> tuple:
    from creval.datasets import macgyver
    return tuple(macgyver.sample_pairs(n, seed=seed))


def typical_pair() -> tuple[str, str]:
    """A real MacGyver problem and solution (what the judges read)."""
    p = macgyver_pairs(2, 42)[0]
    return p["problem"], p["solution"]


@lru_cache(maxsize=None)
def aut_human_sizes(aut_items: int, aut_objects: int, cambridge_items: int, seed: int) -> tuple:
    """``((dataset, object, responses), ...)`` of the human-rated AUT responses the judges see, and a typical
    response; empty when no data is here."""
    from creval.core.errors import CrevalError
    from creval.datasets import aut as ds
    out, text = [], "use it as a small lever"
    for name, load in (("ocsai1", lambda: ds.load_ocsai(n=aut_items, objects=aut_objects, seed=seed)),
                       ("cambridge", lambda: ds.load_cambridge(n=cambridge_items, seed=seed))):
        try:
            df = load()
        except CrevalError:
            continue
        out += [(name, o, int(c)) for o, c in df["prompt"].value_counts().sort_index().items()]
        text = df["response"].iloc[0] if len(df) else text
    return tuple(out), text


@lru_cache(maxsize=None)
def neocoder_problems() -> tuple:
    from creval.datasets import neocoder as ds
    return ds.load()[0]


# -- merge sort (the novelty judge) ----------------------------------------------------------------------
def merge_comparisons(n: int) -> tuple[Range, Range]:
    """Comparisons of the novelty merge sort of ``n`` items (a merge of a and b items needs min(a, b) to
    a + b - 1) and its depth (the levels run one after another; a level takes its longest merge)."""
    if n < 2:
        return ZERO, ZERO
    a, b = n // 2, n - n // 2
    (ca, da), (cb, db) = merge_comparisons(a), merge_comparisons(b)
    here = Range(min(a, b), a + b - 1)
    depth = Range(max(da.lo, db.lo), max(da.hi, db.hi)) + here
    return ca + cb + here, depth


def novelty_phase(name: str, model: str, group_sizes, prompt_each: float) -> Phase:
    """Novelty rankings of groups of the given sizes, one unit each: each comparison asks both orders (two
    scored choices), and the comparisons of one level of a group's sort go out together."""
    n, depth = ZERO, ZERO
    for g in group_sizes:
        c, d = merge_comparisons(g)
        n, depth = n + c * 2, Range(max(depth.lo, d.lo), max(depth.hi, d.hi))
    return Phase(name, len([g for g in group_sizes if g > 1]), depth,
                 (choices("judge", model, f"novelty comparisons ({name})", n, prompt_each),),
                 breadth=max(group_sizes, default=1))


# -- the studies -----------------------------------------------------------------------------------------
def apparatus(cfg) -> Estimate:
    from creval.domains import get_domain
    from creval.domains.steps import step_messages
    dom = get_domain("macgyver")
    p = problems("macgyver", 1, cfg.data_seed)[0]
    part = calls("model", cfg.model, "first-step samples", cfg.apparatus_samples,
                 msg_toks(step_messages(dom, p, [], max_steps=5)), cfg.apparatus_max_tokens)
    return Estimate("apparatus", [Phase("samples", 1, Range(1, 1), (part,), breadth=cfg.apparatus_samples)])


def _step_prompts(domain: str, cfg, few: int = 3) -> list[float]:
    """Prompt tokens of step k = 0..max_steps-1 (k typical steps chosen so far), over a few real problems."""
    from creval.domains import get_domain
    from creval.domains.steps import step_messages
    dom, ps = get_domain(domain), problems(domain, max(cfg.limit, few), cfg.data_seed)[:few]
    step = reply_words(cfg.max_step_tokens)
    return [mean(msg_toks(step_messages(dom, p, [step] * k, cfg.max_steps)) for p in ps) for k in range(cfg.max_steps)]


def _first_prompt(domain: str, cfg, few: int = 3) -> float:
    from creval.domains import get_domain
    dom, ps = get_domain(domain), problems(domain, max(cfg.limit, few), cfg.data_seed)[:few]
    return mean(msg_toks([{"role": "system", "content": dom.system_prompt},
                          {"role": "user", "content": dom.render(dom.first_prompt, p, max_steps=cfg.max_steps)}])
                for p in ps)


def solve_parts(cfg, model: str, domain: str, units: int, firsts, n: int, what: str,
                cached_samples: int = 0) -> list[Part]:
    """Step-wise generation of ``units`` problems (paper section 5): one budget answer per new problem
    (``firsts``, a number or a Range), then 1..max_steps steps of ``n`` samples; ``cached_samples`` of each
    step's samples may come from the cache (a rerun at a larger n)."""
    steps = _step_prompts(domain, cfg)
    first_max = cfg.max_steps * cfg.max_step_tokens + 32
    per_step = Range(n - cached_samples, n)
    sample_n = Range(units, units * cfg.max_steps) * per_step
    prompt = Range(units * steps[0], units * sum(steps)) * per_step
    return [calls("model", model, f"{what}: budget answers", firsts, _first_prompt(domain, cfg), first_max),
            Part("model", model, f"{what}: step samples", sample_n, prompt,
                 sample_n * Range(TYPICAL * cfg.max_step_tokens, cfg.max_step_tokens))]


def divergent(cfg) -> Estimate:
    """Tan et al. 2026 section 5: every problem of every domain solved step by step by every model under
    test, the temperature sweep (Fig. 5b), and the LLM entailment judge on held-out pairs."""
    phases, notes, parts, units = [], [], [], 0
    for m in cfg.tested:
        for d in cfg.domains:
            k = len(problems(d, cfg.limit, cfg.data_seed))
            units += k
            parts += solve_parts(cfg, m, d, k, k, cfg.n_samples, f"{d}")
    sweep_k = len(problems(cfg.sweep_domain, cfg.sweep_limit, cfg.data_seed))
    main_k = len(problems(cfg.sweep_domain, cfg.limit, cfg.data_seed)) if cfg.sweep_domain in cfg.domains else 0
    firsts = max(0, sweep_k - main_k)       # the budget answer is at temperature 0: asked once a problem ...
    for t in cfg.temperatures:
        new = max(0, sweep_k - main_k) if float(t) == float(cfg.temperature) else sweep_k   # else solved once
        if new:                             # ... unless two units ask it at the same moment
            units += new
            parts += solve_parts(cfg, cfg.model, cfg.sweep_domain, new, Range(firsts, new), cfg.n_samples,
                                 f"sweep T={t:g}")
            firsts = 0
    if cfg.nli.startswith("llm:"):
        per_step = Range(2 * (cfg.n_samples - 1), cfg.n_samples * (cfg.n_samples - 1))
        steps = Range(units, units * cfg.max_steps)
        parts.append(choices("judge", cfg.nli[4:], "entailment of sample pairs", steps * per_step, 120))
        notes.append("LLM entailment: 2(n-1) to n(n-1) directed pairs a step")
    else:
        notes.append(f"entailment ({cfg.nli}) runs locally: no model call")
    phases.append(Phase("solve", units, Range(2, 1 + cfg.max_steps), tuple(parts), breadth=cfg.n_samples))
    phases.append(_nli_eval(cfg))
    return Estimate("divergent", phases, notes)


def _nli_eval(cfg) -> Phase:
    """Both entailment backends on ``nli_eval_pairs`` SICK and MSRP pairs: the LLM one asks each pair in both
    directions (the three-way labels reuse the forward calls)."""
    from creval.measures.nli.backends import llm_messages
    prompt = msg_toks(llm_messages("A man is playing a guitar on a stage.", "A person plays music."))
    llms = [b[4:] for b in (cfg.nli, f"llm:{cfg.model}") if b.startswith("llm:")]
    parts = tuple(choices("model", m, "entailment evaluation", 2 * 2 * cfg.nli_eval_pairs, prompt)
                  for m in dict.fromkeys(llms))
    return Phase("entailment evaluation", 2 * len(parts), Range(1, 1), parts, breadth=2 * cfg.nli_eval_pairs)


# the judges of chapter 03 (server path: every verdict and certainty is written and parsed)
def judge_chain(cfg, name: str, problem: str, solution: str, crits: list, fb: int) -> tuple[Range, Range, Range, Range]:
    """One judge on one pair: ``(calls, prompt tokens, completion tokens, depth)`` over ``crits``."""
    from creval.judges.base import crit_def, crit_name, render
    info = render("info", problem=problem.strip(), solution=solution.strip())
    r, R, wl = cfg.judge_retries, cfg.judge_max_rounds, cfg.judge_word_limit
    disc = int(wl * 1.6) + 16
    reply = Range(TYPICAL, 1.0)
    n, pt, ct, depth = ZERO, ZERO, ZERO, ZERO
    for c in crits:
        cn, cd = crit_name(c), crit_def(c)
        if name in ("zero-shot", "few-shot", "cot"):
            from creval.judges.single import SingleJudge
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
            dsc = toks(render("retrieval_discuss", notes=notes(cfg.judge_k), questions="- none", words=wl, **kw))
            cnf = toks(render("retrieval_confidence", notes=notes(cfg.judge_j), **kw))
            ver = toks(render("retrieval_verdict", notes=notes(cfg.judge_l), **kw))
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
    fb = 1 if cfg.judge_verdict_via == "text+logprobs" else 0
    n, pt, ct, depth = judge_chain(cfg, judge, problem, solution, crits, fb)
    lo = Range(min_share, 1.0)
    part = Part("judge", cfg.judge_model, what, n * pairs * lo, pt * pairs * lo, ct * pairs * lo)
    return Phase(phase, pairs, depth, (part,), breadth=3 if judge in ("retrieval", "chateval") else len(crits))


def convergent(cfg) -> Estimate:
    """Tan et al. 2026 section 4 and Tables 2-5: ``bench_judge`` on every solution of chapter 02, each judge on
    the human-labelled pairs, the retrieval judge at each confidence threshold (Fig. 12)."""
    from creval.studies.convergent.run import LABELLED
    from creval.judges.base import crit_name
    problem, solution = typical_pair()
    phases = []
    for m in cfg.tested:
        for d in cfg.domains:
            k = len(problems(d, cfg.limit, cfg.data_seed))
            phases.append(judge_phase(cfg, f"bench {m}/{d}", cfg.bench_judge, k, list(criteria(d)), problem, solution,
                                      f"{cfg.bench_judge} on chapter 02's solutions"))
    labelled = [c for c in criteria("macgyver") if crit_name(c).lower() in LABELLED]
    pairs = len(macgyver_pairs(cfg.human_pairs, cfg.data_seed))
    for j in cfg.judges:
        phases.append(judge_phase(cfg, f"human pairs: {j}", j, pairs, labelled, problem, solution,
                                  f"{j} on human-labelled pairs"))
    # every threshold repeats the same first round, so it is served by the cache: at most the rounds and
    # verdicts the other thresholds reach (at least nothing new when the retrieval judge already ran)
    for i, t in enumerate(cfg.confidence_thresholds):
        first = i == 0 and "retrieval" not in cfg.judges
        phases.append(judge_phase(cfg, f"sweep T={t:g}", "retrieval", pairs, labelled, problem, solution,
                                  "retrieval at a confidence threshold", min_share=1.0 if first else 0.0))
    return Estimate("convergent", phases, ["the sweep's thresholds reuse each other's cached turns: lower bound 0 "
                                           "for all but the first (upper bound: a full judge run each)",
                                           "bench solutions read as long as a human MacGyver solution"])


def validation(cfg) -> Estimate:
    """Tan et al. 2026 section 6 and appendix H: novelty rankings (pairwise judge, merge sort), crowd vs model
    solutions, and the rerun at ``n_large`` samples (H.2)."""
    from creval.judges.novelty import DEFINITIONS, judge_messages
    problem, solution = typical_pair()
    cmp_prompt = msg_toks(judge_messages((problem, solution), (problem, solution), DEFINITIONS["macgyver"]))
    groups = [len(problems(d, cfg.limit, cfg.data_seed)) for m in cfg.tested for d in cfg.domains]
    sizes, text = aut_human_sizes(cfg.aut_items, cfg.aut_objects, cfg.cambridge_items, cfg.data_seed)
    aut_prompt = msg_toks(judge_messages(("Uses for a brick", text), ("Uses for a brick", text), DEFINITIONS["aut"]))
    phases = [novelty_phase("chapter 02's solutions", cfg.judge_model, groups, cmp_prompt),
              novelty_phase("human-rated AUT responses", cfg.judge_model, [c for d, _, c in sizes if d == "ocsai1"],
                            aut_prompt),
              novelty_phase("labelled MacGyver solutions", cfg.judge_model, [2 * cfg.macgyver_items], cmp_prompt)]
    crowd = [min(c, cfg.n_samples) for c in _crowd_sizes(cfg.human_ref_problems, cfg.seed)]
    ask = toks(f"{problem}\nGive a short step-by-step solution.") + 4
    ref = tuple(calls("model", m, "whole solutions beside the crowd's", sum(crowd), ask, cfg.human_ref_max_tokens)
                for m in cfg.tested)
    phases.append(Phase("human reference", len(crowd) * len(cfg.tested), Range(1, 1), ref,
                        breadth=max(crowd, default=1)))
    d = cfg.domains[0]
    k = len(problems(d, min(cfg.h2_limit, cfg.limit), cfg.data_seed))
    h2 = solve_parts(cfg, cfg.model, d, k, 0, cfg.n_large, "H.2 rerun", cached_samples=min(cfg.n_samples, cfg.n_large))
    phases.append(Phase("H.2 rerun", k, Range(1, cfg.max_steps), tuple(h2), breadth=cfg.n_large))
    return Estimate("validation", phases, ["H.2: the budget answer and the first n_samples samples of a step "
                                           "may come from chapter 02's cache (lower bound)"])


@lru_cache(maxsize=None)
def _crowd_sizes(n: int, seed: int) -> tuple[int, ...]:
    """Crowd solutions of each MacGyver problem of the human reference (as many, up to n_samples, are sampled
    from each model)."""
    from creval.datasets import macgyver
    sets = macgyver.human_solution_sets(min_solutions=3, problems=n, seed=seed)
    return tuple(len(s) for s in sets["solutions"])


def neocoder(cfg) -> Estimate:
    """Lu et al. 2025 (NeoCoder): the live denial-prompting run (Algorithm 1: a chain of rounds per problem,
    the thread growing), and the LLM technique detector on every stored and generated code when asked."""
    from creval.studies.neocoder.run import SOLVER_PROMPT
    ps = neocoder_problems()
    ok = sorted((p for p in ps if p.flags.verifiable and not p.flags.single_test and p.human_solutions),
                key=lambda p: (len(p.statement), p.native))[:cfg.neocoder_live_problems]
    system, mt, R = toks(SOLVER_PROMPT.read_text()) + 4, cfg.neocoder_max_tokens, cfg.neocoder_rounds
    reply = Range(TYPICAL * mt, mt)
    phases, notes = [], []
    if cfg.neocoder_live_mode == "thread":      # round r sees every earlier statement and reply
        prompt = sum((Range(system + (r + 1) * (toks(p.statement) + 4), system + (r + 1) * (toks(p.statement) + 4))
                      + reply * r for r in range(R + 1) for p in ok), ZERO)
        n = len(ok) * (R + 1)
    else:                                       # fresh: each stored state up to R in its own conversation
        n = sum(len([t for t in p.states if t <= R]) for p in ok)
        prompt = Range.of(sum(system + toks(p.statement) + 4 for p in ok for t in p.states if t <= R))
    live = tuple(Part("model", m, "denial rounds", Range(n, n), prompt, reply * n) for m in cfg.tested)
    detect: tuple = ()
    if cfg.neocoder_detector != "static":
        stored = [toks(rd.code) for p in ps[:cfg.neocoder_problems or None] for rd in p.rounds]
        detect = (detection(cfg, len(stored), mean(stored), "technique detection (stored codes)"),
                  detection(cfg, n * len(cfg.tested), TYPICAL * mt, "technique detection (live codes)"))
        notes.append("LLM technique detector: 1 to 3 calls a code (2 re-asks)")
    else:
        notes.append("static technique detector: no model call for the stored rounds")
    per_round = Range(2, 4) if detect else Range(1, 1)
    phases.append(Phase("live denial prompting", len(ok) * len(cfg.tested), per_round * (R + 1), live + detect[1:]))
    if detect:
        phases.insert(0, Phase("replayed codes", max(1, math.ceil(len(ps[:cfg.neocoder_problems or None]) / 20)),
                               Range(1, 3), detect[:1], breadth=20 * 6))
    notes.append(f"{len(ok)} live problems (verifiable, multi-test, with human solutions)")
    return Estimate("neocoder", phases, notes)


def detection(cfg, codes: int, code_tokens: float, what: str) -> Part:
    """The LLM technique detector on ``codes`` programs of about ``code_tokens``: the system prompt with the
    vocabulary and the code; each of at most 2 re-asks adds the reply and a reminder to the thread."""
    from creval.judges.techniques import LLMDetector, PROMPT, REASK
    from creval.measures.techniques import VOCABULARY
    d = LLMDetector(None)
    base = msg_toks([{"role": "system", "content": PROMPT.read_text().replace("{techniques}", "\n".join(
        f"- {t}" for t in VOCABULARY))}, {"role": "user", "content": ""}]) + code_tokens
    grow = d.max_tokens + toks(REASK.read_text()) + 8
    prompt = Range(codes * base, codes * sum(base + a * grow for a in range(d.retries + 1)))
    return Part("judge", cfg.judge_model, what, Range(codes, codes * (1 + d.retries)), prompt,
                Range(codes * TYPICAL * d.max_tokens, codes * (1 + d.retries) * d.max_tokens))


RETHINK_ALL = {"ps": (573, 230), "solver": 310, "aut": 1201}   # sizes of the real data (a key of 0: all)


@lru_cache(maxsize=None)
def ttcw_sources(n: int) -> list[int]:
    """Stories of each source (Claude, GPT-3.5, GPT-4) among the first ``n`` TTCW stories."""
    from creval.datasets import ttcw
    return list(ttcw.load_stories().iloc[:n]["source"].value_counts().sort_index())


def _rethink_counts(cfg) -> dict[str, list[int]]:
    """Texts of each kind of each set (the real data's sizes; a key of 0 means all of them)."""
    ps = [min(cfg.rethink_ps_per_class or n, n) for n in RETHINK_ALL["ps"]]
    solver = cfg.rethink_human_llm_problems or RETHINK_ALL["solver"]
    aut_n = cfg.rethink_aut_ratings or RETHINK_ALL["aut"]
    return {"ps": ps, "solver": [solver, solver], "ttcw": ttcw_sources(cfg.rethink_ttcw_stories),
            "aut": [math.ceil(aut_n / 2), aut_n // 2], "msrp": [2 * cfg.rethink_paraphrase_pairs] * 2}


def rubric_parts(model: str, what: str, n: int, domain: str, text: str, problem: str, analysis_tokens: int,
                 reasks: int = 2) -> list[Part]:
    """The rubric judge (App. G) on ``n`` texts, server path: one analysis each, then every aspect scored in
    its own turn (24 tokens), each re-ask adding the reply and a reminder to that turn's thread."""
    from creval.judges.base import render, template
    from creval.judges.rubric import ASPECTS
    base = msg_toks([{"role": "system", "content": template("rubric_system")},
                     {"role": "user", "content": render(f"rubric_{domain}_analyse", text=text, problem=problem)}])
    asks = [toks(render("rubric_score", aspect=a, anchors=anch, values=", ".join(map(str, vals)))) + 4
            for a, vals, anch in ASPECTS[domain]]
    analysis = Range(TYPICAL * analysis_tokens, analysis_tokens)
    k, grow = n * len(asks), 24 + 20
    prompt = (analysis + base) * k + Range(n * sum(asks), n * sum(asks) * (1 + reasks)) \
        + Range(0, k * grow * reasks * (reasks + 1) / 2) + Range(0, (analysis.hi + base) * k * reasks)
    return [calls("judge", model, f"{what}: analyses", n, base, analysis_tokens),
            Part("judge", model, f"{what}: scores", Range(k, k * (1 + reasks)), prompt,
                 Range(k * TYPICAL * 24, k * (1 + reasks) * 24))]


def rethinking(cfg) -> Estimate:
    """Lu et al. 2025 (Rethinking creativity evaluation): perplexity of every text set under every model under
    test, the rubric judge (App. G) on picked texts, its prompt twist and sampled reruns."""
    from creval.judges.base import render
    from creval.studies.rethinking.run import PPL_CHUNK, WITH_CONTEXT
    problem, solution = typical_pair()
    counts = _rethink_counts(cfg)
    text_toks = {"ps": toks(solution), "solver": toks(solution), "ttcw": int(cfg.rethink_ppl_max_words * 1.3),
                 "aut": 8, "msrp": 25}
    ctx = {"ps": toks(problem), "aut": 6}
    parts, units = [], 0
    for m in cfg.tested:
        for s, kinds in counts.items():
            scored = sum(min(k, cfg.rethink_ppl_items * (2 if s == "msrp" else 1)) for k in kinds)
            units += math.ceil(scored / PPL_CHUNK)
            parts.append(calls("model", m, f"perplexity ({s})", scored, text_toks[s] + 1, 0, completion=ZERO))
            if s in WITH_CONTEXT:
                parts.append(calls("model", m, f"perplexity given the problem ({s})", scored,
                                   text_toks[s] + ctx[s] + 1, 0, completion=ZERO))
    phases = [Phase("perplexity", units, Range(1, 1), tuple(parts), breadth=2 * PPL_CHUNK)]
    jm, rt, reask = cfg.judge_model, cfg.rethink_judge_tokens, 2
    story = words(cfg.rethink_ppl_max_words)
    judged = {"ps": (2 * min(cfg.rethink_judge_items, min(counts["ps"])), "ps", solution),
              "solver": (2 * min(cfg.rethink_judge_items, counts["solver"][0]), "ps", solution),
              "ttcw": (min(cfg.rethink_ttcw_judge_stories, sum(counts["ttcw"])), "cw", story)}
    jparts, units = [], 0
    for s, (n, dom, text) in judged.items():
        if n:
            units += 1
            jparts += rubric_parts(jm, f"rubric ({s})", n, dom, text, problem, rt)
    twist = 2 * min(cfg.rethink_twist_items, sum(counts["ps"]))
    jparts.append(choices("judge", jm, "prompt twist", twist, msg_toks([{"role": "user", "content": render(
        "rubric_twist", problem=problem, text=solution, polarity="unconventional")}])))
    k = min(cfg.rethink_rerun_items, sum(counts["ps"]))
    jparts += rubric_parts(jm, "rubric reruns", k * cfg.rethink_reruns, "ps", solution, problem, rt)
    phases.append(Phase("rubric judge", units + 2, Range(2, 2 + reask), tuple(jparts),
                        breadth=max(n for n, _, _ in judged.values()) * 4 or 1))
    return Estimate("rethinking", phases, [f"text sets at the real data's sizes when a key says all: {RETHINK_ALL}"])


def list_part(role: str, model: str, what: str, jobs, obj: str, text: str, retries: int) -> Part:
    """AUT lists judged (Rabeyah et al. §3.2): ``jobs`` are ``(method, length, how many)``; a list's reply
    budget is 12 tokens + 7 (score) or 5 (rank) a use, and each re-ask adds the reply and the missing uses
    to the thread."""
    from creval.judges.aut import format_items, list_messages
    from creval.judges.base import render
    n, prompt, out = ZERO, ZERO, ZERO
    for method, length, count in jobs:
        base = msg_toks(list_messages(method, obj, [text] * length))
        budget = 12 + length * (7 if method == "score" else 5)
        reask = toks(render(f"aut_reask_{method}", n=length, items=format_items([text] * length))) + 8
        n = n + Range(count, count * (1 + retries))
        prompt = prompt + Range(count * base, count * sum(base + a * (budget + reask) for a in range(retries + 1)))
        out = out + Range(count * TYPICAL * budget, count * (1 + retries) * budget)
    return Part(role, model, what, n, prompt, out)


def aut(cfg) -> Estimate:
    """Rabeyah et al. 2024: uses at three levels from every generator (the highly creative level a chain of
    forceful turns), every judge on every list in both settings and methods (rankings in both orders), and the
    judges on human-rated responses."""
    from creval.judges.aut import pointwise_messages
    from creval.studies.aut.generate import COMMON, CREATIVE, FOLLOWUPS, HIGHLY
    n, F, r, mt = cfg.aut_per_level, cfg.aut_forceful_turns, cfg.aut_retries, cfg.aut_gen_max_tokens
    obj = cfg.aut_things[0] if cfg.aut_things else "fork"
    reply = Range(TYPICAL * mt, mt)
    single = toks(COMMON.format(n=n, object=obj)) + 4, toks(CREATIVE.format(n=n, object=obj)) + 4
    high, follow = toks(HIGHLY.format(n=n, object=obj)) + 4, mean(toks(f.format(n=n)) + 4 for f in FOLLOWUPS)
    chain_prompt = sum((Range(high + t * follow, high + t * follow) + reply * t for t in range(F + 1)), ZERO)
    gen, O = [], len(cfg.aut_things)
    for g in cfg.generators:
        k = O * Range(3 + F, (3 + F) * (1 + r))
        p = O * (Range(sum(single), sum(single)) + chain_prompt) * Range(1, 1 + r)
        gen.append(Part("model", g, "uses (common, creative, forceful chain)", k, p, k * reply))
    phases = [Phase("generate", O * len(cfg.generators) * 3, Range(F + 1, (F + 1) * (1 + r)), tuple(gen))]
    G = len(cfg.generators)
    items = G * 3 * n                                         # uses of one object (full lists)
    lists = []                                                # (setting, list length)
    if "comprehensive" in cfg.aut_settings:
        lists.append(items)
    if "segmented" in cfg.aut_settings:
        lists += [G * 3] * n
    orders = {"score": 1, "rank": 2}
    use = words(LIST_WORDS)
    judge_parts, units = [], 0
    for j in cfg.judges:
        role = "judge" if j == cfg.judge_model and j not in cfg.generators else "model"
        jobs = [(m, L, orders[m] * O) for m in cfg.aut_methods for L in lists]
        judge_parts.append(list_part(role, j, "list judgments", jobs, obj, use, r))
        units += sum(c for _, _, c in jobs)
        if "score" in cfg.aut_methods and cfg.aut_verdict_via == "text+logprobs":
            judge_parts.append(choices(role, j, "pointwise fallback", Range(0, O * sum(lists)),
                                       msg_toks(pointwise_messages(obj, use))))
    phases.append(Phase("judge uses", units, Range(1, 1 + r + 1), tuple(judge_parts)))
    sizes, text = aut_human_sizes(cfg.aut_items, cfg.aut_objects, cfg.cambridge_items, cfg.data_seed)
    size = max(2, cfg.aut_human_list)
    chunks = [min(size, c - g) for _, _, c in sizes for g in range(0, c, size) if c - g >= 2]
    human, units = [], 0
    for j in cfg.judges:
        role = "judge" if j == cfg.judge_model and j not in cfg.generators else "model"
        pw = sum(c for _, _, c in sizes)
        human.append(choices(role, j, "pointwise scores of human responses", pw,
                             msg_toks(pointwise_messages("brick", text))))
        jobs = [(m, c, k) for c in chunks for m, k in (("score", 1), ("rank", 2))]
        human.append(list_part(role, j, "lists of human responses", jobs, "brick", text, r))
        if cfg.aut_verdict_via == "text+logprobs":
            human.append(choices(role, j, "pointwise fallback (human lists)", Range(0, sum(chunks)),
                                 msg_toks(pointwise_messages("brick", text))))
        units += pw + 3 * len(chunks)
    phases.append(Phase("judge human responses", units, Range(1, 1 + r + 1), tuple(human)))
    return Estimate("aut", phases, ["full lists of uses (a short list makes fewer items to judge)",
                                    f"{sum(c for _, _, c in sizes)} human-rated responses in "
                                    f"{len(chunks)} lists of at most {size}"])


def reportcard(cfg) -> Estimate:
    return Estimate("reportcard", [], ["reads the other studies' records: no call of its own"])


ESTIMATORS: dict[str, Callable[[Config], Estimate]] = {
    "apparatus": apparatus, "divergent": divergent, "convergent": convergent, "validation": validation,
    "neocoder": neocoder, "rethinking": rethinking, "aut": aut, "reportcard": reportcard}


# -- money and time --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Speed:
    """How fast one endpoint answers: seconds a request waits before its first token, tokens/s of one reply
    (0: not counted), prompt tokens/s (0: not counted), requests in flight at once, and where that came from."""
    latency_s: float
    tokens_per_s: float
    in_flight: int
    source: str
    prefill_per_s: float = 0.0

    def request_seconds(self, prompt: float, completion: float) -> float:
        return (self.latency_s + (completion / self.tokens_per_s if self.tokens_per_s else 0.0)
                + (prompt / self.prefill_per_s if self.prefill_per_s else 0.0))


def speed(model: str, latency: float | None = None, tokens_per_s: float | None = None,
          in_flight: int | None = None) -> Speed | None:
    """The endpoint speed of ``model``: the flags, else the spec's ``extra: {latency_s, tokens_per_s}``, else a
    local model's measured speed (``creval throughput``); None when nothing says."""
    from creval.models import throughput
    from creval.models.registry import get_spec
    spec = get_spec(model)
    server = spec.backend == "openai"
    slots = in_flight or (int(spec.concurrency) if server else 1)
    ex = spec.extra or {}
    if latency is not None or tokens_per_s is not None:
        return Speed(latency or 0.0, tokens_per_s or 0.0, slots, "flags")
    if "latency_s" in ex or "tokens_per_s" in ex:
        return Speed(float(ex.get("latency_s", 0)), float(ex.get("tokens_per_s", 0)), slots, "spec extra")
    fig = None if server else throughput.load(spec.name)
    if fig:
        return Speed(0.0, float(fig["batched_decode_tps"]), 1, "measured here", float(fig["prefill_tps"]))
    return None


def cost(part: Part) -> Range:
    from creval.models.registry import get_spec
    spec = get_spec(part.model)
    return Range(spec.cost(part.prompt.lo, part.completion.lo), spec.cost(part.prompt.hi, part.completion.hi))


def phase_wall(phase: Phase, speeds: dict[str, Speed | None]) -> Range | None:
    """Seconds of one phase: its requests spread over the in-flight limit (at most ``units x breadth`` at
    once), never less than its longest unit's chain of requests."""
    if not phase.parts:
        return ZERO
    if any(speeds.get(p.model) is None for p in phase.parts):
        return None
    bounds = []
    for end in ("lo", "hi"):
        work, per, reqs = 0.0, [], 0.0
        for p in phase.parts:
            n = max(getattr(p.calls, end), 1e-9)
            t = speeds[p.model].request_seconds(getattr(p.prompt, end) / n, getattr(p.completion, end) / n)
            slots = min(speeds[p.model].in_flight, max(1, phase.units * phase.breadth))
            work += getattr(p.calls, end) * t / slots
            per.append(t)
            reqs += getattr(p.calls, end)
        bounds.append(max(work, getattr(phase.depth, end) * max(per)) if reqs else 0.0)
    return Range(*bounds)


def wall(est: Estimate, speeds: dict[str, Speed | None]) -> Range | None:
    total = ZERO
    for ph in est.phases:
        w = phase_wall(ph, speeds)
        if w is None:
            return None
        total = total + w
    return total


def estimate(cfg: Config) -> Estimate:
    return ESTIMATORS[cfg.study](cfg)
