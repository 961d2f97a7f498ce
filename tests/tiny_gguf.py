"""A tiny random-weight qwen2 GGUF, for fast tests of the real llama.cpp code paths.

Two layers, hidden size 64, a byte-level BPE vocabulary (the 256 GPT-2 byte
symbols, a few merges and the ChatML specials) and a ChatML chat template. The
weights are random with a fixed seed, so the model speaks nonsense, but
llama.cpp loads it like any Qwen2 model and a grammar still constrains what it
emits: loading, tokenizing, prefix caching and grammar-constrained decoding are
all exercised for real in milliseconds.
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

N_EMBD = 64
N_FF = 128
N_HEAD = 4
N_HEAD_KV = 2
N_LAYER = 2
CONTEXT_LENGTH = 32768
SEED = 20261130

# Qwen2.5's ChatML template, reduced to what the router uses.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")
# A few merges so the BPE path is not trivially empty; each result is a token.
MERGES = (("Ġ", "t"), ("h", "e"), ("i", "n"), ("Ġ", "a"), ("r", "e"), ("o", "n"))


def _byte_symbols() -> list[str]:
    """GPT-2's byte-to-unicode table: one printable symbol per byte value."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    table = dict(zip(printable, printable, strict=True))
    extra = 0
    for byte in range(256):
        if byte not in table:
            table[byte] = 256 + extra
            extra += 1
    return [chr(table[b]) for b in range(256)]


def _vocab() -> tuple[list[str], list[int]]:
    tokens = _byte_symbols() + [a + b for a, b in MERGES]
    types = [gguf.TokenType.NORMAL] * len(tokens)
    tokens += SPECIALS
    types += [gguf.TokenType.CONTROL] * len(SPECIALS)
    return tokens, [int(t) for t in types]


def write_tiny_qwen2_gguf(path: Path) -> Path:
    """Write the tiny model to `path` (~440 KB, well under a second) and return it."""
    rng = np.random.default_rng(SEED)

    def weight(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    tokens, types = _vocab()
    n_vocab = len(tokens)
    head_dim = N_EMBD // N_HEAD
    kv_dim = N_HEAD_KV * head_dim

    path.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(path), "qwen2")
    writer.add_name("tiny-random-qwen2")
    writer.add_context_length(CONTEXT_LENGTH)
    writer.add_embedding_length(N_EMBD)
    writer.add_feed_forward_length(N_FF)
    writer.add_block_count(N_LAYER)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD_KV)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_freq_base(1_000_000.0)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges([f"{a} {b}" for a, b in MERGES])
    writer.add_bos_token_id(tokens.index("<|endoftext|>"))
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_pad_token_id(tokens.index("<|endoftext|>"))
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    # numpy shapes are (out, in); gguf reverses them into ggml's (in, out).
    writer.add_tensor("token_embd.weight", weight(n_vocab, N_EMBD))
    writer.add_tensor("output_norm.weight", ones(N_EMBD))
    writer.add_tensor("output.weight", weight(n_vocab, N_EMBD))
    for i in range(N_LAYER):
        block = f"blk.{i}"
        writer.add_tensor(f"{block}.attn_norm.weight", ones(N_EMBD))
        writer.add_tensor(f"{block}.attn_q.weight", weight(N_EMBD, N_EMBD))
        writer.add_tensor(f"{block}.attn_q.bias", weight(N_EMBD))
        writer.add_tensor(f"{block}.attn_k.weight", weight(kv_dim, N_EMBD))
        writer.add_tensor(f"{block}.attn_k.bias", weight(kv_dim))
        writer.add_tensor(f"{block}.attn_v.weight", weight(kv_dim, N_EMBD))
        writer.add_tensor(f"{block}.attn_v.bias", weight(kv_dim))
        writer.add_tensor(f"{block}.attn_output.weight", weight(N_EMBD, N_EMBD))
        writer.add_tensor(f"{block}.ffn_norm.weight", ones(N_EMBD))
        writer.add_tensor(f"{block}.ffn_gate.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"{block}.ffn_up.weight", weight(N_FF, N_EMBD))
        writer.add_tensor(f"{block}.ffn_down.weight", weight(N_EMBD, N_FF))

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


if __name__ == "__main__":
    import sys

    out = write_tiny_qwen2_gguf(Path(sys.argv[1] if len(sys.argv) > 1 else "tiny-qwen2.gguf"))
    print(f"{out} ({out.stat().st_size} bytes)")
