"""Language models behind one protocol (llama.cpp, transformers, OpenAI-compatible), cached per call."""
