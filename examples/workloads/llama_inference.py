"""LLaMA-like decoder inference (RMSNorm, RoPE, SwiGLU, grouped-query attention), bf16:
one prefill of batch x seq tokens followed by 32 decode steps with the KV cache."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from common import parse_args, run

args = parse_args(__doc__, batch=4, seq=1024, iters=5, warmup=2)
torch.manual_seed(0)
config = LlamaConfig(hidden_size=2048, intermediate_size=5632, num_hidden_layers=16, num_attention_heads=16,
                     num_key_value_heads=4, vocab_size=32000, max_position_embeddings=4096)
with torch.device("cuda"):
    model = LlamaForCausalLM(config)
model = model.to(torch.bfloat16).eval()
prompt = torch.randint(0, config.vocab_size, (args.batch, args.seq), device="cuda")


@torch.no_grad()
def step():
    model.generate(prompt, max_new_tokens=32, min_new_tokens=32, do_sample=False, pad_token_id=0)


run("llama_inference", step, args)
