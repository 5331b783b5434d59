"""Exports: reproducible fixtures and tests made from analysed streams."""
