"""The NeoCoder study's runs: the replay of the stored GPT-4 rounds, and live denial prompting (Algorithm 1).

:func:`replay` judges every stored code (both judges, in the sandbox, cached by content), detects its
techniques in the cleaned program and writes one :class:`CodeRecord` per (problem, round) into a run folder
``<run_root>/neocoder/replay/<run id>``; a finished folder is read back (a warm rebuild executes nothing).

:func:`denial_run` runs Algorithm 1 with a registered model (see :func:`denial_prompting`): per problem one
thread; round 0 answers the original statement; each later round detects the techniques of the previous
round's code, draws one new ban with a keyed RNG over the sorted candidates (seed, problem, round), rewrites
the statement (the paper's rendering: a constraint block under the title line, newest ban first) and sends it
as a new user turn of the same thread. Records go to ``<run_root>/neocoder/denial/<run id>``.
"""
from __future__ import annotations

import hashlib
import random
import time
from pathlib import Path

from creval.core.runs import RunStore
from creval.datasets import neocoder as ds
from creval.judges.techniques import VOCABULARY, Detection, HybridDetector, LLMDetector, StaticDetector
from creval.measures.neocoder_correctness import JUDGE_VERSION, judge_codes
from creval.measures.neocoder_extract import fenced_code, salvaged, strict_program
from creval.measures.neogauge import follows, novelty
from creval.studies.config import run_id
from creval.studies.neocoder.config import NeoCoderConfig
from creval.studies.neocoder.records import CodeRecord, RoundRecord

SOLVER_PROMPT = Path(__file__).with_name("solver_prompt.txt")


def problems(cfg: NeoCoderConfig, source=None):
    """The replayed problems (the first ``neocoder_problems`` in upstream order; 0 = all) and their source."""
    ps, src = ds.load(source)
    if cfg.neocoder_problems:
        ps = ps[:cfg.neocoder_problems]
    return ps, src


def make_detector(name: str, model_name: str = ""):
    if name == "static":
        return StaticDetector()
    from creval.models.registry import load_model
    llm = LLMDetector(load_model(model_name))
    return llm if name == "llm" else HybridDetector(StaticDetector(), llm)


def _human_union(p: ds.Problem) -> set[str]:
    return set().union(*[set(t) for t in p.human_techniques]) if p.human_techniques else set()


def _detect_program(detector, codes: list[str]) -> list[Detection]:
    """Detection on the cleaned program (test scaffolding removed), not on the raw reply."""
    cleaned = [strict_program(c) or c for c in codes]
    return detector.detect(cleaned)


def replay(cfg: NeoCoderConfig, source=None, progress: bool = False) -> list[CodeRecord]:
    """One record per stored (problem, round): both judges' verdicts, techniques, following, novelty."""
    ps, src = problems(cfg, source)
    ident = {"problems": [p.native for p in ps], "data": src.kind, "comparator": cfg.neocoder_comparator,
             "salvage": cfg.neocoder_salvage, "detector": cfg.neocoder_detector, "judges": JUDGE_VERSION,
             "detector_model": cfg.neocoder_model if cfg.neocoder_detector != "static" else ""}
    out = cfg.run_path / "neocoder" / "replay" / run_id(ident)
    if (out / "manifest.json").exists() and (out / "codes.jsonl").exists():
        return [CodeRecord.from_dict(d) for d in RunStore(out).read("codes")]
    items = [(p, rd.code) for p in ps for rd in p.rounds]
    verdicts = judge_codes(items, comparator=cfg.neocoder_comparator, progress=progress,
                           workers=cfg.neocoder_workers or None, pack=cfg.neocoder_pack, salvage=cfg.neocoder_salvage)
    detector = make_detector(cfg.neocoder_detector, cfg.neocoder_model)
    dets = _detect_program(detector, [c for _, c in items])
    rows = []
    k = 0
    for p in ps:
        state_of = {r: t for t, r in p.states.items()}
        humans = _human_union(p)
        for rd in p.rounds:
            v, d = verdicts[k], dets[k]
            k += 1
            rows.append(CodeRecord(
                p.problem_id, rd.r, state_of.get(rd.r), list(rd.banned),
                hashlib.sha256(rd.code.encode()).hexdigest()[:16], v["repo"].to_dict(), v["strict"].to_dict(),
                v["repo"].correct, v["strict"].correct, salvaged(rd.code), getattr(detector, "name", "?"),
                list(d.techniques), d.status, follows(d.techniques, rd.banned),
                sorted(set(d.techniques) - humans), novelty(d.techniques, humans), bool(p.human_solutions),
                p.flags.verifiable))
    store = RunStore(out, {**ident, "data_source": str(src)})
    store.write("codes", [r.to_dict() for r in rows])
    store.finish()
    return rows


# ---------------------------------------------------------------------------------------------------
# denial prompting

def constrained_statement(statement: str, banned_newest_first: list[str]) -> str:
    """The paper's rewriting: after the title line, a header and one bullet per banned technique (newest
    first); the rest of the statement unchanged. No bullet for a round that drew nothing (the paper's code
    writes an empty one)."""
    if not banned_newest_first:
        return statement
    title, _, rest = statement.partition("\n")
    block = "\n".join([ds.CONSTRAINT_HEADER] + [f"- {b}" for b in banned_newest_first])
    return f"{title}\n{block}\n{rest}"


def draw_ban(candidates: list[str], seed: int, problem_id: str, r: int) -> tuple[str | None, str]:
    """One candidate, uniformly, with an RNG keyed by (seed, problem, round) over the sorted candidates."""
    key = f"{seed}:{problem_id}:{r}"
    if not candidates:
        return None, key
    rng = random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))
    return rng.choice(sorted(candidates)), key


def live_problems(cfg: NeoCoderConfig, source=None) -> list[ds.Problem]:
    """The live run's problems: the ``neocoder_live_problems`` verifiable multi-test problems with the
    shortest statements (ties by id)."""
    ps, _ = ds.load(source)
    ok = [p for p in ps if p.flags.verifiable and not p.flags.single_test and p.human_solutions]
    return sorted(ok, key=lambda p: (len(p.statement), p.native))[:cfg.neocoder_live_problems]


def denial_prompting(model, problem: ds.Problem, cfg: NeoCoderConfig, detector) -> list[RoundRecord]:
    """Algorithm 1 for one problem: ``cfg.neocoder_rounds`` denial rounds after the first solution."""
    system = SOLVER_PROMPT.read_text()
    thread = [{"role": "system", "content": system}]
    banned: list[str] = []            # oldest first
    humans = _human_union(problem)
    rows: list[RoundRecord] = []
    prev_techniques: list[str] = []
    allowed = set(VOCABULARY) - {"misc"}
    for r in range(cfg.neocoder_rounds + 1):
        candidates, chosen, key = [], None, ""
        if r > 0:
            candidates = sorted(t for t in set(prev_techniques) - set(banned) if t in allowed)
            chosen, key = draw_ban(candidates, cfg.seed, problem.problem_id, r)
            if chosen:
                banned.append(chosen)
        statement = constrained_statement(problem.statement, list(reversed(banned)))
        thread = thread + [{"role": "user", "content": statement}]
        t0 = time.time()
        comp = model.chat(thread, temperature=cfg.neocoder_temperature, max_tokens=cfg.neocoder_max_tokens,
                          seed=cfg.seed)
        secs = time.time() - t0
        thread = thread + [{"role": "assistant", "content": comp.text}]
        ext = fenced_code(comp.text)
        v = judge_codes([(problem, ext.code)], pack="program")[0]
        d = _detect_program(detector, [ext.code])[0]
        f = follows(d.techniques, banned)
        nov = novelty(d.techniques, humans)
        state = len(banned) if (r == 0 or chosen) else None
        rows.append(RoundRecord(
            problem.problem_id, model.name, "thread", r, state, list(banned), candidates, chosen, key, statement,
            comp.text, comp.input_tokens, comp.output_tokens, comp.finish_reason, ext.code, ext.status,
            v["repo"].to_dict(), v["strict"].to_dict(), getattr(detector, "name", "?"), list(d.techniques), d.status,
            f, sorted(set(d.techniques) - humans), nov, float(f and v["strict"].correct) * nov, round(secs, 2)))
        prev_techniques = list(d.techniques)
    return rows


def benchmark_problem(model, problem: ds.Problem, cfg: NeoCoderConfig, detector) -> list[RoundRecord]:
    """The paper's benchmarking mode (Eq. 1): each stored statement of the problem's states, answered in a
    fresh conversation (no earlier rounds in context); duplicate rounds are not asked."""
    system = SOLVER_PROMPT.read_text()
    humans = _human_union(problem)
    rows = []
    for t, r in sorted(problem.states.items()):
        rd = problem.rounds[r]
        thread = [{"role": "system", "content": system}, {"role": "user", "content": rd.statement}]
        t0 = time.time()
        comp = model.chat(thread, temperature=cfg.neocoder_temperature, max_tokens=cfg.neocoder_max_tokens,
                          seed=cfg.seed)
        secs = time.time() - t0
        ext = fenced_code(comp.text)
        v = judge_codes([(problem, ext.code)], pack="program")[0]
        d = _detect_program(detector, [ext.code])[0]
        f = follows(d.techniques, rd.banned)
        nov = novelty(d.techniques, humans)
        rows.append(RoundRecord(
            problem.problem_id, model.name, "fresh", r, t, list(rd.banned), [], None, "", rd.statement, comp.text,
            comp.input_tokens, comp.output_tokens, comp.finish_reason, ext.code, ext.status, v["repo"].to_dict(),
            v["strict"].to_dict(), getattr(detector, "name", "?"), list(d.techniques), d.status, f,
            sorted(set(d.techniques) - humans), nov, float(f and v["strict"].correct) * nov, round(secs, 2)))
    return rows


def denial_run(cfg: NeoCoderConfig, source=None, progress: bool = False, mode: str = "thread") -> list[RoundRecord]:
    """Algorithm 1 (``mode="thread"``) or the stateless benchmarking mode (``"fresh"``: the stored statements)
    with ``cfg.neocoder_model`` on the live problems; a finished run folder is read back."""
    ps = live_problems(cfg, source)
    _, src = ds.load(source)
    ident = {"model": cfg.neocoder_model, "problems": [p.native for p in ps], "rounds": cfg.neocoder_rounds,
             **({"mode": mode} if mode != "thread" else {}),
             "max_tokens": cfg.neocoder_max_tokens, "temperature": cfg.neocoder_temperature, "seed": cfg.seed,
             "detector": cfg.neocoder_detector, "data": src.kind}
    out = cfg.run_path / "neocoder" / "denial" / run_id(ident)
    store = RunStore(out, ident)
    done = {(d["problem_id"], d["round"]) for d in store.read("rounds")} if store.path("rounds").exists() else set()
    expected = (len(ps) * (cfg.neocoder_rounds + 1) if mode == "thread"
                else sum(len([t for t in p.states if t <= cfg.neocoder_rounds]) for p in ps))
    if (out / "manifest.json").exists() and len(done) == expected:
        return [RoundRecord.from_dict(d) for d in store.read("rounds")]
    from creval.models.registry import load_model
    model = load_model(cfg.neocoder_model)
    store.note_model(model)
    store.seeds["sampling"] = cfg.seed
    detector = make_detector(cfg.neocoder_detector, cfg.neocoder_model)
    if store.path("rounds").exists():
        store.write("rounds", [])
    for p in ps:
        if mode == "thread":
            rows = denial_prompting(model, p, cfg, detector)
        else:
            rows = [r for r in benchmark_problem(model, p, cfg, detector) if r.state <= cfg.neocoder_rounds]
        store.append("rounds", [r.to_dict() for r in rows])
    store.finish()
    return [RoundRecord.from_dict(d) for d in store.read("rounds")]


# ---------------------------------------------------------------------------------------------------
# the test-suite check behind ``datasets.neocoder.UNVERIFIABLE``

def human_pass_rates(source=None, progress: bool = False, workers: int | None = None) -> list[dict]:
    """Run every distinct human Python 3 solution through the strict judge's sandbox run (whole program, real
    test file); one row per problem: solutions run, passed, verdict counts, the stored flags. Problems where at
    most one in five passes are the candidates for ``UNVERIFIABLE`` (cached: a rerun executes nothing)."""
    from collections import Counter

    from creval.measures.neocoder_correctness import Verdict, _case_verdict, _overall, _split_verdicts, test_stdins
    from creval.measures.neocoder_extract import parse
    from creval.sandbox import Limits, program_unit, run_units

    ps, _ = ds.load(source)
    units, owner = [], []
    for p in ps:
        for h in dict.fromkeys(p.human_solutions):
            try:
                parse(h)
            except (SyntaxError, ValueError):
                continue
            units.append(program_unit(h, test_stdins(p), Limits(), group=p.problem_id))
            owner.append(p)
    results = run_units(units, workers=workers, progress=progress)
    per: dict[str, Counter] = {}
    for p, r in zip(owner, results):
        if r.get("sandbox_error") or r.get("not_parsable"):
            v = "not parsable"
        elif p.flags.single_test:
            v = _overall([_case_verdict(c, pc.expected, p.flags.yes_no, "lines") for c, pc in zip(r["cases"], p.cases)])
        else:
            v = _split_verdicts(r["cases"][0], p, "lines")[0]
        per.setdefault(p.problem_id, Counter())[v] += 1
    rows = []
    for p in ps:
        c = per.get(p.problem_id, Counter())
        n = sum(c.values())
        rows.append({"problem_id": p.problem_id, "python solutions": n, "passed": c.get("OK", 0),
                     "verdicts": dict(c), "suspect": n > 0 and c.get("OK", 0) <= max(1, n // 5),
                     "input_flattened": p.flags.input_flattened, "needs_checker": p.flags.needs_checker})
    return rows
