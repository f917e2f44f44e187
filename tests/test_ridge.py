"""The metric map's starting fit and the choice of its penalty on grouped folds."""

import pytest
import torch

from evaluator.finetune.agreement import kendall
from evaluator.finetune.ridge import choose_alpha, ridge_fit


def test_ridge_fit_matches_least_squares_without_penalty() -> None:
    x = torch.randn(50, 3, dtype=torch.float64)
    y = x @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64) + 3.0
    weight, bias = ridge_fit(x, y, alpha=0.0)
    torch.testing.assert_close(weight, torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64))
    assert abs(float(bias) - 3.0) < 1e-9
    shrunk, _ = ridge_fit(x, y, alpha=1e4)
    assert shrunk.norm() < weight.norm()


def collinear(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    """Two nearly equal features whose difference is the rating: only a small penalty
    finds the difference; a large one adds the two (their sum ranks the ratings poorly)."""
    generator = torch.Generator().manual_seed(seed)
    first = torch.randn(n, generator=generator, dtype=torch.float64)
    second = 0.9 * first + 0.1 * torch.randn(n, generator=generator, dtype=torch.float64)
    groups = [f"g{i // 4}" for i in range(n)]  # four records per group
    return torch.stack([first, second], dim=1), first - second, groups


def test_choose_alpha_takes_the_penalty_that_ranks_held_out_groups_best() -> None:
    x, y, groups = collinear(200, 0)
    assert choose_alpha(x, y, groups, (1e-6, 1e6)) == 1e-6
    small, large = (ridge_fit(x, y, alpha) for alpha in (1e-6, 1e6))
    held_x, held_y, _ = collinear(200, 1)
    assert kendall((held_x @ small[0]).numpy(), held_y.numpy()) > 0.99
    assert kendall((held_x @ large[0]).numpy(), held_y.numpy()) < 0.5
    # many noise features and few records: the fit without shrinkage chases the noise
    generator = torch.Generator().manual_seed(2)
    noisy = torch.randn(60, 40, generator=generator, dtype=torch.float64)
    target = noisy[:, 0] + 2.0 * torch.randn(60, generator=generator, dtype=torch.float64)
    assert choose_alpha(noisy, target, [f"g{i // 3}" for i in range(60)], (1e-6, 1e3)) == 1e3


def test_choose_alpha_with_one_penalty_or_one_group_keeps_the_first() -> None:
    x, y, groups = collinear(40, 0)
    assert choose_alpha(x, y, groups, (7.0,)) == 7.0
    assert choose_alpha(x, y, ["one"] * 40, (1e6, 1e-6)) == 1e6
    with pytest.raises(ValueError, match="at least one penalty"):
        choose_alpha(x, y, groups, ())


def test_choose_alpha_with_fewer_groups_than_folds_holds_out_each_group() -> None:
    x, y, _ = collinear(40, 3)
    groups = ["a"] * 20 + ["b"] * 20
    assert choose_alpha(x, y, groups, (1e-6, 1e6)) == 1e-6
