"""GPT-2-small-like inference (12 layers, d=768, 12 heads), bf16, batch x seq tokens."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from common import parse_args, run

args = parse_args(__doc__, batch=8, seq=1024)
torch.manual_seed(0)
with torch.device("cuda"):
    model = GPT2LMHeadModel(GPT2Config(n_positions=args.seq))
model = model.to(torch.bfloat16).eval()
tokens = torch.randint(0, model.config.vocab_size, (args.batch, args.seq), device="cuda")


@torch.no_grad()
def step():
    model(tokens)


run("gpt2_inference", step, args)
