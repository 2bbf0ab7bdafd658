#!/usr/bin/env python3
"""mkseeds.py: remakes the synthetic binary seeds of fuzz/seeds/ (tiny
models and tokenizers; the text seeds are copies of project files). Run from
the repository root; needs nothing but Python 3. The seeds are committed:
this is only for changing them."""
import json
import os
import random
import struct

rng = random.Random(1)
D = "fuzz/seeds"


def put(target, name, data):
    os.makedirs(f"{D}/{target}", exist_ok=True)
    with open(f"{D}/{target}/{name}", "wb") as f:
        f.write(data)


def floats(n):
    return struct.pack(f"<{n}f", *[rng.uniform(-0.5, 0.5) for _ in range(n)])


# llama2.c checkpoints: dim 8, hidden 16, heads 2, kv_heads 1 or 2, vocab
# 16, seq_len 8, one or two layers; shared (vocab > 0) or separate classifier
def llama2c(dim, hidden, layers, heads, kv, vocab, seq, shared):
    head = dim // heads
    kv_dim = head * kv
    h = struct.pack("<7i", dim, hidden, layers, heads, kv,
                    vocab if shared else -vocab, seq)
    n = (vocab * dim + layers * (2 * dim + 2 * dim * dim + 2 * dim * kv_dim
                                 + 3 * dim * hidden) + dim + seq * head
         + (0 if shared else vocab * dim))
    return h + floats(n)


put("fz_llama2c", "tiny-shared.bin", llama2c(8, 16, 1, 2, 2, 16, 8, True))
put("fz_llama2c", "tiny-gqa-separate.bin", llama2c(8, 16, 2, 2, 1, 16, 8, False))
put("fz_llama2c", "header-only.bin", llama2c(8, 16, 1, 2, 2, 16, 8, True)[:28])


# safetensors: config.json, NUL, model.safetensors
def f16(x):
    return struct.pack("<e", x)


def bf16(x):
    return struct.pack("<f", x)[2:]


def safetensors(cfg, dtype, tied):
    dim, hid, L = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    heads, kv, V = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["vocab_size"]
    kv_dim = dim // heads * kv
    shapes = {"model.embed_tokens.weight": [V, dim], "model.norm.weight": [dim]}
    for l in range(L):
        p = f"model.layers.{l}."
        shapes[p + "input_layernorm.weight"] = [dim]
        shapes[p + "post_attention_layernorm.weight"] = [dim]
        shapes[p + "self_attn.q_proj.weight"] = [dim, dim]
        shapes[p + "self_attn.k_proj.weight"] = [kv_dim, dim]
        shapes[p + "self_attn.v_proj.weight"] = [kv_dim, dim]
        shapes[p + "self_attn.o_proj.weight"] = [dim, dim]
        shapes[p + "mlp.gate_proj.weight"] = [hid, dim]
        shapes[p + "mlp.down_proj.weight"] = [dim, hid]
        shapes[p + "mlp.up_proj.weight"] = [hid, dim]
    if not tied:
        shapes["lm_head.weight"] = [V, dim]
    esz = 4 if dtype == "F32" else 2
    enc = {"F32": lambda x: struct.pack("<f", x), "F16": f16, "BF16": bf16}[dtype]
    header, data = {}, b""
    for name, shape in shapes.items():
        n = 1
        for s in shape:
            n *= s
        b = b"".join(enc(rng.uniform(-0.5, 0.5)) for _ in range(n))
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + n * esz]}
        data += b
    h = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(h)) + h + data


cfg = {"model_type": "llama", "hidden_size": 8, "intermediate_size": 16,
       "num_hidden_layers": 1, "num_attention_heads": 2,
       "num_key_value_heads": 1, "vocab_size": 16,
       "max_position_embeddings": 32, "tie_word_embeddings": True}
put("fz_hf", "default-config-f32", safetensors(cfg, "F32", True))
for dtype in ("F32", "F16", "BF16"):
    c = dict(cfg, num_hidden_layers=2, tie_word_embeddings=dtype != "F16")
    put("fz_hf", f"tiny-{dtype.lower()}",
        json.dumps(c).encode() + b"\0" + safetensors(c, dtype, dtype == "F16"))


# llama2.c tokenizer.bin with 2-byte vocabulary prefix: <unk>, <s>, </s>,
# the 256 byte tokens, then pieces of a few words and their merges
def tok_llama2c():
    pieces = ["<unk>", "\n<s>\n", "\n</s>\n"] + [f"<0x{b:02X}>" for b in range(256)]
    words = [" ", "a", "c", "t", "e", "n", "o", "u", "p", "m", "i", "at", "on",
             "ce", " a", " c", " t", "cat", " cat", "up", " up", "upon", " upon",
             "Once", " Once", "ti", "me", "time", " time", "On", "Onc"]
    pieces += words
    maxlen = max(len(p.encode()) for p in pieces)
    out = struct.pack("<i", maxlen)
    for i, p in enumerate(pieces):
        b = p.encode()
        out += struct.pack("<fi", -float(i) if i < 259 else float(len(b)), len(b)) + b
    return struct.pack("<H", len(pieces) - 1) + out


t = tok_llama2c()
put("fz_tok_llama2c", "tiny", t)
put("fz_tok_llama2c", "truncated", t[:200])


# tokenizer.json: the BPE of tinystories656K's format, a few pieces
def tok_hf():
    sp = "\u2581"
    vocab = ["<unk>", "<s>", "</s>", sp, "a", "c", "t", "e", "n", "o", "u",
             "p", "O", "i", "m", "s", "w", ".", ",", sp + "a", "at", "c" + "at",
             sp + "c", sp + "cat", "on", "up", "upon", sp + "upon", "On", "Once"[:3],
             "Once", sp + "Once", "ti", "me", "time", sp + "t", sp + "time"]
    seen, v = set(), []
    for p in vocab:
        if p not in seen:
            seen.add(p)
            v.append(p)
    merges = [f"{sp} a", "a t", "c at", f"{sp} c", f"{sp}c at", "o n", "u p",
              "up on", f"{sp} upon", "O n", "On c", "Onc e", f"{sp} Once",
              "t i", "m e", "ti me", f"{sp} t", f"{sp}t ime"]
    merges = [m for m in merges if "".join(m.split(" ")) in seen
              and all(x in seen for x in m.split(" "))]
    doc = {"version": "1.0",
           "normalizer": {"type": "Sequence", "normalizers": [
               {"type": "Prepend", "prepend": sp},
               {"type": "Replace", "pattern": {"String": " "}, "content": sp}]},
           "pre_tokenizer": None,
           "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True,
                     "byte_fallback": False,
                     "vocab": {p: i for i, p in enumerate(v)}, "merges": merges}}
    return struct.pack("<H", len(v) - 1) + json.dumps(doc, ensure_ascii=False).encode()


put("fz_tok_hf", "tiny", tok_hf())


# fz_wire: frames of two clients, interleaved (client 0 first): HELLO,
# PROMPT, BLOCKs, DONE, as an edge sends them (docs/deploy.md)
def frame(kind, *words):
    body = struct.pack("<B", kind) + struct.pack(f"<{len(words)}I", *words)
    return struct.pack("<I", len(body)) + body


def hello(t):
    return frame(1, 0x32505348, t, *[0] * 8)  # "HSP2", no secret


def prompt(req, out, toks):
    return frame(2, req, out, len(toks), *toks)


def block(req, epoch, pos, toks):
    return frame(3, req, epoch, pos, len(toks), *toks)


def done(req):
    return frame(4, req)


both = b"".join([hello(0), hello(1),
                 prompt(0, 12, [1, 5, 9]), prompt(0, 8, [2, 4]),
                 block(0, 0, 3, [7, 7, 7]), block(0, 0, 2, [3, 3]),
                 block(0, 0, 6, [1, 2, 3]), block(0, 1, 4, [5]),
                 block(0, 1, 4, [6, 6]), done(0)])
put("fz_wire", "two-clients", both)
put("fz_wire", "one-then-stale",
    b"".join([hello(0), hello(1), prompt(0, 20, list(range(1, 9))),
              prompt(3, 20, [1]), block(0, 0, 8, [9, 9, 9, 9]),
              block(3, 0, 1, [30, 31]), block(0, 0, 12, [1, 1]),
              block(3, 0, 3, [2]), block(0, 0, 14, [4]), done(3)]))


# GGUF: a tiny Llama (dim 8, hidden 16, 1 layer, 2 heads, 1 KV head) with a
# byte-level BPE vocabulary (GPT-2's 256 byte characters and two merges),
# F32 norms and Q8_0 / Q4_1 matrices; and a file of one tensor of each
# K-quant type
def gguf_str(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, vtype, payload):
    return gguf_str(key) + struct.pack("<I", vtype) + payload


def gguf(kvs, tensors):
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    off, data = 0, b""
    for name, dims, ttype, raw in tensors:
        out += gguf_str(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ttype, off)
        data += raw + b"\0" * (-len(raw) % 32)
        off += len(raw) + (-len(raw) % 32)
    return out + b"\0" * (-len(out) % 32) + data


def byte_chars():
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cps, n = {}, 0
    for b in range(256):
        if b in keep:
            cps[b] = b
        else:
            cps[b] = 256 + n
            n += 1
    return [chr(cps[b]) for b in range(256)]


def q8_0(n):
    return b"".join(f16(0.01) + bytes(rng.randrange(256) for _ in range(32))
                    for _ in range(n // 32))


def q4_1(n):
    return b"".join(f16(0.01) + f16(-0.05) + bytes(rng.randrange(256) for _ in range(16))
                    for _ in range(n // 32))


toks = byte_chars() + ["he", "\u0120he", "<|endoftext|>"]
arr_str = lambda xs: struct.pack("<IQ", 8, len(xs)) + b"".join(gguf_str(x) for x in xs)
kvs = [
    gguf_kv("general.architecture", 8, gguf_str("llama")),
    gguf_kv("llama.block_count", 4, struct.pack("<I", 1)),
    gguf_kv("llama.embedding_length", 4, struct.pack("<I", 32)),
    gguf_kv("llama.feed_forward_length", 4, struct.pack("<I", 32)),
    gguf_kv("llama.attention.head_count", 4, struct.pack("<I", 2)),
    gguf_kv("llama.attention.head_count_kv", 4, struct.pack("<I", 1)),
    gguf_kv("llama.context_length", 4, struct.pack("<I", 16)),
    gguf_kv("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)),
    gguf_kv("tokenizer.ggml.model", 8, gguf_str("gpt2")),
    gguf_kv("tokenizer.ggml.pre", 8, gguf_str("smollm")),
    gguf_kv("tokenizer.ggml.tokens", 9, arr_str(toks)),
    gguf_kv("tokenizer.ggml.merges", 9, arr_str(["h e", "\u0120 he"])),
    gguf_kv("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 258)),
    gguf_kv("tokenizer.ggml.eos_token_id", 4, struct.pack("<I", 258)),
]
V, D_, H = len(toks), 32, 32
tensors = [("token_embd.weight", [D_, V], 8, q8_0(D_ * V)),
           ("blk.0.attn_norm.weight", [D_], 0, floats(D_)),
           ("blk.0.ffn_norm.weight", [D_], 0, floats(D_))]
for name, k, n in (("attn_q", D_, D_), ("attn_k", D_, D_ // 2), ("attn_v", D_, D_ // 2),
                   ("attn_output", D_, D_), ("ffn_gate", D_, H), ("ffn_down", H, D_),
                   ("ffn_up", D_, H)):
    tensors.append((f"blk.0.{name}.weight", [k, n], 3, q4_1(k * n)))
tensors.append(("output_norm.weight", [D_], 0, floats(D_)))
put("fz_gguf", "tiny-llama.gguf", gguf(kvs, tensors))
put("fz_gguf", "k-quants.gguf", gguf(
    [gguf_kv("general.alignment", 4, struct.pack("<I", 64))],
    [("q4k", [256], 12, bytes(rng.randrange(256) for _ in range(144))),
     ("q5k", [256], 13, bytes(rng.randrange(256) for _ in range(176))),
     ("q6k", [256, 2], 14, bytes(rng.randrange(256) for _ in range(420))),
     ("q5_0", [32], 6, bytes(rng.randrange(256) for _ in range(22))),
     ("bf16", [4], 30, bytes(8))]))
