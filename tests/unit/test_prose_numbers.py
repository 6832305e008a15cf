"""No number about a build is typed into a chapter's fixed prose (issue 28).

Every markdown cell of every chapter (``chapters/*.ipynb``) is fixed text: it is the same on every profile and
every model, while the numbers of a build change with them. So a number about this build must come from a code
cell (a report function returns it; the notebook shows Markdown built from it), and the fixed prose may only
hold numbers that do not depend on the build.

The convention this test enforces, sentence by sentence (the lines of a paragraph are joined; a sentence ends
at ". ", "? " or "! " before a capital, at a blank line, a list bullet, a heading or a table row):

1. **Quoted paper figures.** A number may be quoted from a paper when its source is named next to it: a
   source marker ("et al.", the word "paper" as in the paper, the paper's, paper:, papers, or "(source: ...)")
   stands in the same sentence within 120 characters of the number, or the sentence opens with it (a marker
   in its first 40 characters: "The paper reports ...", "Rabeyah et al. report ..."), which covers the whole
   sentence. Example: "CI 0.76 vs 0.75 (Lu et al. 2025, Table 2)", "(paper: 573 and 573)".
2. **Identifiers.** A digit glued to a letter, ``@``, ``_`` or ``-`` + letter is part of a name: GPT-4, pass@1,
   SmolLM2-135M, qwen2.5-coder-1.5b, 05-neocoder, uniq_L, L2, 3x, 10th, r−1; so is an appendix label (C.3, H.2).
   A year (1900-2099) is a date. A confidence level (90%, 95%, 99% before "bootstrap", "interval",
   "confidence" or "CI") is the method's, not the build's.
3. **References.** The numbers right after Table(s), Fig(s)./Figure(s), Eq(s)./Equation, App./Appendix,
   Section/§, chapter(s), Algorithm, issue, version, step(s), state(s) and round(s) (with lists and ranges such
   as "Tables 1 and 3", "Figs. 2-4", "chapters 03, 04 and 06") name a part of a paper or of this book.
4. **Not prose.** Code spans and fenced code, LaTeX (``$...$``, ``$$...$$``), link targets, HTML tags and
   their attributes are removed before scanning.

Anything else (a count, a percentage, a statistic) is a number about the build typed into prose, and fails.
Write it from a report function instead, or spell out a definitional constant in words ("one half").
"""
import json
import re
from pathlib import Path

import pytest

from creval.core.paths import REPO

CHAPTERS = sorted((REPO / "chapters").glob("[0-9][0-9]-*.ipynb"))

SOURCE = re.compile(r"\bet al\.|\bpapers?\b|\bpaper's\b|\(source:", re.I)
REFERENCE = re.compile(r"(?:\b(?:Tables?|Figs?\.|Figures?|Eqs?\.|Equations?|App\.|Appendix|Sections?|chapters?|"
                       r"Algorithms?|issues?|version|steps?|states?|rounds?)|§)\s*"
                       r"\d+(?:\.\d+)?(?:\s*(?:,|and|or|-|–|to)\s*\d+(?:\.\d+)?)*", re.I)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
STRIP = [re.compile(p, re.S) for p in (r"```.*?```", r"`[^`]*`", r"\$\$.*?\$\$", r"\$[^$\n]*\$", r"<[^>]+>")]
LINK_TARGET = re.compile(r"\]\([^)]*\)")
BLOCK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]\s|\d+\.\s|#|\|))")       # paragraphs, list items, headings, table rows
LIST_MARK = re.compile(r"^(?:[-*+]|\d+\.)\s+")
SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[A-Z*(\-])")
CONFIDENCE = re.compile(r"\b9[059]%(?=(?:\s+\**\w+\**){0,2}\s+(?:bootstrap|confidence|interval|CI)\b)")
APPENDIX_LABEL = re.compile(r"\b[A-Z]\.\d+(?:\.\d+)?(?:-[A-Z]\.\d+)?\b")       # C.3, D.2, H.1, C.3-C.7


def plain(text: str) -> str:
    """The prose of a markdown cell: code, LaTeX, link targets and HTML removed (rule 4)."""
    text = LINK_TARGET.sub("]", text)
    for p in STRIP:
        text = p.sub(" ", text)
    return text


def is_identifier(s: str, start: int, end: int) -> bool:
    """Rule 2: the number at ``s[start:end]`` is glued to a name, or is a year."""
    before, after = s[start - 1] if start else " ", s[end] if end < len(s) else " "
    if before.isalpha() or before in "@_" or after.isalpha() or after in "@_":
        return True
    if before in "-–−" and start >= 2 and s[start - 2].isalnum():          # GPT-4, SmolLM2-135M, 05-neocoder-2
        return s[start - 2].isalpha() or bool(re.match(r"[\w.-]*[A-Za-z]", s[:start - 1][::-1]))
    if after == "-" and end + 1 < len(s) and s[end + 1].isalpha():      # 05-neocoder
        return True
    return bool(re.fullmatch(r"(19|20)\d\d", s[start:end]))


NEAR = 120          # characters between a quoted figure and its source marker
OPENING = 40        # a source marker this close to a sentence's start covers the whole sentence


def typed_numbers(sentence: str) -> list[str]:
    """The numbers of one sentence that break the convention."""
    sources = [m.start() for m in SOURCE.finditer(sentence)]
    if sources and sources[0] <= OPENING:
        return []
    masked = sentence
    for p in (REFERENCE, CONFIDENCE, APPENDIX_LABEL):
        masked = p.sub(lambda m: "#" * len(m.group()), masked)
    return [m.group() for m in NUMBER.finditer(masked) if not is_identifier(masked, m.start(), m.end())
            and not any(abs(m.start() - at) <= NEAR for at in sources)]


def offending(text: str) -> list[str]:
    """Each sentence of a markdown cell with a number typed into it, with the numbers found."""
    out = []
    blocks = [LIST_MARK.sub("", " ".join(b.split())) for b in BLOCK.split(plain(text))]
    sentences = [x for block in blocks for x in SENTENCE.split(block)]
    for sentence in sentences:
        nums = typed_numbers(sentence)
        if nums:
            out.append(f"{', '.join(nums)}: {sentence[:160]}")
    return out


def chapter_offences(path: Path) -> list[str]:
    nb = json.loads(path.read_text())
    return [f"cell {i}: {o}" for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"
            for o in offending("".join(c["source"]))]


# Chapters another session is rewriting; each failing snippet is listed here, checked as failing (strict), so the
# mark comes off the day the chapter passes.
PENDING: dict[str, list[str]] = {}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_fixed_prose_holds_no_number_about_the_build(chapter, request):
    if chapter.stem in PENDING:
        request.applymarker(pytest.mark.xfail(strict=True, reason="numbers typed into prose: "
                                              + " | ".join(PENDING[chapter.stem])))
    assert chapter_offences(chapter) == []


def test_the_scanner_finds_typed_numbers_and_passes_the_allowed_ones():
    bad = ["On these records 48 of 199 problems cannot be verified.", "The judge agrees on 81% of pairs.",
           "- AUROC 0.81 [0.78, 0.84] as written", "It ran in 3.5 s."]
    for text in bad:
        assert offending(text), text
    assert offending("We found\n48 of 199. GPT-4 passes.\n\n- 3 more") == ["48, 199: We found 48 of 199.", "3: 3 more"]
    far = "This chapter rebuilds it on the released data (199 problems) and" + " then" * 30 + " shows the paper's."
    assert offending(far) == [f"199: {far[:160]}"]           # a source marker far from the number does not cover it
    opens = "The paper reports (for 300 problems)" + " and" * 40 + " 1.96 to 2.19."
    assert offending(opens) == []                            # ... unless the sentence opens with it
    ok = ["GPT-4 and SmolLM2-135M write code; pass@1 is the share that passes.",
          "CI 0.76 vs 0.75 (unconventional vs conventional; Lu et al. 2025, Table 2).",
          "The paper reports 199/199/198/194/176/97 problems for each state.",
          "Tables 1 and 3, Figs. 2-4, Eq. 5 and App. F; chapters 03, 04, 06 and 07 of this book.",
          "Run `creval run rethinking -p n_boot=200` and see [the docs](docs/x-2.md).",
          "The index is $\\mathrm{mean}_{L=5..7}\\,\\mathrm{uniq}_L$ over 05-neocoder's uniq_5.",
          "Released in 2024 by allenai.", "<img width=\"300\" src=\"a.png\"> a figure",
          "1. A numbered list item\n2. and another", "A problem is in state 3 after round 2 (issue 27).",
          "with a 95% **paired** bootstrap interval",
          "appendices C.3-C.7 and H.2; round r−1", "CI 0.76 vs 0.75 (unconventional vs conventional;\nLu et al. 2025)"]
    for text in ok:
        assert offending(text) == [], text
