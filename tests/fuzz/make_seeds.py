#!/usr/bin/python3
"""Writes the small seed inputs under tests/fuzz/corpus/ (checked in; rerun after changing this
file). GGUF seeds come from the independent writer in tests/fixtures/formats/gguf_reference.py.
Run with Debian's /usr/bin/python3 (numpy)."""
import json
import os
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fixtures", "formats"))
import gguf_reference as ref  # noqa: E402

C = os.path.join(HERE, "corpus")


def st_file(path, tensors, metadata=None):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


rng = np.random.default_rng(0)
st_file(f"{C}/fuzz_safetensors/small.safetensors", [
    ("w", "F32", [2, 3], rng.standard_normal(6).astype("<f4").tobytes()),
    ("b", "BF16", [3], b"\x80\x3f" * 3),
    ("e", "F8_E4M3", [4], bytes([0x38, 0xb8, 0x7e, 0x7f])),
    ("m", "BOOL", [2], b"\x01\x00"),
    ("f4", "F4", [4], b"\x12\x34"),
    ("i", "I64", [1], struct.pack("<q", -5)),
], {"format": "pt"})
st_file(f"{C}/fuzz_safetensors/empty.safetensors", [])

tensors = []
for tid, n in [(0, 8), (2, 32), (8, 32), (12, 256), (14, 256), (11, 256)]:
    raw = ref.random_blocks(rng, tid, n).tobytes()
    tensors.append((ref.TYPES[tid][0].lower(), tid, (n,), raw))
ref.write_gguf(f"{C}/fuzz_gguf/small.gguf", ref.METADATA, tensors)
ref.write_gguf(f"{C}/fuzz_gguf/aligned64.gguf", [("general.alignment", "u32", 64)] + ref.METADATA[:3],
               tensors[:2], alignment=64)

configs = {
    "bert.json": {"model_type": "bert", "hidden_size": 384, "num_attention_heads": 12, "num_hidden_layers": 6,
                  "intermediate_size": 1536, "vocab_size": 30522},
    "qwen3.json": {"model_type": "qwen3", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8,
                   "head_dim": 128, "rope_theta": 1000000, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
                   "eos_token_id": 151645},
    "llama3.json": {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8,
                    "eos_token_id": [1, 2], "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                                             "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                             "original_max_position_embeddings": 8192}},
    "v5.json": {"model_type": "qwen2", "hidden_size": 896, "num_attention_heads": 14, "num_key_value_heads": 2,
                "dtype": "float16", "rope_parameters": {"full_attention": {"rope_theta": 1e6, "rope_type": "default"}}},
}
for name, c in configs.items():
    with open(f"{C}/fuzz_hf_config/{name}", "w") as f:
        json.dump(c, f)

with open(f"{C}/fuzz_safetensors_index/index.json", "w") as f:
    json.dump({"metadata": {"total_size": 1234}, "weight_map": {
        "a.weight": "model-00001-of-00002.safetensors", "b.weight": "model-00002-of-00002.safetensors"}}, f)
