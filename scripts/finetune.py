"""Fine-tune on a task's human ratings: python scripts/finetune.py fit --config configs/finetune/<task>.yaml"""

from evaluator.finetune_cli import main

if __name__ == "__main__":
    main()
