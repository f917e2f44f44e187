"""Pretrain the mismatch evaluator: python scripts/pretrain.py fit --config configs/pretrain.yaml"""

from mismatch_core.resources import configure_offline_mode

if __name__ == "__main__":
    configure_offline_mode()  # before the Hugging Face libraries are imported
    from evaluator.training.pretrain import main

    main()
