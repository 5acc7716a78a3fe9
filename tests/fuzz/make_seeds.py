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


# ---- fuzz_gguf_tokenizer: the tokenizer.ggml.* layouts llama.cpp's converter writes, one per
# model kind, built from the text fixtures (tests/fixtures/text), each with a text to encode.
TEXT = os.path.join(HERE, "..", "fixtures", "text")
os.makedirs(f"{C}/fuzz_gguf_tokenizer", exist_ok=True)


def tokenizer_json(name):
    with open(os.path.join(TEXT, name, "tokenizer.json")) as f:
        return json.load(f)


def by_id(vocab):
    return [t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])]


def gguf_tokenizer_seed(name, kvs, text):
    ref.write_gguf(f"{C}/fuzz_gguf_tokenizer/{name}.gguf", kvs + [("fuzz.text", "string", text)], [])


with open(os.path.join(TEXT, "spm_gguf", "gguf.json")) as f:  # SentencePiece BPE, as converted
    spm_meta = json.load(f)
typed = {list: lambda k, v: ("array", ("string", v)) if k.endswith("tokens") else
         ("array", ("f32", v)) if k.endswith("scores") else ("array", ("i32", v)),
         bool: lambda k, v: ("bool", v), int: lambda k, v: ("u32", v), str: lambda k, v: ("string", v)}
gguf_tokenizer_seed("llama", [(k, *typed[type(v)](k, v)) for k, v in spm_meta.items()], "Hello world! Ünïcödé 12 34")

qwen2 = tokenizer_json("qwen2")  # byte-level BPE with special tokens
tokens = by_id(qwen2["model"]["vocab"])
types = [1] * len(tokens)
for a in qwen2["added_tokens"]:
    while len(tokens) <= a["id"]:
        tokens.append(f"[PAD{len(tokens)}]")
        types.append(5)
    tokens[a["id"]] = a["content"]
    types[a["id"]] = 3 if a["special"] else 4
merges = [m if isinstance(m, str) else " ".join(m) for m in qwen2["model"]["merges"]]
gguf_tokenizer_seed("gpt2_qwen2", [("tokenizer.ggml.model", "string", "gpt2"), ("tokenizer.ggml.pre", "string", "qwen2"),
                                   ("tokenizer.ggml.tokens", "array", ("string", tokens)),
                                   ("tokenizer.ggml.token_type", "array", ("i32", types)),
                                   ("tokenizer.ggml.merges", "array", ("string", merges)),
                                   ("tokenizer.ggml.eos_token_id", "u32", tokens.index("<|im_end|>")),
                                   ("tokenizer.ggml.add_bos_token", "bool", False)],
                    "<|im_start|>user\nHi there, 世界 123!<|im_end|>")

bert = tokenizer_json("bert_uncased")  # WordPiece in llama.cpp's phantom-space form
pieces = [t[2:] if t.startswith("##") else t if t.startswith("[") and t.endswith("]") else "\u2581" + t
          for t in by_id(bert["model"]["vocab"])]
gguf_tokenizer_seed("bert", [("tokenizer.ggml.model", "string", "bert"),
                             ("tokenizer.ggml.tokens", "array", ("string", pieces)),
                             ("tokenizer.ggml.token_type", "array", ("i32", [3 if p.startswith("[") else 1 for p in pieces])),
                             ("tokenizer.ggml.unknown_token_id", "u32", pieces.index("[UNK]")),
                             ("tokenizer.ggml.cls_token_id", "u32", pieces.index("[CLS]")),
                             ("tokenizer.ggml.seperator_token_id", "u32", pieces.index("[SEP]")),
                             ("tokenizer.ggml.padding_token_id", "u32", pieces.index("[PAD]"))],
                    "The quick brown fox jumped over the lazy dog's back.")

uni = tokenizer_json("unigram")  # Unigram pieces and scores ("t5"; no charsmap: it is 240 KB)
gguf_tokenizer_seed("t5", [("tokenizer.ggml.model", "string", "t5"),
                           ("tokenizer.ggml.tokens", "array", ("string", [p for p, _ in uni["model"]["vocab"]])),
                           ("tokenizer.ggml.scores", "array", ("f32", [s for _, s in uni["model"]["vocab"]])),
                           ("tokenizer.ggml.token_type", "array", ("i32", [3 if p in ("<unk>", "<s>", "</s>") else 1
                                                                            for p, _ in uni["model"]["vocab"]])),
                           ("tokenizer.ggml.unknown_token_id", "u32", uni["model"].get("unk_id") or 0),
                           ("tokenizer.ggml.eos_token_id", "u32", 2),
                           ("tokenizer.ggml.add_space_prefix", "bool", True)],
                    "  several   spaces and a café ")
