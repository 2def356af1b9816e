"""A small CNN (Conv2d, BatchNorm2d, ReLU, MaxPool2d, Linear) trained with SGD (momentum) and
cross-entropy on a fixed random batch of 8x8 RGB images.

Record it with `crucible-spec record examples/cnn.py -o cnn.crtrace`. Module scopes: <root>,
features, features.0 .. features.3, head.
"""

import torch
from torch import nn

torch.manual_seed(0)


class CNN(nn.Module):
    """conv-bn-relu-pool features, then a linear head over the flattened maps."""

    def __init__(self, channels: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, channels, 3, padding=1), nn.BatchNorm2d(channels), nn.ReLU(),
            nn.MaxPool2d(2))
        self.head = nn.Linear(channels * 4 * 4, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


model = CNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(4, 3, 8, 8)
labels = torch.randint(0, 10, (4,))


def step() -> float:
    """One training iteration: zero_grad, forward, cross-entropy, backward, SGD step."""
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss.item()
