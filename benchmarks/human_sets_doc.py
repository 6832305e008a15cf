"""docs/human-sets.md's table of the LAMP and Confederacy rows, written from a card rather than by hand (issue 66).

    python benchmarks/human_sets_doc.py RUN_ROOT/reportcard/<run id>/card.jsonl   # rewrites the marked table

Reads the card's rows whose human data is LAMP or Confederacy and writes them between the markers
``<!-- card-rows:begin -->`` and ``<!-- card-rows:end -->`` of docs/human-sets.md, each row with its claimant,
what the measure tracks and the verdict on that claimant's claim, the way chapter 08 shows them. ``--check``
exits 1 when the doc's table differs from the card's (nothing written).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

BEGIN, END = "<!-- card-rows:begin -->", "<!-- card-rows:end -->"
DOC = Path(__file__).resolve().parents[1] / "docs" / "human-sets.md"
SETS = ("LAMP", "Confederacy")


def _num(v, digits: int = 3) -> str:
    return "–" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{float(v):.{digits}f}"


def _est(r: dict, key: str = "value", lo: str = "lo", hi: str = "hi") -> str:
    if r.get(lo) is None or (isinstance(r.get(lo), float) and not math.isfinite(r[lo])):
        return _num(r.get(key))
    return f"{_num(r.get(key))} [{_num(r.get(lo))}, {_num(r.get(hi))}]"


def table(rows: list[dict]) -> str:
    """The markdown table of the LAMP and Confederacy rows of a card (one per measure and human data)."""
    keep = [r for r in rows if str(r.get("human data", "")).startswith(SETS)]
    out = ["| human data | measure | claimant | value [95% interval] | best baseline | lead [interval] | "
           "what it tracks | verdict on the claim |", "|---|---|---|---|---|---|---|---|"]
    last = None
    for r in keep:
        data = r["human data"] if r["human data"] != last else ""
        last = r["human data"]
        tracks = str(r.get("tracking", "")) + (", borderline" if r.get("borderline") else "")
        out.append(f"| {data} | {r['measure']} | {r['paper']} | {r.get('statistic', '')} {_est(r)} | "
                   f"{r.get('baseline') or '–'} {_num(r.get('baseline value'))} | "
                   f"{_est(r, 'difference', 'diff lo', 'diff hi')} | {tracks} | {r.get('verdict', '')} |")
    return "\n".join(out)


def rewrite(doc: str, card_rows: list[dict]) -> str:
    """``doc`` with the text between the markers replaced by :func:`table` of ``card_rows``."""
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{DOC}: the markers {BEGIN} and {END} are missing")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table(card_rows)}\n{END}{tail}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("card", type=Path, help="a card.jsonl of a reportcard run")
    ap.add_argument("--check", action="store_true", help="exit 1 when the doc differs from the card")
    a = ap.parse_args()
    rows = [json.loads(x) for x in a.card.read_text().splitlines() if x.strip()]
    doc = DOC.read_text()
    new = rewrite(doc, rows)
    if a.check:
        print("docs/human-sets.md matches the card" if new == doc else "docs/human-sets.md differs from the card")
        return 0 if new == doc else 1
    DOC.write_text(new)
    print(f"wrote {sum(str(r.get('human data', '')).startswith(SETS) for r in rows)} rows into {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
