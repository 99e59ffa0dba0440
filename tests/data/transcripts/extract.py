#!/usr/bin/env python3
"""Writes tests/data/transcripts/requests.json for CTest wire_transcripts:
every recorded request of kube-apiserver-transcripts/ (not the kubectl/
logs) with the recorded status, Content-Type and body, in one file. Watch
streams keep only their status (their events depend on the recording's
timing); bodies trimmed in the recording keep only a marker (a request
body's `<trimmed: N chars>` string stands for N characters: the test
expands it). Run from the
repository root:

    python3 tests/data/transcripts/extract.py /work/shared/reference/kube-apiserver-transcripts
"""
import glob
import json
import os
import sys


def main(root, out="tests/data/transcripts/requests.json"):
    records = []
    for path in sorted(glob.glob(os.path.join(root, "*", "*.json"))):
        name = os.path.relpath(path, root)[:-5]
        if name.startswith("kubectl/"):
            continue
        doc = json.load(open(path))
        req, res = doc["request"], doc["response"]
        headers = {k.lower(): v for k, v in (res.get("headers") or {}).items()}
        body = res.get("body")
        if isinstance(body, dict) and ("trimmed" in body or "protobuf_base64" in body):
            body = {"not_kept": True}
        rec = {
            "name": name,
            "request": req,
            "status": res["status"],
            "content_type": headers.get("content-type", ""),
            "stream": "stream" in res,
            "side_requests": bool(doc.get("side_requests")),
            "body": None if "stream" in res else body,
        }
        if "trimmed" in res:
            rec["body"] = {"not_kept": True}
        records.append(rec)
    with open(out, "w") as f:
        json.dump(records, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(records)} transcripts in {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         "/work/shared/reference/kube-apiserver-transcripts")
