#!/usr/bin/env python3
"""Writes a Hugging Face GPT-2 folder (model.safetensors in float32, config.json,
vocab.json, merges.txt) as a float32 GGUF file for llama.cpp, so that both systems
run the same weights in the side-by-side benchmark (tests/bench/llama_side_by_side.sh).

    gguf_from_gpt2.py MODEL_DIR OUT.gguf LLAMA_CPP_SOURCE_DIR

Uses the gguf package of the llama.cpp checkout given (gguf-py) and numpy; reads the
safetensors file itself. The Conv1D matrices of GPT-2 ([in, out]) are written
transposed ([out, in]), as llama.cpp's own converter does, and the output matrix is
the token embedding (GPT-2 ties them).
"""
import json
import os
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if info["dtype"] != "F32":
            sys.exit(f"error: {name} is {info['dtype']}: write the model in F32")
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=np.float32).reshape(info["shape"])
    return tensors


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model, out, llama = sys.argv[1:]
    sys.path.insert(0, os.path.join(llama, "gguf-py"))
    # gguf-py imports SentencePiece for its vocabulary readers, which this script does
    # not use: without the module, an empty one stands in for it.
    try:
        import sentencepiece  # noqa: F401
    except ImportError:
        import types

        placeholder = types.ModuleType("sentencepiece")
        placeholder.SentencePieceProcessor = None
        sys.modules["sentencepiece"] = placeholder
    import gguf  # noqa: E402 (from the llama.cpp checkout)

    config = json.load(open(os.path.join(model, "config.json")))
    tensors = read_safetensors(os.path.join(model, "model.safetensors"))
    vocab = json.load(open(os.path.join(model, "vocab.json"), encoding="utf-8"))
    merges = [
        line.rstrip("\n")
        for line in open(os.path.join(model, "merges.txt"), encoding="utf-8")
        if line.strip() and not line.startswith("#version")
    ]
    w = gguf.GGUFWriter(out, "gpt2")
    embd = config["n_embd"]
    w.add_block_count(config["n_layer"])
    w.add_context_length(config["n_positions"])
    w.add_embedding_length(embd)
    w.add_feed_forward_length(config.get("n_inner") or 4 * embd)
    w.add_head_count(config["n_head"])
    w.add_layer_norm_eps(config.get("layer_norm_epsilon", 1e-5))
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    tokens = [""] * len(vocab)
    for piece, i in vocab.items():
        tokens[i] = piece
    eos = vocab.get("<|endoftext|>", len(tokens) - 1)
    types = [gguf.TokenType.NORMAL] * len(tokens)
    types[eos] = gguf.TokenType.CONTROL
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(eos)
    w.add_eos_token_id(eos)

    def strip(name):  # "transformer.h.0.ln_1.weight" or "h.0.ln_1.weight"
        return name[len("transformer."):] if name.startswith("transformer.") else name

    names = {
        "wte.weight": "token_embd.weight",
        "wpe.weight": "position_embd.weight",
        "ln_f.weight": "output_norm.weight",
        "ln_f.bias": "output_norm.bias",
    }
    per_block = {
        "ln_1": "attn_norm",
        "attn.c_attn": "attn_qkv",
        "attn.c_proj": "attn_output",
        "ln_2": "ffn_norm",
        "mlp.c_fc": "ffn_up",
        "mlp.c_proj": "ffn_down",
    }
    written = 0
    for full, t in tensors.items():
        name = strip(full)
        if name.endswith((".attn.bias", ".attn.masked_bias")) or name == "lm_head.weight":
            continue
        if name in names:
            target = names[name]
        elif name.startswith("h."):
            _, block, rest = name.split(".", 2)
            module, kind = rest.rsplit(".", 1)
            if module not in per_block:
                sys.exit(f"error: unknown tensor {full}")
            target = f"blk.{block}.{per_block[module]}.{kind}"
            if kind == "weight" and module not in ("ln_1", "ln_2"):
                t = np.ascontiguousarray(t.T)
        else:
            sys.exit(f"error: unknown tensor {full}")
        w.add_tensor(target, np.ascontiguousarray(t))
        written += 1
        if target == "token_embd.weight":
            w.add_tensor("output.weight", np.ascontiguousarray(t))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"{out}: {written} tensors from {model}")


if __name__ == "__main__":
    main()
