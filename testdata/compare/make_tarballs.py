#!/usr/bin/env python3
"""Derives cand.summaries.tgz from base.summaries.tgz (written by
generated data: `summaries --ranks 3 --kernels 8 --steps 50 --seed 1` of an
earlier generator) with
known differences, for tests/cli.rs:
  * rank 0: hgemm_caller's total time +1000000 ns (+1000 us);
  * rank 0: ArgMaxKernel<c10::Half, long> (only rank 0 runs it) renamed
    ArgMaxKernel<c10::Half, int>.
"""
import io
import tarfile

src = tarfile.open("base.summaries.tgz")
out = tarfile.open("cand.summaries.tgz", "w:gz", compresslevel=9)
for m in src.getmembers():
    data = src.extractfile(m).read().decode()
    if m.name.endswith(".0.txt"):
        assert data.count("11385371") == 1
        data = data.replace("11385371", "12385371")
        assert "ArgMaxKernel<c10::Half, long>" in data
        data = data.replace("ArgMaxKernel<c10::Half, long>", "ArgMaxKernel<c10::Half, int>")
    b = data.encode()
    m.size = len(b)
    out.addfile(m, io.BytesIO(b))
out.close()
