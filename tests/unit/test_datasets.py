"""The one fallback chain of every dataset (env > ../shared > download > sample), pinned sha256 downloads,
clear errors for broken files, and MacGyver's one id scheme. No network: downloads come from a local server."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import shutil

import pytest

from creval.core import paths
from creval.core.errors import CrevalError
from creval.core.io import ChecksumError, download
from creval.datasets import aut, base, bookmia, hypogen, macgyver, msrp, sick
from creval.domains import get_domain

SAMPLE = paths.samples_dir() / "macgyver"
ENVS = [d.DATASET.env for d in (aut, bookmia, hypogen, macgyver, msrp, sick)]


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """No env vars, no ../shared, an empty data home, offline; download failures forgotten."""
    for v in ENVS:
        monkeypatch.delenv(v, raising=False)
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    monkeypatch.setenv("CREVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CREVAL_OFFLINE", "1")
    base.FAILURES.reset()
    yield
    base.FAILURES.reset()


def _macgyver_folder(root, tag: str):
    """A MacGyver folder whose problem ids carry ``tag`` (so we can tell which source answered)."""
    root.mkdir(parents=True)
    rows = [json.loads(x) for x in (SAMPLE / "problem_solution_pair.jsonl").read_text().splitlines()]
    (root / "problem_solution_pair.jsonl").write_text(
        "".join(json.dumps({**r, "ID": f"{tag}{r['ID']}"}) + "\n" for r in rows))
    return root


def _served_macgyver(monkeypatch, www, url, tag="dl", sha=None):
    """Serve a MacGyver problems file and point the dataset's one remote at it (pinned ``sha`` or the real one)."""
    f = _macgyver_folder(www / "mg", tag) / "problem_solution_pair.jsonl"
    real = hashlib.sha256(f.read_bytes()).hexdigest()
    ds = dataclasses.replace(macgyver.DATASET, remotes=(
        base.Remote(f"{url}/mg/problem_solution_pair.jsonl", sha or real, "problem_solution_pair.jsonl"),))
    monkeypatch.setattr(macgyver, "DATASET", ds)
    return real


def test_fallback_order_env_shared_download_sample(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    _macgyver_folder(shared / "macgyver" / "data", "sh")            # the staged layout: macgyver/data/...
    env = _macgyver_folder(tmp_path / "env", "env")
    _macgyver_folder(paths.downloads_dir() / "macgyver", "dl")        # a previous download

    def where():
        rows, src = macgyver.load_problems()
        return src.kind, rows[0]["problem_id"]

    monkeypatch.setenv("CREVAL_SHARED_DATA", str(shared))
    monkeypatch.setenv("CREVAL_MACGYVER_DIR", str(env))
    assert where() == ("local", "macgyver-envs1")
    monkeypatch.delenv("CREVAL_MACGYVER_DIR")
    assert where() == ("shared", "macgyver-shs1")
    assert str(macgyver.source()) == f"shared:{shared / 'macgyver'}"
    monkeypatch.setenv("CREVAL_SHARED_DATA", "none")
    assert where() == ("download", "macgyver-dls1")
    shutil.rmtree(paths.downloads_dir())
    assert where() == ("sample", "macgyver-s1")
    assert str(macgyver.source()) == f"sample:{SAMPLE}"
    # an explicit source argument beats the env var
    monkeypatch.setenv("CREVAL_MACGYVER_DIR", str(env))
    assert macgyver.load_problems(_macgyver_folder(tmp_path / "arg", "arg"))[0][0]["problem_id"] == "macgyver-args1"


def test_download_beats_sample_and_is_kept(tmp_path, monkeypatch, server):
    www, url = server
    monkeypatch.setenv("CREVAL_OFFLINE", "0")
    _served_macgyver(monkeypatch, www, url)
    assert macgyver.source().kind == "sample"                        # a lookup only looks: no download
    assert not (paths.downloads_dir() / "macgyver").exists()
    assert base.fetch_dataset(macgyver.DATASET).kind == "download"   # a study's fetch step downloads
    assert macgyver.source().kind == "download"
    shutil.rmtree(paths.downloads_dir() / "macgyver")
    rows, src = macgyver.load_problems()                             # a loader downloads
    assert src.kind == "download" and rows[0]["problem_id"] == "macgyver-dls1"
    assert (paths.downloads_dir() / "macgyver" / "problem_solution_pair.jsonl").exists()
    shutil.rmtree(www / "mg")                                        # gone upstream: the kept copy answers
    assert macgyver.load_problems()[1] == src
    # shared still beats a download
    _macgyver_folder(tmp_path / "shared" / "macgyver", "sh")
    monkeypatch.setenv("CREVAL_SHARED_DATA", str(tmp_path / "shared"))
    assert macgyver.source().kind == "shared"


def test_sha256_mismatch_is_refused(tmp_path, monkeypatch, server, caplog):
    www, url = server
    monkeypatch.setenv("CREVAL_OFFLINE", "0")
    _served_macgyver(monkeypatch, www, url, sha="0" * 64)
    with caplog.at_level(logging.INFO, logger="creval.datasets"):
        src = macgyver.source(allow_download=True)
    assert src.kind == "sample" and "sha256" in caplog.text
    assert not (paths.downloads_dir() / "macgyver").exists() or not any((paths.downloads_dir() / "macgyver").iterdir())
    dest = tmp_path / "x.jsonl"
    with pytest.raises(ChecksumError, match="not the pinned"):
        download(f"{url}/mg/problem_solution_pair.jsonl", dest, "f" * 64)
    assert not dest.exists()
    real = hashlib.sha256((www / "mg" / "problem_solution_pair.jsonl").read_bytes()).hexdigest()
    assert download(f"{url}/mg/problem_solution_pair.jsonl", dest, real).exists()


def test_offline_skips_download(monkeypatch, server):
    www, url = server
    _served_macgyver(monkeypatch, www, url)              # reachable, but CREVAL_OFFLINE=1 (fixture)
    assert macgyver.source(allow_download=True).kind == "sample"
    with pytest.raises(ConnectionError):
        download(f"{url}/mg/problem_solution_pair.jsonl", www / "y")


def test_pinned_hashes_match_the_staged_copies():
    shared = paths.REPO.parent / "shared" / "data"
    checked = 0
    for mod in (macgyver, aut, sick, msrp):
        for r in mod.DATASET.remotes:
            f = base.find(shared / mod.DATASET.shared, (r.name, r.name.replace("_AUT_", " AUT ")))
            if f is not None:
                assert hashlib.sha256(f.read_bytes()).hexdigest() == r.sha256, f
                checked += 1
            assert r.url.startswith("https://raw.githubusercontent.com/") and len(r.sha256) == 64
    if not checked:
        pytest.skip("no staged data beside the checkout")


def test_broken_explicit_sources_are_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CREVAL_MACGYVER_DIR", str(tmp_path / "missing"))
    with pytest.raises(CrevalError, match="CREVAL_MACGYVER_DIR.*does not exist"):
        macgyver.load_problems()
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("CREVAL_MACGYVER_DIR", str(tmp_path / "empty"))
    with pytest.raises(CrevalError, match="has no problem_solution_pair.xlsx"):
        macgyver.load_annotations()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "problem_solution_pair.xlsx").write_text("not a workbook")
    monkeypatch.setenv("CREVAL_MACGYVER_DIR", str(bad))
    with pytest.raises(CrevalError, match=r"bad/problem_solution_pair\.xlsx"):
        macgyver.load_problems()
    # a folder with problems but no benchmark results: the annotations name the missing file
    monkeypatch.setenv("CREVAL_MACGYVER_DIR", str(_macgyver_folder(tmp_path / "p", "p")))
    with pytest.raises(CrevalError, match="benchmark_results.json"):
        macgyver.load_annotations()
    (tmp_path / "p" / "benchmark_results.json").write_text("[1, 2")
    with pytest.raises(CrevalError, match=r"p/benchmark_results\.json"):
        macgyver.load_annotations()
    # AUT: a torn Ocsai row names the file and line
    raw = tmp_path / "aut" / "ocsai1" / "raw"
    raw.mkdir(parents=True)
    good = json.dumps({"prompt": "AUT Prompt:box\nResponse:hat\nScore:\n", "completion": "20"})
    (raw / "finetune-gt_main2_prepared_test.jsonl").write_text(good + '\n{"text": "x"}\n')
    monkeypatch.setenv("CREVAL_AUT_DIR", str(tmp_path / "aut"))
    with pytest.raises(CrevalError, match=r"finetune-gt_main2_prepared_test\.jsonl: line 2"):
        aut.load_ocsai(n=1)
    with pytest.raises(CrevalError, match="bowl_AUT_dataset"):
        aut.load_cambridge(n=1)
    # SICK: a given folder without the files, and a file that is not SICK
    monkeypatch.setenv("CREVAL_SICK_DIR", str(tmp_path / "empty"))
    with pytest.raises(CrevalError, match="CREVAL_SICK_DIR.*SICK_train.txt"):
        sick.read_sick("train")
    s = tmp_path / "sick"
    s.mkdir()
    for name in sick.FILES.values():
        (s / name).write_text("pair_ID\tsentence_A\tsentence_B\tentailment_judgment\n1\tA\tB\tMAYBE\n")
    monkeypatch.setenv("CREVAL_SICK_DIR", str(s))
    with pytest.raises(CrevalError, match=r"SICK_test_annotated\.txt: row 2"):
        sick.read_sick("test")


def test_sick_and_msrp_have_no_sample():
    with pytest.raises(CrevalError, match="sick data not found.*CREVAL_OFFLINE=1") as e:
        sick.read_sick("train")
    assert "CREVAL_SICK_DIR" in str(e.value)
    with pytest.raises(CrevalError, match="msrp data not found"):
        msrp.read_msrp("test")


def test_macgyver_one_id_scheme_and_one_cleaner():
    problems, src = macgyver.load_problems()
    ids = {r["problem_id"] for r in problems}
    assert src.kind == "sample" and all(i.startswith("macgyver-") for i in ids)
    domain = {p.problem_id for p in get_domain("macgyver").load()}
    assert domain == {r["problem_id"] for r in problems if r["solvable"]}
    ann, where = macgyver.load_annotations(include_unsolvable=True)
    assert "NOT real" in where and {a["problem_id"] for a in ann} == {"macgyver-s1", "macgyver-s2", "macgyver-s9"}
    assert all(a["pair_id"].startswith(a["problem_id"] + "::") for a in ann)
    sols = macgyver.load_human_solutions()
    assert set(sols["problem_id"]) <= ids and sols["problem"].notna().all() and set(sols["source"]) == {"sample"}
    # the one cleaner: <br> is a line break, \r and blank lines go
    assert macgyver.clean("Step1: a <br>\r\n<BR/>Step2: b ") == "Step1: a \nStep2: b"
    assert "<br>" not in ann[0]["solution"] and "\n" in ann[0]["solution"]
    assert macgyver.problem_id(541.0) == macgyver.problem_id("541") == macgyver.problem_id(541) == "macgyver-541"


def test_macgyver_ids_agree_on_the_staged_data(monkeypatch):
    monkeypatch.delenv("CREVAL_SHARED_DATA")
    if macgyver.source().kind != "shared":
        pytest.skip("MacGyver not staged beside the checkout")
    problems = {r["problem_id"] for r in macgyver.load_problems()[0]}
    ann, _ = macgyver.load_annotations()
    sols = macgyver.load_human_solutions()
    assert len(ann) > 4000 and {a["problem_id"] for a in ann} <= problems
    assert set(sols["problem_id"]) <= problems and set(sols["source"]) == {"prolific", "additional"}


def test_loaders_fall_back_to_illustrative_samples():
    a = aut.load_ocsai(n=6, objects=2)
    assert len(a) == 6 and set(a["source"]) == {"sample"} and a["prompt"].nunique() == 2
    assert a.attrs["source"].startswith("sample:")
    c = aut.load_cambridge(n=6)
    assert len(c) == 6 and set(c["prompt"]) == {"bowl", "paperclip"} and c["score"].between(0, 4).all()
    assert c["n_raters"].between(2, 3).all()
    assert "rater1" not in c.columns                                   # rater columns only when asked for
    r = aut.load_cambridge(n=6, raters=True)
    assert (r[["rater1", "rater2", "rater3"]].notna().sum(axis=1) == r["n_raters"]).all()
    u = macgyver.load_unconventional(n_per_class=2)
    assert u["unconventional"].tolist() == [True, True, False, False] and set(u["source"]) == {"sample"}
    sets = macgyver.human_solution_sets(min_solutions=3)
    assert len(sets) == 3 and all(len(s) == 3 for s in sets["solutions"])
    assert hypogen.domain_rows()[1].kind == "sample" and bookmia.domain_rows()[1].kind == "sample"
    with pytest.raises(CrevalError, match="unknown Ocsai-1 split"):
        aut.load_ocsai(split="main3_test")


def test_a_partial_download_is_completed(monkeypatch, server):
    www, url = server
    monkeypatch.setenv("CREVAL_OFFLINE", "0")
    _served_macgyver(monkeypatch, www, url)
    bench = {"dls1": [{"model": "m", "annotation": "correct_efficient", "solution": "Step1: x"}]}
    (www / "mg" / "benchmark_results.json").write_text(json.dumps(bench))
    extra = base.Remote(f"{url}/mg/benchmark_results.json",
                        hashlib.sha256((www / "mg" / "benchmark_results.json").read_bytes()).hexdigest(),
                        "benchmark_results.json")
    monkeypatch.setattr(macgyver, "DATASET", dataclasses.replace(macgyver.DATASET,
                                                                 remotes=macgyver.DATASET.remotes + (extra,)))
    _macgyver_folder(paths.downloads_dir() / "macgyver", "dl")        # problems only: an earlier, partial download
    rows, where = macgyver.load_annotations()
    assert where.startswith("download:") and [r["pair_id"] for r in rows] == ["macgyver-dls1::m::0"]
