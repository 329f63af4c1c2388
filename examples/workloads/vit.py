"""ViT-B/16 inference (torchvision, random weights), bf16, 224x224 images."""
import torch
import torchvision

from common import parse_args, run

args = parse_args(__doc__, batch=64)
torch.manual_seed(0)
with torch.device("cuda"):
    model = torchvision.models.vit_b_16(weights=None)
model = model.to(torch.bfloat16).eval()
images = torch.randn(args.batch, 3, 224, 224, device="cuda", dtype=torch.bfloat16)


@torch.no_grad()
def step():
    model(images)


run("vit", step, args)
