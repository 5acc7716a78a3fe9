#!/usr/bin/python3
"""All-reduce (sum, f32) bandwidth of torch.distributed's gloo backend on loopback — the peer of
`rlx launch -n N -- rlx bench collectives` (same sizes, same iteration counts, same formulas:
algo = bytes / time, bus = algo · 2(n−1)/n). Debian's PyTorch (python3-torch) under /usr/bin/python3.

  /usr/bin/python3 bench/allreduce_torch.py [-n 2] [--sizes 4K,64K,1M,16M,64M] [--json]
"""
import json
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def parse_size(s):
    mult = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    return int(float(s[:-1]) * mult[s[-1]]) if s[-1] in mult else int(s)


def rank_main(rank, n, store, sizes, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=n)
    rows = []
    for nbytes in sizes:
        t = (torch.arange(nbytes // 4, dtype=torch.float32) % 7)
        iters = max(5, min(2000, (256 << 20) // nbytes))
        for _ in range(3):
            dist.all_reduce(t)
        dist.barrier()
        a = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        dist.barrier()
        s = (time.perf_counter() - a) / iters
        algo = nbytes / s / 1e9
        rows.append({"bytes": nbytes, "us": s * 1e6, "algo_gbps": algo, "bus_gbps": algo * 2 * (n - 1) / n})
    if rank == 0:
        with open(out, "w") as f:
            json.dump(rows, f)
    dist.destroy_process_group()


def main():
    n = int(sys.argv[sys.argv.index("-n") + 1]) if "-n" in sys.argv else 2
    sizes = [parse_size(s) for s in (sys.argv[sys.argv.index("--sizes") + 1] if "--sizes" in sys.argv else "4K,64K,1M,16M,64M").split(",")]
    with tempfile.TemporaryDirectory() as d:
        store, out = os.path.join(d, "store"), os.path.join(d, "rows.json")
        mp.spawn(rank_main, args=(n, store, sizes, out), nprocs=n, join=True)
        rows = json.load(open(out))
    if "--json" in sys.argv:
        print(json.dumps({"ranks": n, "backend": "torch.distributed gloo " + torch.__version__, "all_reduce": rows}))
    else:
        print("%-10s %12s %12s %12s" % ("bytes", "time (us)", "algo GB/s", "bus GB/s"))
        for r in rows:
            print("%-10d %12.1f %12.3f %12.3f" % (r["bytes"], r["us"], r["algo_gbps"], r["bus_gbps"]))


if __name__ == "__main__":
    main()
