"""studies/apparatus"""
