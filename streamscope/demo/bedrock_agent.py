"""A small tool-calling agent on boto3's `bedrock-runtime` client, the kind streamscope
records.

It sends the served sample's first messages, system prompt and tools with
`converse_stream`, assembles each streamed block by its `contentBlockIndex` (a text block
has no `contentBlockStart`: its first delta opens it), runs each `toolUse`, sends back the
assistant message with its blocks and a user message holding one `toolResult` per call,
reads the second answer, and prints what it did as one JSON line. boto3 finds the
endpoint in AWS_ENDPOINT_URL_BEDROCK_RUNTIME like any AWS program (`streamscope record`
points it at the proxy) and signs each request with the environment's credentials.

    python -m streamscope.demo.bedrock_agent
"""

from __future__ import annotations

import json
import os
from typing import Any

import boto3

from . import sample

MODEL = os.environ.get("AGENT_MODEL") or "anthropic.claude-sonnet-4-5"
REQUEST = sample.request()
MESSAGES: list[Any] = REQUEST.get("messages") or [
    {"role": "user", "content": [{"text": "What is the weather?"}]}
]


def run_tool(name: str, arguments: object) -> dict[str, Any]:
    return {"tool": name, "input": arguments, "result": "ok"}


def converse(client: Any, messages: list[Any]) -> tuple[list[dict[str, Any]], str]:
    """One streamed turn: the assistant's content blocks in index order, and its stop reason."""
    asked: dict[str, Any] = {"modelId": MODEL, "messages": messages}
    for key in ("system", "toolConfig", "inferenceConfig"):
        if key in REQUEST:
            asked[key] = REQUEST[key]
    blocks: dict[int, dict[str, Any]] = {}
    stop = ""
    for event in client.converse_stream(**asked)["stream"]:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            tool = start["start"].get("toolUse")
            if tool is not None:
                blocks[start["contentBlockIndex"]] = {"toolUse": dict(tool), "input": ""}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            block = blocks.setdefault(delta["contentBlockIndex"], {"text": ""})
            if "text" in delta["delta"]:
                block["text"] = block.get("text", "") + delta["delta"]["text"]
            elif "toolUse" in delta["delta"]:
                block["input"] = block.get("input", "") + delta["delta"]["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
    content = []
    for _, block in sorted(blocks.items()):
        if "toolUse" in block:
            use = block["toolUse"]
            content.append({"toolUse": {**use, "input": json.loads(block["input"] or "{}")}})
        elif block.get("text"):
            content.append({"text": block["text"]})
    return content, stop


def main() -> None:
    client = boto3.client("bedrock-runtime", region_name=os.environ.get("AWS_REGION", "us-east-1"))
    history = list(MESSAGES)
    content, _ = converse(client, history)
    uses = [block["toolUse"] for block in content if "toolUse" in block]
    answer = "".join(block.get("text", "") for block in content)
    if uses:
        history.append({"role": "assistant", "content": content})
        results = [
            {
                "toolResult": {
                    "toolUseId": use["toolUseId"],
                    "content": [{"json": run_tool(use["name"], use["input"])}],
                }
            }
            for use in uses
        ]
        history.append({"role": "user", "content": results})
        second, _ = converse(client, history)
        answer = "".join(block.get("text", "") for block in second)
    calls = [{"id": u["toolUseId"], "name": u["name"], "input": u["input"]} for u in uses]
    print(json.dumps({"calls": calls, "answer": answer}))


if __name__ == "__main__":
    main()
