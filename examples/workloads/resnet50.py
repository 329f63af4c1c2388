"""ResNet-50 inference (torchvision, random weights), bf16, channels-last, 224x224 images."""
import torch
import torchvision

from common import parse_args, run

args = parse_args(__doc__, batch=64)
torch.manual_seed(0)
with torch.device("cuda"):
    model = torchvision.models.resnet50(weights=None)
model = model.to(torch.bfloat16).eval()
model = model.to(memory_format=torch.channels_last)
images = torch.randn(args.batch, 3, 224, 224, device="cuda", dtype=torch.bfloat16).to(
    memory_format=torch.channels_last)


@torch.no_grad()
def step():
    model(images)


run("resnet50", step, args)
