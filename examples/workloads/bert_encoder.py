"""BERT-base-like encoder inference (12 layers, d=768), bf16, batch x seq tokens."""
import torch
from transformers import BertConfig, BertModel

from common import parse_args, run

args = parse_args(__doc__, batch=32, seq=512)
torch.manual_seed(0)
with torch.device("cuda"):
    model = BertModel(BertConfig())
model = model.to(torch.bfloat16).eval()
tokens = torch.randint(0, model.config.vocab_size, (args.batch, args.seq), device="cuda")


@torch.no_grad()
def step():
    model(tokens)


run("bert_encoder", step, args)
