"""The tool-call dialects streamscope reads, one package each."""
