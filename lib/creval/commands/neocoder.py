"""``creval neocoder replay|run|score``: NeoCoder (denial prompting and NeoGauge on Codeforces problems)."""
from __future__ import annotations

from creval.studies.neocoder.config import NeoCoderConfig

D = NeoCoderConfig()


def register(subparsers) -> None:
    p = subparsers.add_parser("neocoder", help="NeoCoder: replay the stored GPT-4 rounds, run denial prompting, score",
                              description="Replay the stored GPT-4 codes under the repo-compatible and the strict "
                                          "judge (sandboxed, cached), run denial prompting (Algorithm 1) with a "
                                          "registered model, or print Table 1/Table 3 from the records.")
    sub = p.add_subparsers(dest="neocoder_cmd", required=True)
    for name, help_ in (("replay", "judge every stored GPT-4 code with both judges and print Table 3's pass@1"),
                        ("run", "denial prompting with --model on the shortest verifiable problems"),
                        ("score", "Table 1, Table 3 and the creativity columns from the replay records"),
                        ("humans", "run the human Python solutions through the strict judge (the test-suite check)")):
        q = sub.add_parser(name, help=help_)
        q.add_argument("--run-root", default=D.run_root, help="where run folders go (default: %(default)s)")
        q.add_argument("--problems", type=int, default=D.neocoder_problems, help="replayed problems, 0 for all")
        q.add_argument("--workers", type=int, default=D.neocoder_workers, help="parallel sandbox launches (0: CPUs)")
        q.add_argument("--detector", default=D.neocoder_detector, help="static | llm | hybrid")
        q.add_argument("--model", default=D.neocoder_model, help="registered model (run; llm/hybrid detectors)")
        q.add_argument("--live-problems", type=int, default=D.neocoder_live_problems)
        q.add_argument("--rounds", type=int, default=D.neocoder_rounds, help="denial rounds (paper: 5)")
        q.add_argument("--max-tokens", type=int, default=D.neocoder_max_tokens)
        q.add_argument("--temperature", type=float, default=D.neocoder_temperature)
        q.add_argument("--seed", type=int, default=D.seed)
        q.add_argument("--fresh", action="store_true",
                       help="run: the benchmarking mode (each stored statement in a fresh conversation)")
        q.set_defaults(func=main)


def _cfg(args) -> NeoCoderConfig:
    return NeoCoderConfig(run_root=args.run_root, neocoder_problems=args.problems, neocoder_workers=args.workers,
                          neocoder_detector=args.detector, neocoder_model=args.model,
                          neocoder_live_problems=args.live_problems, neocoder_rounds=args.rounds,
                          neocoder_max_tokens=args.max_tokens, neocoder_temperature=args.temperature, seed=args.seed)


def main(args) -> int:
    from creval.studies.neocoder import report, run
    cfg = _cfg(args)
    if args.neocoder_cmd == "run":
        recs = run.denial_run(cfg, progress=True, mode="fresh" if args.fresh else "thread")
        if not args.fresh:
            print(report.live(cfg).to_string(index=False))
        print(f"{len(recs)} rounds")
        return 0
    if args.neocoder_cmd == "humans":
        rows = run.human_pass_rates(progress=True, workers=args.workers or None)
        sus = [r for r in rows if r["suspect"]]
        flagged = [r for r in rows if r["input_flattened"] or r["needs_checker"]]
        for r in sus:
            print(f"{r['problem_id']}: {r['passed']}/{r['python solutions']} pass {r['verdicts']} "
                  f"flagged={r['input_flattened'] or r['needs_checker']}")
        print(f"{len(sus)} problems where at most one in five human Python solutions passes; "
              f"{len(flagged)} flagged unverifiable; {sum(1 for r in sus if not (r['input_flattened'] or r['needs_checker']))} "
              f"suspect but not flagged")
        return 0
    if args.neocoder_cmd == "replay":
        recs = run.replay(cfg, progress=True)
        print(f"{len(recs)} codes judged")
        print(report.table3(cfg).to_string(index=False))
        return 0
    print(report.table1(cfg).to_string(index=False))
    print(report.table3(cfg).to_string(index=False))
    print(report.table3(cfg, "verifiable").to_string(index=False))
    print(report.creativity(cfg).to_string(index=False))
    return 0
