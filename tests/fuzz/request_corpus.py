#!/usr/bin/env python3
"""Writes the seed corpus of the `request` fuzz target (tests/fuzz/corpus/
request/) from the recorded requests of kube-apiserver-transcripts/: each
file is one policy byte (0: plain HTTP; 1: TLS with the target's token
file) and the request as an HTTP/1.1 client sends it. Bodies over 64 KiB
(the trimmed ones) are left out. Run from the repository root:

    python3 tests/fuzz/request_corpus.py /work/shared/reference/kube-apiserver-transcripts
"""
import base64
import glob
import json
import os
import sys

MAX_BODY = 64 << 10


def body_bytes(body):
    if body is None or body == "":
        return b""
    if isinstance(body, dict) and "protobuf_base64" in body:
        return base64.b64decode(body["protobuf_base64"])
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body, separators=(",", ":")).encode()


def raw_request(req):
    target = req["path"] + ("?" + req["query"] if req.get("query") else "")
    body = body_bytes(req.get("body"))
    lines = [f"{req['method']} {target} HTTP/1.1", "Host: 127.0.0.1"]
    policy = b"\x00"
    for name, value in (req.get("headers") or {}).items():
        if name.lower() == "authorization":
            policy = b"\x01"
            value = value.replace("<admin-token>", "tok-admin")
        lines.append(f"{name}: {value}")
    if body:
        lines.append(f"Content-Length: {len(body)}")
    return policy + ("\r\n".join(lines) + "\r\n\r\n").encode() + body, len(body)


def main(root, out="tests/fuzz/corpus/request"):
    os.makedirs(out, exist_ok=True)
    written = 0
    for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
        doc = json.load(open(path))
        req = doc.get("request")
        if not req:
            continue
        data, n = raw_request(req)
        if n > MAX_BODY:
            continue
        name = os.path.relpath(path, root).replace("/", "-")[:-5]
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        written += 1
    print(f"{written} requests in {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         "/work/shared/reference/kube-apiserver-transcripts")
