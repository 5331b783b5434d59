"""Anthropic Messages: `content_block_start` / `input_json_delta` / `content_block_stop`."""
