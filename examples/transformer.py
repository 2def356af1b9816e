"""One pre-norm transformer block (LayerNorm, multi-head self-attention, GELU MLP, residuals)
trained with Adam to reproduce a fixed random target.

Record it with `crucible-spec record examples/transformer.py -o block.crtrace`. Module scopes:
<root>, ln1, attn, ln2, mlp, mlp.0, mlp.1, mlp.2 (attention reads attn.out_proj's
weights without calling it).
"""

import torch
from torch import nn

torch.manual_seed(0)


class Block(nn.Module):
    """x + attn(ln1(x)), then + mlp(ln2(x))."""

    def __init__(self, d_model: int = 32, heads: int = 4, d_ff: int = 64) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Linear(d_ff, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


model = Block()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
tokens = torch.randn(2, 8, 32)
target = torch.randn(2, 8, 32)


def step() -> float:
    """One training iteration: zero_grad, forward, MSE loss, backward, Adam step."""
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(tokens), target)
    loss.backward()
    optimizer.step()
    return loss.item()
