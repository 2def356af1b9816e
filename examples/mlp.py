"""A 2-layer MLP (Linear-ReLU-Linear) trained with SGD and MSE loss on a fixed random batch.

Record it with `crucible-spec record examples/mlp.py -o mlp.crtrace`. Module scopes: <root>,
net, net.0, net.1, net.2.
"""

import torch
from torch import nn

torch.manual_seed(0)


class MLP(nn.Module):
    """Linear-ReLU-Linear held in `net`."""

    def __init__(self, d_in: int = 16, hidden: int = 32, d_out: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, d_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


model = MLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs = torch.randn(8, 16)
targets = torch.randn(8, 4)


def step() -> float:
    """One training iteration: zero_grad, forward, MSE loss, backward, SGD step."""
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()
