"""measures/nli"""
