"""Domain registry, criteria and the dataset loaders (offline: sources given locally or bundled)."""
import json

import pytest

from creval.core import paths
from creval.core.errors import CrevalError
from creval.core.text import split_sentences
from creval.domains import DOMAINS, Criterion, get_domain, load_criteria


@pytest.fixture(autouse=True)
def offline(monkeypatch, tmp_path):
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    for v in ("CREVAL_MACGYVER_DIR", "CREVAL_HYPOGEN_DIR", "CREVAL_BOOKMIA_DIR"):
        monkeypatch.delenv(v, raising=False)


def test_registry_and_criteria():
    assert set(DOMAINS) == {"macgyver", "hypogen", "bookmia"}
    names = {d: [c.name for c in get_domain(d).criteria] for d in DOMAINS}
    assert names == {"macgyver": ["feasibility", "safety", "effectiveness"],
                     "hypogen": ["feasibility", "relevance", "scientific accuracy"],
                     "bookmia": ["narrative coherence", "emotional and psychological realism", "plot completion"]}
    assert get_domain("BookMIA").unit == "sentence" and get_domain("macgyver").unit == "step"
    with pytest.raises(CrevalError, match="unknown domain 'poetry'"):
        get_domain("poetry")
    d = get_domain("macgyver")
    with pytest.raises(Exception):
        d.name = "x"   # frozen


def test_bundled_samples_and_filter():
    d = get_domain("macgyver")
    probs, where = d.load_with_source()
    assert where == f"sample:{paths.samples_dir() / 'macgyver' / 'problem_solution_pair.jsonl'}"
    ids = {p.problem_id for p in probs}
    assert len(probs) == 8 and "macgyver-s9" not in ids     # the unsolvable row is dropped
    assert all(p.domain == "macgyver" and p.text == p.fields["problem"] for p in probs)
    assert len(get_domain("hypogen").load()) == 5 and len(get_domain("bookmia").load()) == 5


def test_shuffle_is_deterministic():
    d = get_domain("macgyver")
    a = [p.problem_id for p in d.load(seed=42)]
    assert a == [p.problem_id for p in d.load(seed=42)]
    assert [p.problem_id for p in d.load(limit=3)] == a[:3]          # default seed is the paper's 42
    assert sorted(a) == sorted(p.problem_id for p in d.load(seed=7))
    assert a != [p.problem_id for p in d.load(seed=7)]


def test_hypogen_shows_bit_and_flip_hides_reasoning(tmp_path):
    rows = [{"paper_id": "p1", "bit": "Old belief.", "flip": "New idea.", "chain_of_reasoning": "SECRET CHAIN"}]
    f = tmp_path / "samples.json"
    f.write_text(json.dumps(rows))
    d = get_domain("hypogen")
    [p], where = d.load_with_source(source=tmp_path)           # a folder holding samples.json
    assert p.problem_id == "hypogen-p1" and "Old belief." in p.text and "New idea." in p.text
    assert "SECRET" not in p.text and p.fields["hidden_chain_of_reasoning"] == "SECRET CHAIN"
    assert where == f"local:{f}"


def test_bookmia_snippet_first_and_last_sentence(tmp_path, monkeypatch):
    f = tmp_path / "bookmia.jsonl"
    f.write_text(json.dumps({"book_id": "b", "snippet_id": 3, "snippet": "It rained. Tom \"ran\" home! Was he late? "
                                                                        "Nobody knew. The end came."}) + "\n")
    monkeypatch.setenv("CREVAL_BOOKMIA_DIR", str(tmp_path))
    [p] = get_domain("bookmia").load()
    assert (p.fields["starter"], p.fields["ending"]) == ("It rained.", "The end came.")
    assert p.text == "Starter: It rained.\nEnding: The end came." and p.problem_id == "bookmia-b-3"
    assert split_sentences("A b. C d? E") == ["A b.", "C d?", "E"]


def test_macgyver_xlsx_and_download_cache(tmp_path):
    import openpyxl
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["ID", "Problem", "Solvable?", "Unconventional?", "Solution", "Label"])
    ws.append([1, "Fix a thing with a spoon.", "Yes", "unconventional", "Step1: x <br> Step2: y", "efficient"])
    ws.append([2, "Impossible thing.", "No", None, "No.", "correct_right_reason"])
    ws.append([3, "Open a jar with a towel.", "Yes", "conventional", "Step1: z", "efficient"])
    src = tmp_path / "p.xlsx"
    wb.save(src)
    d = get_domain("macgyver")
    got = sorted(p.problem_id for p in d.load(source=src))
    assert got == ["macgyver-1", "macgyver-3"]
    # a copy in the download cache is used before the bundled sample
    cached = paths.home() / "datasets" / "macgyver" / "problem_solution_pair.xlsx"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(src.read_bytes())
    probs, where = d.load_with_source()
    assert len(probs) == 2 and where == f"download:{cached}"


def test_bad_files_name_the_file(tmp_path):
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"ID": 1, "Problem": "x"\n')
    with pytest.raises(CrevalError, match="broken.jsonl"):
        get_domain("macgyver").load(source=bad)
    cols = tmp_path / "cols.json"
    cols.write_text(json.dumps([{"question": "x"}]))
    with pytest.raises(CrevalError, match=r"cols\.json.*'Problem'"):
        get_domain("macgyver").load(source=cols)
    with pytest.raises(CrevalError, match="does not exist"):
        get_domain("hypogen").load(source=tmp_path / "nope")
    xl = tmp_path / "fake.xlsx"
    xl.write_text("not a zip")
    with pytest.raises(CrevalError, match="fake.xlsx"):
        get_domain("macgyver").load(source=xl)


def test_load_criteria(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("macgyver:\n  cost: uses cheap items\n  speed: finishes quickly\n"
                 "bookmia:\n  - {name: humour, definition: is funny}\n")
    crit = load_criteria(f)
    assert crit["macgyver"] == (Criterion("cost", "uses cheap items"), Criterion("speed", "finishes quickly"))
    d = get_domain("bookmia", criteria_file=f)
    assert [c.name for c in d.criteria] == ["humour"]
    assert [c.name for c in get_domain("hypogen", criteria_file=f).criteria][0] == "feasibility"  # untouched
    f.write_text("chess: {a: b}\n")
    with pytest.raises(CrevalError, match="unknown domain 'chess'"):
        load_criteria(f)
    f.write_text("macgyver: [{name: x}]\n")
    with pytest.raises(CrevalError, match="name, definition"):
        load_criteria(f)
