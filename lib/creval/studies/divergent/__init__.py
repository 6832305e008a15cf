"""studies/divergent"""
