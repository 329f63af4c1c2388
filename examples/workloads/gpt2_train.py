"""GPT-2-small-like training step: forward, backward and AdamW, bf16 autocast."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from common import parse_args, run

args = parse_args(__doc__, batch=8, seq=512, iters=10)
torch.manual_seed(0)
with torch.device("cuda"):
    model = GPT2LMHeadModel(GPT2Config(n_positions=args.seq))
model = model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
tokens = torch.randint(0, model.config.vocab_size, (args.batch, args.seq), device="cuda")


def step():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(tokens, labels=tokens).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


run("gpt2_train", step, args)
