"""NeoCoder's correctness judges (Lu et al. 2025): run a program on a problem's tests in the sandbox and say
whether it passed. No model call: ``judges`` runs them (``judge_codes``), ``strict`` and ``repo`` are the two
harnesses, ``verdicts`` their records."""
