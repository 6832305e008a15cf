"""The LLM agreement on the Alternative Uses Test study (chapter 07)."""
