"""``creval throughput``: a model's own speed on this machine (prefill, decode, batched decode in tokens/s)."""
from __future__ import annotations

from creval.core.errors import CrevalError
from creval.models import throughput
from creval.models.registry import get_spec, model_name


def cmd_throughput(args) -> int:
    name = model_name(args.model)
    spec = get_spec(args.model)
    if spec.is_server and not args.remote:
        raise CrevalError(f"{name} is served over an API: measuring it sends about {args.streams + 4} requests",
                          "add --remote to measure it anyway")
    f = throughput.ensure(args.model, force=args.force, local_only=False, streams=args.streams)
    print(f"{name} on {f['machine']} (measured {f['measured']}; stored in {throughput.stored_path(spec.name)}):")
    print(f"  prefill          {f['prefill_tps']:8.1f} tokens/s  (a {f['prompt_tokens']}-token prompt)")
    print(f"  decode, 1 stream {f['decode_tps']:8.1f} tokens/s")
    print(f"  decode, {f['streams']} streams {f['batched_decode_tps']:7.1f} tokens/s  "
          f"({f['batched_decode_tps'] / max(f['decode_tps'], 1e-9):.2f}x one stream)")
    print("`creval run` and `creval book` compare each slow phase with these figures.")
    return 0


def register(sub) -> None:
    p = sub.add_parser("throughput", help="measure a model's own speed on this machine (tokens/s), once",
                       description="Measure a model's prefill and decode speed on this machine, one stream and "
                                   "batched, and store it in the data home. `creval run` and `creval book` then "
                                   "say how far each slow phase is from it (its tokens at these rates). Local "
                                   "models are measured automatically after a run that used them.")
    p.add_argument("model", help="a model name (`creval models`) or a spec file")
    p.add_argument("--force", action="store_true", help="measure again even when figures are stored")
    p.add_argument("--remote", action="store_true", help="allow measuring a model behind an API (spends tokens)")
    p.add_argument("--streams", type=int, default=8, help="sequences decoded together (default 8)")
    p.set_defaults(func=cmd_throughput)
