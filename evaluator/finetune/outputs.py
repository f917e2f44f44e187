"""Model outputs over cached task inputs, read against the references as predict reads them.

``evaluator.inference.predict_outputs`` runs the text branch once per reference and keeps the
readings ``reading_rows`` picks: the likeliest for the score and the ratings, the model's rule
for the errors. The same readings here (``pair_readings``), over cached features and
embeddings, pick the reference a model trains on (the likeliest, whose reading its ratings
give) and give the test predictions, so the evaluation measures exactly what ``mismatch
predict`` reports.
"""

from __future__ import annotations

import numpy as np
import torch

from evaluator.features.token_store import pair_tokens
from evaluator.finetune.data import TaskInputs
from evaluator.inference import over_references, pair_readings
from evaluator.model import MismatchModel


def task_outputs(
    model: MismatchModel, features: np.ndarray, inputs: TaskInputs, batch_size: int = 1024
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(the likeliest (record, reference) pair per record, class probabilities, rating outputs
    or None), as ``pair_readings`` gives them to predict.

    ``features``: the scaled features of every (record, reference) pair, and the chosen pairs
    index those pairs, both in ``inputs.ref_rows`` order."""
    owner = inputs.pair_owner()
    ref_rows = np.concatenate(inputs.ref_rows)
    texts = torch.from_numpy(inputs.texts)
    feature_table = torch.from_numpy(features)
    rating_table = (
        torch.from_numpy(
            over_references(
                features, owner, model.config.feature_names, model.config.reference_aggregate
            )
        )
        if model.config.ratings_read_all_references
        else feature_table
    )
    alignments = None
    if model.config.use_alignment:
        if inputs.alignments is None:
            raise ValueError("the model reads alignment vectors; build the inputs with alignments")
        alignments = torch.from_numpy(inputs.alignments)
    if model.config.use_tokens and inputs.tokens is None:
        raise ValueError("the model compares token states; build the inputs with tokens")
    source = None
    if model.config.source_features:
        if inputs.source is None:
            raise ValueError("the model's ratings read the source; build the inputs with it")
        source = torch.tensor(inputs.source.to_numpy()).float()
    model = model.eval()
    probabilities, closeness, ratings = [], [], []
    with torch.no_grad():
        for start in range(0, len(owner), batch_size):
            rows = slice(start, start + batch_size)
            pair = owner[rows]
            pair_features = feature_table[rows] if model.config.use_metrics else None
            representation = model.represent(
                features=pair_features,
                ref=texts[ref_rows[rows]] if model.config.use_text else None,
                gen=texts[inputs.gen_rows[pair]] if model.config.use_text else None,
                alignment=None if alignments is None else alignments[rows],
                tokens=None
                if inputs.tokens is None or not model.config.use_tokens
                else pair_tokens(
                    inputs.tokens, ref_rows[rows], inputs.tokens, inputs.gen_rows[pair]
                ),
            )
            logits, closer, rated = model.read_heads(
                representation,
                pair_features,
                rating_table[rows],
                None if source is None else source[pair],
            )
            probabilities.append(logits.softmax(dim=-1))
            closeness.append(closer)
            if rated is not None:
                ratings.append(rated)
    chosen, pair_probs, pair_ratings = pair_readings(
        model.config,
        torch.cat(probabilities).numpy(),
        torch.cat(closeness).numpy(),
        torch.cat(ratings).numpy() if ratings else None,
        features,
        owner,
        len(inputs),
    )
    return chosen.scoring, pair_probs, pair_ratings
