"""The item browser's data (issue 43): every row of every table, values JSON can hold, filters on the columns a
reader narrows by, ids shared across tables; the page embeds it safely; publishing writes a study's browser and
downloads from its finished run and never lets one study's failure stop the others."""
import json
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from creval.book import publish as pub
from creval.book.browse import (
    AGREES,
    MAX_LIST,
    SHORT,
    columns_of,
    context_columns,
    embed,
    filter_columns,
    fitted_payload,
    key_columns,
    page,
    plain,
    study_payload,
    with_agreement,
)
from creval.core.records import Record, optional
from creval.studies.config import Config
from creval.studies.contract import Study


@dataclass
class Verdict(Record):
    pair_id: str
    model: str
    verdict: str
    text: str
    note: str | None = optional()


def verdicts(n=6):
    return [{"pair_id": f"p{i}", "model": "m1" if i % 2 else "m2", "verdict": ["yes", "no", "unparsed"][i % 3],
             "text": f"a long answer number {i} " * 10} for i in range(n)]


def test_plain_values_are_what_json_holds_and_say_what_was_cut():
    assert plain(float("nan")) is None and plain(math.inf) is None and plain(np.float64(0.5)) == 0.5
    assert plain(np.int64(3)) == 3 and plain(np.array([1, 2])) == [1, 2]
    assert plain({"a": [float("nan"), 1]}) == {"a": [None, 1]}
    long = plain(list(range(MAX_LIST + 7)))
    assert len(long) == MAX_LIST + 1 and long[-1] == "[... 7 more]"


def test_columns_follow_the_record_type_then_the_rest():
    rows = [{"extra": 1, "text": "t", "model": "m", "pair_id": "p", "verdict": "yes"}]
    assert columns_of(rows, Verdict) == ["pair_id", "model", "verdict", "text", "extra"]
    assert columns_of(rows) == ["extra", "text", "model", "pair_id", "verdict"]


def test_filters_are_the_short_columns_with_few_values_named_ones_first():
    rows = [{**r, "n": i % 2, "steps": [1, 2]} for i, r in enumerate(verdicts(8))]
    cols = columns_of(rows, Verdict)
    # pair_id has a value per row but under the limit of levels; text is long; steps is a list
    assert filter_columns(cols, rows)[:2] == ["model", "verdict"]
    assert "text" not in filter_columns(cols, rows) and "steps" not in filter_columns(cols, rows)
    assert filter_columns(["c"], [{"c": 1}, {"c": 1}]) == []          # one value: nothing to filter
    assert filter_columns(["c"], [{"c": 0.25}, {"c": 0.5}]) == []      # a measured fraction: searched, not filtered
    assert filter_columns(["c"], [{"c": 1.0}, {"c": float("nan")}]) == ["c"]


def test_key_columns_are_the_id_columns_two_tables_share():
    tables = {"verdicts": ["pair_id", "model", "judge"], "transcripts": ["pair_id", "judge", "text"],
              "other": ["model", "text"]}
    assert key_columns(tables) == ["judge", "pair_id"]
    assert context_columns(tables) == ["judge", "model"]          # text is shared but neither id nor context


def test_the_payload_holds_every_row_as_a_list_and_skips_empty_tables():
    p = study_payload("toy", {"verdicts": (verdicts(3), Verdict), "empty": ([], dict)}, {"chapter": "../c.html"})
    (t,) = p["tables"]
    assert t["name"] == "verdicts" and t["record"] == "Verdict" and len(t["rows"]) == 3
    assert t["rows"][1][:3] == ["p1", "m1", "no"] and p["links"] == {"chapter": "../c.html"}


def test_agreement_with_people_is_the_verdict_equal_to_the_label_where_both_are_known():
    rows = [{"verdict": "yes", "label": 1}, {"verdict": "no", "label": 1}, {"verdict": None, "label": 0},
            {"verdict": False, "label": 0}]
    assert [r[AGREES] for r in with_agreement(rows)] == [True, False, None, True]
    assert with_agreement([{"verdict": "yes"}]) == [{"verdict": "yes"}]          # no human label: no column
    t = study_payload("toy", {"v": (rows, None)})["tables"][0]
    assert t["columns"][-1] == AGREES and AGREES in t["filters"]


def test_a_page_past_its_budget_cuts_long_values_shorter_and_says_so():
    rows = [{"pair_id": f"p{i}", "text": "x" * 5_000, "logprobs": list(range(80))} for i in range(20)]
    whole = fitted_payload("toy", {"t": (rows, None)}, budget=10**7)
    assert whole["note"] == "" and whole["tables"][0]["rows"][0][1] == "x" * 5_000
    small = fitted_payload("toy", {"t": (rows, None)}, budget=50_000)
    text, logprobs = small["tables"][0]["rows"][0][1:]
    assert text == "x" * SHORT.text + " [... 3000 more characters]" and logprobs[-1] == "[... 30 more]"
    assert "the downloads hold them whole" in small["note"] and len(embed(small)) < len(embed(whole)) / 2


def test_the_page_embeds_the_data_so_no_text_can_close_its_script():
    p = study_payload("toy", {"verdicts": ([{"pair_id": "p", "text": "</script><b>x</b>"}], None)})
    text = page(p)
    assert "</script><b>" not in text and "<title>Items of the toy study</title>" in text
    assert "http" not in text.split('id="creval-data"')[0]           # nothing loaded from the network
    data = text.split('id="creval-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["tables"][0]["rows"] == [["p", "</script><b>x</b>"]]
    assert json.loads(embed({"x": [None]})) == {"x": [None]}


@dataclass(frozen=True)
class ToyConfig(Config):
    study: ClassVar[str] = "toybrowse"


def toy_study() -> Study:
    return Study("toybrowse", "chapters/99-toy.ipynb", ToyConfig, lambda cfg: cfg.run_dir,
                 tables={"verdicts": Verdict, "unwritten": Verdict})


def finished_run(cfg, rows) -> None:
    cfg.run_dir.mkdir(parents=True)
    (cfg.run_dir / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (cfg.run_dir / "manifest.json").write_text(json.dumps({"complete": True, "params": {"run_id": cfg.run_id}}))


def test_publishing_a_finished_run_writes_its_browser_and_downloads(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    study = toy_study()
    assert pub.publish_study(study, {}, tmp_path / "site") == {"study": "toybrowse", "written": False,
                                                                 "why": "its run is not finished"}
    finished_run(study.make_config({}), verdicts(4))
    row = pub.publish_study(study, {}, tmp_path / "site")
    assert row["written"] and row["rows"] == 4 and row["bytes"] > row["page_bytes"] > 0
    html = (tmp_path / "site" / "browse" / "toybrowse.html").read_text()
    data = json.loads(html.split('id="creval-data">', 1)[1].split("</script>", 1)[0])
    assert [t["name"] for t in data["tables"]] == ["verdicts"]
    assert data["links"]["downloads"] == "../downloads/toybrowse/index.html"
    folder = tmp_path / "site" / "downloads" / "toybrowse"
    assert {"verdicts.csv", "dictionary.md", "dictionary.csv", "index.html"} <= {f.name for f in folder.iterdir()}
    assert "verdicts.csv" in (folder / "index.html").read_text()


def test_one_study_failing_is_one_line_and_the_others_are_published(tmp_path, monkeypatch, capsys):
    def fake(study, params, site):
        if study.name == "divergent":
            raise ValueError("bad rows")
        return {"study": study.name, "written": True}
    monkeypatch.setattr(pub, "publish_study", fake)
    rows = pub.publish(tmp_path, {}, ["apparatus", "divergent", "aut"])
    assert [r["study"] for r in rows] == ["apparatus", "divergent", "aut"]
    assert [r["written"] for r in rows] == [True, False, True] and "bad rows" in rows[1]["why"]
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["item browser of divergent not written: ValueError: bad rows"]


def test_the_book_publishes_after_rendering_and_records_it_in_its_manifest(tmp_path, monkeypatch):
    from creval.book import build
    seen = {}
    monkeypatch.setattr(build, "run_studies", lambda params, names, **kw: [])
    monkeypatch.setattr(build, "execute_chapters", lambda *a, **k: [])
    monkeypatch.setattr(build, "render_offline", lambda out: out / "site" / "index.html")

    def publish(site, params, names):
        seen["site"] = site
        return [{"study": "apparatus", "written": True, "rows": 4}]
    monkeypatch.setattr(build, "publish", publish)
    m = build.build_book({}, tmp_path, only=["01"], render="offline", progress=False)
    assert seen["site"] == tmp_path / "site" and m["published"] == [{"study": "apparatus", "written": True, "rows": 4}]
    assert m["seconds_publish"] >= 0 and json.loads((tmp_path / "book-manifest.json").read_text())["published"]
    seen.clear()
    assert build.build_book({}, tmp_path, only=["01"], render="none", progress=False)["published"] == []
    assert seen == {}                                                  # nothing rendered: nothing published


def test_the_list_shows_ids_then_labels_then_scores_and_leaves_long_texts_to_the_item():
    from creval.book.browse import listed_columns
    rows = [{"text": "a long answer " * 20, "model": "m", "score": 0.5, "pair_id": "p1", "human_label": 1,
             "steps": [1, 2], "verdict": "yes"}]
    cols = list(rows[0])
    assert listed_columns(cols, rows) == ["pair_id", "human_label", "verdict", "score", "model", "text", "steps"]
    assert listed_columns(cols, rows, 3) == ["pair_id", "human_label", "verdict"]
    assert study_payload("s", {"t": (rows, None)})["tables"][0]["listed"][:2] == ["pair_id", "human_label"]
