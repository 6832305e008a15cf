"""studies/convergent"""
