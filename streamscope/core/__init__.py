"""The pure engine: SSE decoding, frames, accumulation strategies, anomalies, repair.

Nothing here imports Textual, httpx, uvicorn or openai (a test enforces it).
"""
