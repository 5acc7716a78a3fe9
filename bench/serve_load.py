#!/usr/bin/python3
"""Load test for an OpenAI-compatible server (`rlx serve`, llama.cpp's `llama-server`, …).

Each prompt is first run alone, one after another (the one-client rate and each stream's
reference), then all at once as N concurrent streaming clients. Reports the aggregate generated
tokens/s of each phase and their ratio, p50/p95 time to first token and inter-token latency of the
concurrent phase, and whether every concurrent greedy stream equals its run alone (token ids when
the server returns them — RLX's "return_tokens" — otherwise the text).

  /usr/bin/python3 bench/serve_load.py --url http://127.0.0.1:8080 [--model ID] [--streams 8]
      [--max-tokens 64] [--prompt-tokens 32] [--api-key K] [--label NAME] [--json]

Prompts are token ids (the same for every server); generation ignores EOS so every stream makes
exactly --max-tokens tokens. Standard library only.
"""
import argparse
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse


def percentile(xs, q):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class Stream:
    """One streamed completion: its chunks' arrival times and token counts."""

    def __init__(self, args, prompt):
        self.args, self.prompt = args, prompt
        self.start = self.end = 0.0
        self.arrivals = []  # (time, tokens in the chunk)
        self.ids, self.text, self.error = [], "", None
        self.usage_tokens = None

    def run(self):
        u = urllib.parse.urlparse(self.args.url)
        conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=600)
        body = {"model": self.args.model, "prompt": self.prompt, "max_tokens": self.args.max_tokens, "temperature": 0,
                "stream": True, "ignore_eos": True, "return_tokens": True, "stream_options": {"include_usage": True}}
        headers = {"Content-Type": "application/json"}
        if self.args.api_key:
            headers["Authorization"] = "Bearer " + self.args.api_key
        self.start = time.perf_counter()
        try:
            conn.request("POST", "/v1/completions", json.dumps(body), headers)
            resp = conn.getresponse()
            if resp.status != 200:
                self.error = f"HTTP {resp.status}: {resp.read()[:300]!r}"
                return
            buf = b""
            while True:
                line = resp.readline()
                if not line:
                    break
                line = line.strip()
                if not line.startswith(b"data: "):
                    continue
                data = line[6:]
                if data == b"[DONE]":
                    break
                now = time.perf_counter()
                j = json.loads(data)
                if j.get("usage"):
                    self.usage_tokens = j["usage"].get("completion_tokens")
                if not j.get("choices"):
                    continue
                c = j["choices"][0]
                ids = c.get("token_ids") or c.get("tokens")
                # Without ids, a chunk that does not finish the stream carries one token (llama-server
                # streams one per token, with empty text for tokens that decode to nothing yet).
                n = len(ids) if isinstance(ids, list) else (1 if c.get("text") or c.get("finish_reason") is None else 0)
                if isinstance(ids, list):
                    self.ids += ids
                self.text += c.get("text") or ""
                if n:
                    self.arrivals.append((now, n))
        except Exception as e:  # noqa: BLE001 - reported as the stream's error
            self.error = repr(e)
        finally:
            self.end = time.perf_counter()
            conn.close()

    def tokens(self):
        return sum(n for _, n in self.arrivals)

    def ttft(self):
        return self.arrivals[0][0] - self.start if self.arrivals else float("nan")

    def itl(self):
        out = []
        for (t0, _), (t1, n) in zip(self.arrivals, self.arrivals[1:]):
            out += [(t1 - t0) / n] * n
        return out

    def key(self):
        return tuple(self.ids) if self.ids else self.text


def run_phase(streams, concurrent):
    if concurrent:
        threads = [threading.Thread(target=s.run) for s in streams]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        t0 = time.perf_counter()
        for s in streams:
            s.run()
    wall = time.perf_counter() - t0
    errors = [s.error for s in streams if s.error]
    if errors:
        sys.exit("serve_load: " + "; ".join(errors[:3]))
    return sum(s.tokens() for s in streams) / wall, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--model", default="")
    ap.add_argument("--streams", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--prompt-tokens", type=int, default=32)
    ap.add_argument("--vocab", type=int, default=151000, help="prompt ids are below this")
    ap.add_argument("--api-key", default="")
    ap.add_argument("--label", default="")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not args.model:
        u = urllib.parse.urlparse(args.url)
        conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)
        conn.request("GET", "/v1/models", headers={"Authorization": "Bearer " + args.api_key} if args.api_key else {})
        args.model = json.loads(conn.getresponse().read())["data"][0]["id"]
    prompts = [[(1000 + (i * 131 + j) * 7919) % args.vocab for j in range(args.prompt_tokens)] for i in range(args.streams)]
    # warm-up: graphs specialized, pages touched
    run_phase([Stream(args, prompts[0])], False)
    alone = [Stream(args, p) for p in prompts]
    rate1, wall1 = run_phase(alone, False)
    together = [Stream(args, p) for p in prompts]
    rateN, wallN = run_phase(together, True)
    # Streams are compared by ids, else by text; a server that returns neither (only empty text,
    # as llama-server for tokens past a small tokenizer's vocabulary) cannot be checked.
    comparable = bool(together[0].ids) or any(s.text for s in alone + together)
    compared_by = "token ids" if together[0].ids else ("text" if comparable else "nothing: no ids and empty text")
    identical = sum(a.key() == b.key() for a, b in zip(alone, together)) if comparable else 0
    complete = sum(s.tokens() == args.max_tokens for s in together)
    ttft = [s.ttft() for s in together]
    itl = [x for s in together for x in s.itl()]
    r = {"label": args.label, "model": args.model, "streams": args.streams, "max_tokens": args.max_tokens, "prompt_tokens": args.prompt_tokens,
         "alone_tokens_per_second": rate1, "concurrent_tokens_per_second": rateN, "ratio": rateN / rate1,
         "ttft_p50_ms": 1e3 * percentile(ttft, 0.5), "ttft_p95_ms": 1e3 * percentile(ttft, 0.95),
         "itl_p50_ms": 1e3 * percentile(itl, 0.5), "itl_p95_ms": 1e3 * percentile(itl, 0.95),
         "alone_itl_p50_ms": 1e3 * statistics.median([x for s in alone for x in s.itl()] or [float("nan")]),
         "identical_streams": identical, "complete_streams": complete, "compared_by": compared_by}
    if args.json:
        print(json.dumps(r))
    else:
        print(f"{args.label or args.url}: {args.model}, {args.streams} streams × {args.max_tokens} tokens (prompts of {args.prompt_tokens})")
        print(f"  one client alone   {rate1:8.1f} tokens/s (ITL p50 {r['alone_itl_p50_ms']:.1f} ms)")
        print(f"  {args.streams} concurrent      {rateN:8.1f} tokens/s  = {r['ratio']:.2f}× alone")
        print(f"  time to first token p50 {r['ttft_p50_ms']:.0f} ms, p95 {r['ttft_p95_ms']:.0f} ms; inter-token p50 {r['itl_p50_ms']:.1f} ms, p95 {r['itl_p95_ms']:.1f} ms")
        print(f"  {identical}/{args.streams} concurrent streams identical to their run alone ({r['compared_by']}); {complete}/{args.streams} complete")
    return 0 if (identical == args.streams or not comparable) and complete == args.streams else 3


if __name__ == "__main__":
    sys.exit(main())
