"""The OpenAI Responses API dialect (`POST /v1/responses`, `stream: true`)."""
