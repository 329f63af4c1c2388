"""DLRM-like recommender inference: 26 embedding-bag tables (sum pooling, multi-hot),
bottom and top MLPs, and the pairwise dot interaction, fp32, like the MLPerf model's
shape at a smaller table size."""
import torch
from torch import nn

from common import parse_args, run

args = parse_args(__doc__, batch=8192, iters=20)
torch.manual_seed(0)
ROWS = [4_000_000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 4_000_000, 3067956, 405282, 10, 2209, 11938, 155,
        4, 976, 14, 4_000_000, 4_000_000, 4_000_000, 590152, 12973, 108, 36]
HOTNESS = [3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1]
D = 128


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tables = nn.ModuleList(nn.EmbeddingBag(rows, D, mode="sum") for rows in ROWS)
        self.bottom = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                                    nn.Linear(256, D), nn.ReLU())
        features = D + (len(ROWS) + 1) * len(ROWS) // 2
        self.top = nn.Sequential(nn.Linear(features, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                                 nn.Linear(1024, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 1))
        self.register_buffer("pairs", torch.tril_indices(len(ROWS) + 1, len(ROWS) + 1, offset=-1))

    def forward(self, dense, indices, offsets):
        x = self.bottom(dense)
        pooled = [table(idx, off) for table, idx, off in zip(self.tables, indices, offsets)]
        stacked = torch.stack([x] + pooled, dim=1)                    # (B, 27, D)
        gram = torch.bmm(stacked, stacked.transpose(1, 2))            # (B, 27, 27)
        interactions = gram[:, self.pairs[0], self.pairs[1]]          # (B, 351)
        return torch.sigmoid(self.top(torch.cat([x, interactions], dim=1)))


with torch.device("cuda"):  # initialise the large tables on the GPU, not the CPU
    model = DLRM().eval()
dense = torch.randn(args.batch, 13, device="cuda")
indices = [torch.randint(0, rows, (args.batch * hot,), device="cuda") for rows, hot in zip(ROWS, HOTNESS)]
offsets = [torch.arange(0, args.batch * hot, hot, device="cuda") for hot in HOTNESS]


@torch.no_grad()
def step():
    model(dense, indices, offsets)


run("dlrm", step, args)
