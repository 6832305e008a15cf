"""creval: measure how creative language models are.

The library behind the research book in ``chapters/``. Each module names the chapters that use it.
"""
__version__ = "0.1.0"
