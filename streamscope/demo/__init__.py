"""`streamscope demo`: the whole story offline (a sample served, an agent recorded, the replay)."""
