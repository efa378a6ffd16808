#!/usr/bin/env python3
"""A minimal pion RPC client using only the standard library.

Sends one prompt, prints the assistant's text as it streams, answers extension UI
dialogs with a default, denies tool approvals (under --permission-mode ask; this
example has no one to ask), and exits when the prompt's `prompt_result` arrives.

    python3 docs/examples/client.py "Say hello" -- --provider scripted --model docs/examples/scripted-hello.json

--pion sets the command that starts pion (default: "pion"; e.g. --pion "bun src/cli.ts").
Everything after "--" is passed to pion after "--mode rpc".
"""
import argparse
import json
import shlex
import subprocess
import sys


def records(stream):
    """Yield one parsed JSON record per line of `stream` (a binary file).

    Framing is split on the byte b"\\n" only. Do NOT use text-mode iteration or
    str.splitlines(): they also break lines at U+2028, U+2029, U+0085 and other Unicode
    separators, which JSON allows raw inside strings (a model's reply may contain them),
    so a record would be cut in two. Reading bytes and decoding each complete line also
    keeps a UTF-8 character that straddles two reads intact.
    """
    buf = b""
    while True:
        chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
        if not chunk:
            break
        buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line, buf = buf[:nl], buf[nl + 1:]
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip():
                yield json.loads(line.decode("utf-8"))
    if buf.strip():
        yield json.loads(buf.decode("utf-8"))


def default_answer(request):
    """The answer to an extension dialog: the first option, "no", the prefill, or cancel."""
    method = request.get("method")
    if method == "select":
        options = request.get("options") or []
        return {"value": options[0]} if options else {"cancelled": True}
    if method == "confirm":
        return {"confirmed": False}
    if method == "editor" and "prefill" in request:
        return {"value": request["prefill"]}
    return {"cancelled": True}


DIALOGS = {"select", "confirm", "input", "editor"}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prompt")
    parser.add_argument("--pion", default="pion", help='command that starts pion (default: "pion")')
    parser.add_argument("pion_args", nargs="*", help="arguments for pion, after --")
    args = parser.parse_args()

    proc = subprocess.Popen(
        shlex.split(args.pion) + ["--mode", "rpc"] + args.pion_args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )

    def send(record):
        proc.stdin.write(json.dumps(record).encode("utf-8") + b"\n")
        proc.stdin.flush()

    send({"id": "p1", "type": "prompt", "message": args.prompt})
    result = None
    for rec in records(proc.stdout):
        kind = rec.get("type")
        if kind == "response" and rec.get("id") == "p1":
            if not rec.get("success"):
                print(f"[error] {rec.get('error')}", file=sys.stderr)
                break
            if rec["data"]["disposition"] == "handled":
                print("[handled by an extension]")
                result = {"stopReason": "stop", "usage": {"input": 0, "output": 0}, "cost": 0}
                break
        elif kind == "response" and not rec.get("success"):
            print(f"[error] {rec.get('command')}: {rec.get('error')}", file=sys.stderr)
        elif kind == "message_update":
            event = rec["assistantMessageEvent"]
            if event["type"] == "text_delta":
                sys.stdout.write(event["delta"])
                sys.stdout.flush()
            elif event["type"] == "text_end":
                sys.stdout.write("\n")
        elif kind == "tool_execution_start":
            print(f"[tool] {rec['toolName']} {json.dumps(rec['args'])}", file=sys.stderr)
        elif kind == "extension_ui_request" and rec.get("method") in DIALOGS:
            send({"type": "extension_ui_response", "id": rec["id"], **default_answer(rec)})
        elif kind == "tool_approval_request":
            print(f"[denied] {rec['toolName']}: {rec['reason']}", file=sys.stderr)
            send({"type": "tool_approval_response", "id": rec["id"], "decision": "deny", "message": "the example client approves nothing"})
        elif kind == "prompt_result" and rec.get("id") == "p1":
            result = rec
            break

    proc.stdin.close()
    code = proc.wait()
    if result is None:
        return code or 1
    usage = result["usage"]
    print(f"[done] stopReason={result['stopReason']} input={usage['input']} output={usage['output']} cost={result['cost']}")
    return 0 if result["stopReason"] in ("stop", "length") else 1


if __name__ == "__main__":
    sys.exit(main())
