"""studies/validation"""
