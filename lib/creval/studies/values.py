"""The shape of what a study hands the comparison (chapter 09): one row per model x measure x item of its
headline measure (``model, study, measure, item, value, judge``), and the texts whose homogeneity is measured
(``task, prompt, source, text``). A study offers them by declaring ``values=`` and ``ideas=`` on its
:class:`~creval.studies.contract.Study`; the comparison reads whichever studies it ``reads`` declare them."""
from __future__ import annotations


def value_row(model, study: str, measure: str, item, value, judge: str = "") -> dict:
    """One per-item value (NaN when the records hold none)."""
    return {"model": str(model), "study": study, "measure": measure, "item": str(item),
            "value": float(value) if value is not None else float("nan"), "judge": judge}


def idea_row(task: str, prompt, source, text) -> dict:
    """One text whose homogeneity is measured, stripped of surrounding space."""
    return {"task": task, "prompt": prompt, "source": source, "text": str(text).strip()}
