"""`creval grade`: any measure against a researcher's own rated texts, graded by the report card's rule
(:mod:`~creval.grade.grading`: the measures and the rule; :mod:`~creval.grade.card`: the card it writes;
:mod:`~creval.grade.forest`: the forest plot the card and chapter 08 draw)."""
