"""Stands in for `vllm run-batch`: answers an OpenAI batch input file through an OpenAI-compatible server.

    python tests/run_batch.py -i requests.jsonl -o answers.jsonl --url http://127.0.0.1:8000 [--model NAME]

Each input line's ``body`` is POSTed to ``<url><line's url>`` (``--model`` replaces the body's model name, as
`vllm run-batch` serves one model); each answer is written as ``{"id", "custom_id", "response": {"status_code",
"body"}, "error"}``, the output format of OpenAI's Batch API and vLLM."""
import argparse
import json

import httpx


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-i", required=True)
    ap.add_argument("-o", required=True)
    ap.add_argument("--url", required=True, help="server root, without /v1")
    ap.add_argument("--model")
    a = ap.parse_args()
    with open(a.i) as fin, open(a.o, "w") as fout, httpx.Client(timeout=600) as client:
        for n, line in enumerate(fin):
            req = json.loads(line)
            body = {**req["body"], **({"model": a.model} if a.model else {})}
            r = client.post(a.url.rstrip("/") + req["url"], json=body)
            ok = r.status_code == 200
            fout.write(json.dumps({"id": f"batch_req_{n}", "custom_id": req["custom_id"],
                                   "response": {"status_code": r.status_code, "body": r.json() if ok else None},
                                   "error": None if ok else {"message": r.text[:200]}}) + "\n")


if __name__ == "__main__":
    main()
