"""OpenAI Chat Completions: `choices[].delta.tool_calls[]` keyed by `index`."""
