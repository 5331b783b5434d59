"""Inputs: which kind a file is (sniff) and its streams as reads and frames (reads)."""
