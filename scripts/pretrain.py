"""Pretrain the mismatch evaluator: python scripts/pretrain.py fit --config configs/pretrain.yaml"""

from evaluator.training.pretrain import main

if __name__ == "__main__":
    main()
