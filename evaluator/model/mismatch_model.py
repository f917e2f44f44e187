"""The mismatch evaluator: text branch + metric branch -> 14 mismatch-class logits.

Text branch: one shared BERT encoder, mean pooled, then separate linear projections of the
reference and the generated text to ``text_dim``. In ``frozen`` mode (the CPU default) the
mean-pooled embeddings are computed once and fed in, so no encoder weights live in the model;
in ``trainable`` mode the model owns the encoder and takes token ids. Optionally (frozen mode)
a token-level comparison of the two texts' token states (``token_interaction``). Metric branch: a Set
Transformer over the scaled metric scores. Both are concatenated and mapped to the classes of
``mismatch_core.taxonomy``; ``score`` is P(NoContr). Either branch can be switched off for ablations.
Optionally a span tagger (``span_tagger``) says which tokens of gen are wrong and which of ref
gen leaves out, and metric columns read by the mismatch head alone (``head_only_features``).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Literal

import torch
from torch import Tensor, nn

from evaluator.features.registry import check_source_columns
from evaluator.features.scaling import DEFAULT_MARGIN, scale_to_bounds
from evaluator.model.metric_set import MetricSetEncoder
from evaluator.model.span_tagger import SpanTagger
from evaluator.model.token_interaction import TokenInteraction
from mismatch_core.config import check_at_least_one, check_not_negative
from mismatch_core.resources import DEFAULT_ENCODER
from mismatch_core.taxonomy import INDEX, NUM_CLASSES

if TYPE_CHECKING:
    from transformers import PreTrainedModel

EncoderMode = Literal["frozen", "trainable"]
ENCODER_MODES = ("frozen", "trainable")
REFERENCE_AGGREGATES = ("best", "max")  # see MismatchConfig.reference_aggregate
FIT_REFERENCE_AGGREGATE = "best"  # what fine-tuning fits a model to read
DECIDING_REFERENCES = ("likeliest", "likeliest_errors_closest")  # MismatchConfig.deciding_reference
READS_NOCONTR = 0.5  # P(NoContr) from which deciding_reference takes a reading as NoContr
NO_CONTRADICTION = INDEX["NoContr"]
MISMATCH_LOG_FLOOR = math.log(1e-4)  # the ratings read class log-probabilities from here up


@dataclass
class MismatchConfig:
    """Everything needed to rebuild the architecture; stored in the exported config.json.

    Each field's default is the behaviour from before the field existed, so a config written
    by older code, which lacks it, reads as it did then; an unknown key is refused."""

    feature_names: list[str] = field(default_factory=list)
    encoder: str = DEFAULT_ENCODER
    encoder_mode: EncoderMode = "frozen"
    embedding_dim: int = 384
    encoder_config: dict | None = None
    use_text: bool = True
    # text branch also reads the pair's alignment vectors (what each side says that the other
    # does not, see evaluator.features.encoder_pass.alignment_vector); frozen mode only
    use_alignment: bool = False
    # text branch also gives the head |ref - gen| and ref * gen of the projected embeddings
    # (InferSent/COMET pair features), so small differences need not be learned from the
    # concatenation
    text_interactions: bool = False
    # text branch also compares the two texts token by token (see token_interaction): reads
    # the frozen encoder's token states of both sides; frozen mode only
    use_tokens: bool = False
    token_dim: int = 64
    use_metrics: bool = True
    metric_ids: bool = True
    text_dim: int = 64
    set_dim: int = 64
    num_heads: int = 4
    num_blocks: int = 2
    num_inducing: int = 0
    num_seeds: int = 1
    head_hidden: int = 0
    dropout: float = 0.0
    num_classes: int = NUM_CLASSES
    # outputs of the task rating head (0: none, as in the pretrained base); fine-tuning sets
    # one per criterion, read through the checkpoint's ``tasks`` entry
    num_ratings: int = 0
    # ratings also read the scaled metric scores through a linear map (fine-tuning starts it at
    # the ridge fit of the training ratings): a task model starts from the best linear mix of
    # its metrics and the head learns what they miss
    rating_from_metrics: bool = False
    # ratings also read the mismatch head's class log-probabilities (floored at
    # MISMATCH_LOG_FLOOR) through a linear map, so an error the model names can lower them
    # (fine-tuning starts the map at zero and, for regression, keeps its signs: see
    # evaluator.finetune.module)
    rating_from_mismatch: bool = False
    # the metric map reads each metric's best score over all of a pair's references instead of
    # the closest reference's alone: with 5 or 11 references, one reference leaves most of the
    # metrics' evidence unused
    # (docs/experiments/2026-11-25-ratings-all-references)
    ratings_read_all_references: bool = False
    # how (``evaluator.inference.over_references``): "best", a similarity's max, a distance's
    # min and the kind of difference at the closest reference; "max", each metric's max, what
    # checkpoints fitted before 2026-12-02 read (a far reference raised the novelty and
    # distance columns); fine-tuning fits "best"
    reference_aggregate: str = "max"
    # which of a pair's references names its errors (``evaluator.inference.reading_rows``; the
    # score and the ratings always read the reading the head alone finds likeliest NoContr):
    # "likeliest", that one, what configs without the key read; "likeliest_errors_closest",
    # the one closest on the metrics' closeness columns (registry.CLOSER) where the reported
    # P(NoContr) of both readings is below READS_NOCONTR, so an error is named against the
    # reference gen is near, not an unrelated one
    # (docs/experiments/2026-12-02-errors-named-closest). A task model fitted from a base
    # takes the base's rule
    deciding_reference: str = "likeliest"
    # ratings mix, per criterion, what fine-tuning learned (the rating head and the metric map)
    # with the metric map's starting ridge fit (kept unchanged as ``ridge_rating``), the
    # learned share chosen on the validation groups: the learned part counts only as far as
    # it ranks held-out ratings better than the metrics' linear fit, among the shares that
    # keep the contrast copies below their parents as often as the learned rating does; the
    # mismatch map is added outside the mix (evaluator.finetune.rating_mix)
    rating_mix: bool = False
    # width of the span tagger (0: none): per-token scores of which gen tokens are wrong and
    # which ref tokens gen leaves out (see span_tagger); reads the frozen token states
    span_dim: int = 0
    # columns of feature_names that the mismatch head alone reads, through one linear term per
    # class added to its logits (``feature_logits``); the metric set, the ratings and the
    # choice of the closest reference skip them, so a base gains such a column without its
    # representation or a task's ratings moving
    # (docs/experiments/2026-11-26-head-only-disfluency)
    head_only_features: list[str] = field(default_factory=list)
    # metric columns computed between the source (a summary's document, the triples, the
    # dialogue history) and gen, which the ratings' metric maps read after the reference
    # columns, scaled by bounds fitted on the training records (``SourceScaling``): a
    # summary's faithfulness shows against its document, not against other summaries
    # (docs/experiments/2026-11-27-source-metrics)
    source_features: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        sizes = {"token_dim": self.token_dim, "text_dim": self.text_dim, "set_dim": self.set_dim,
                 "num_heads": self.num_heads, "num_blocks": self.num_blocks,
                 "num_seeds": self.num_seeds, "num_classes": self.num_classes}  # fmt: skip
        check_at_least_one(sizes)
        check_not_negative({"num_inducing": self.num_inducing, "head_hidden": self.head_hidden,
                            "num_ratings": self.num_ratings, "span_dim": self.span_dim})  # fmt: skip
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be at least 0 and below 1, got {self.dropout}")
        if self.encoder_mode not in ENCODER_MODES:
            raise ValueError(
                f"encoder_mode must be one of {ENCODER_MODES}, got {self.encoder_mode!r}"
            )
        if not (self.use_text or self.use_metrics):
            raise ValueError("at least one of use_text and use_metrics must be true")
        if self.text_interactions and not self.use_text:
            raise ValueError("text_interactions needs use_text")
        if self.use_alignment and not (self.use_text and self.encoder_mode == "frozen"):
            raise ValueError("use_alignment needs use_text in frozen encoder mode")
        if self.use_tokens and not (self.use_text and self.encoder_mode == "frozen"):
            raise ValueError("use_tokens needs use_text in frozen encoder mode")
        if self.rating_from_metrics and not self.use_metrics:
            raise ValueError("rating_from_metrics needs use_metrics")
        if self.ratings_read_all_references and not self.rating_from_metrics:
            raise ValueError("ratings_read_all_references needs rating_from_metrics")
        if self.reference_aggregate not in REFERENCE_AGGREGATES:
            raise ValueError(
                f"reference_aggregate must be one of {REFERENCE_AGGREGATES}, "
                f"got {self.reference_aggregate!r}"
            )
        if self.deciding_reference not in DECIDING_REFERENCES:
            raise ValueError(
                f"deciding_reference must be one of {DECIDING_REFERENCES}, "
                f"got {self.deciding_reference!r}"
            )
        if self.deciding_reference != "likeliest" and not self.use_metrics:
            raise ValueError(f"deciding_reference {self.deciding_reference!r} needs use_metrics")
        if self.rating_mix and not self.rating_from_metrics:
            raise ValueError("rating_mix needs rating_from_metrics")
        if self.rating_from_mismatch and not self.num_ratings:
            raise ValueError("rating_from_mismatch needs num_ratings above 0")
        if self.span_dim and self.encoder_mode != "frozen":
            raise ValueError("span_dim needs the frozen encoder mode (it reads token states)")
        if self.use_metrics and not self.feature_names:
            raise ValueError("use_metrics needs feature_names (the metric columns, in order)")
        if len(set(self.feature_names)) != len(self.feature_names):
            raise ValueError(f"feature_names has duplicates: {self.feature_names}")
        unknown = sorted(set(self.head_only_features) - set(self.feature_names))
        if unknown:
            raise ValueError(f"head_only_features not in feature_names: {', '.join(unknown)}")
        if self.head_only_features and not self.use_metrics:
            raise ValueError("head_only_features needs use_metrics")
        if self.use_metrics and set(self.feature_names) <= set(self.head_only_features):
            raise ValueError("the metric set needs a column that is not in head_only_features")
        if self.source_features:
            if not (self.num_ratings and self.rating_from_metrics):
                raise ValueError("source_features needs a rating head that reads the metrics")
            try:
                check_source_columns(self.source_features)
            except ValueError as error:
                raise ValueError(f"source_features: {error}") from None

    def set_columns(self) -> list[int]:
        """Positions in ``feature_names`` of the columns the metric set and the metric maps read."""
        head_only = set(self.head_only_features)
        return [i for i, name in enumerate(self.feature_names) if name not in head_only]

    def head_only_columns(self) -> list[int]:
        """Positions in ``feature_names`` of ``head_only_features``, in their order."""
        return [self.feature_names.index(name) for name in self.head_only_features]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping) -> MismatchConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown model config keys: {', '.join(unknown)}")
        for item in fields(cls):
            if item.name in data and not _same_kind(data[item.name], item.default):
                raise ValueError(
                    f"model config key {item.name!r} must be {type(item.default).__name__}, "
                    f"got {data[item.name]!r}"
                )
        return cls(**data)


def _same_kind(value: object, default: object) -> bool:
    """Whether a stored config value has the type of the field's default (bool, int, float,
    str; an int is a float too); fields without a plain default (None, lists) are not checked."""
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, str):
        return isinstance(value, str)
    return True


def mean_pool(hidden: Tensor, attention_mask: Tensor) -> Tensor:
    """Average the token vectors of each text, ignoring padding (sentence-transformers pooling)."""
    weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)


def encoder_from_config(encoder_config: Mapping) -> PreTrainedModel:
    """A randomly initialised Hugging Face encoder of the stored architecture (weights come later)."""
    from transformers import AutoConfig, AutoModel

    return AutoModel.from_config(AutoConfig.for_model(**encoder_config))


class ColumnLogits(nn.Module):
    """A linear term per class in a few scaled metric columns, added to the mismatch logits.
    It starts at zero without drawing random numbers, so a model that has it initialises
    every other layer exactly as one without it (a task fitted on a base with head-only
    columns repeats the fit on the same base without them, up to float rounding)."""

    def __init__(self, columns: int, classes: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(classes, columns))
        self.bias = nn.Parameter(torch.zeros(classes))

    def forward(self, values: Tensor) -> Tensor:
        return nn.functional.linear(values, self.weight, self.bias)


class SourceScaling(nn.Module):
    """Raw source metric scores -> the ratings' scale by the formula ``FeatureScaler`` maps the
    reference columns with (``scale_to_bounds``): each column's fitted (low, high) to (0, 1),
    clipped ``DEFAULT_MARGIN`` spans beyond. The bounds are buffers, fitted on the training
    records by fine-tuning (``set_bounds``) and saved with the weights."""

    low: Tensor
    high: Tensor

    def __init__(self, columns: int) -> None:
        super().__init__()
        self.register_buffer("low", torch.zeros(columns))
        self.register_buffer("high", torch.ones(columns))

    def set_bounds(self, low: Tensor, high: Tensor) -> None:
        self.low.copy_(low)
        self.high.copy_(high)

    def forward(self, values: Tensor) -> Tensor:
        return scale_to_bounds(values, self.low, self.high, DEFAULT_MARGIN)


class MismatchModel(nn.Module):
    """BERT dual encoder + Set Transformer over metric scores -> mismatch-class logits."""

    learned_share: Tensor  # a buffer, with rating_mix

    def __init__(self, config: MismatchConfig, encoder: PreTrainedModel | None = None) -> None:
        super().__init__()
        config = replace(config)
        self.encoder: PreTrainedModel | None = None
        if config.use_text and config.encoder_mode == "trainable":
            if encoder is None:
                if config.encoder_config is None:
                    raise ValueError("trainable encoder mode needs an encoder or encoder_config")
                encoder = encoder_from_config(config.encoder_config)
            config.encoder_config = encoder.config.to_dict()
            config.embedding_dim = encoder.config.hidden_size
            self.encoder = encoder
        elif encoder is not None:
            raise ValueError("an encoder module is only used in trainable mode with use_text")
        self.config = config

        head_inputs = 0
        self.ref_projection: nn.Linear | None = None
        self.gen_projection: nn.Linear | None = None
        if config.use_text:
            self.ref_projection = nn.Linear(config.embedding_dim, config.text_dim)
            self.gen_projection = nn.Linear(config.embedding_dim, config.text_dim)
            head_inputs += (4 if config.text_interactions else 2) * config.text_dim
        self.alignment_projection: nn.Linear | None = None
        if config.use_alignment:
            self.alignment_projection = nn.Linear(2 * config.embedding_dim, 2 * config.text_dim)
            head_inputs += 2 * config.text_dim
        self.token_interaction: TokenInteraction | None = None
        if config.use_tokens:
            self.token_interaction = TokenInteraction(
                config.embedding_dim, config.token_dim, config.dropout
            )
            head_inputs += self.token_interaction.output_dim
        self.metric_set: MetricSetEncoder | None = None
        set_columns = config.set_columns()
        # None: the metric set reads every column
        self.set_columns = set_columns if config.head_only_features else None
        self.head_only_columns = config.head_only_columns()
        if config.use_metrics:
            self.metric_set = MetricSetEncoder(
                num_metrics=len(set_columns),
                dim=config.set_dim,
                num_heads=config.num_heads,
                num_blocks=config.num_blocks,
                num_inducing=config.num_inducing,
                num_seeds=config.num_seeds,
                metric_ids=config.metric_ids,
                dropout=config.dropout,
            )
            head_inputs += self.metric_set.output_dim
        self.dropout = nn.Dropout(config.dropout)
        if config.head_hidden:
            self.head: nn.Module = nn.Sequential(
                nn.Linear(head_inputs, config.head_hidden),
                nn.GELU(),
                nn.Dropout(config.dropout),
                nn.Linear(config.head_hidden, config.num_classes),
            )
        else:
            self.head = nn.Linear(head_inputs, config.num_classes)
        self.feature_logits: ColumnLogits | None = None
        if config.head_only_features:
            self.feature_logits = ColumnLogits(len(config.head_only_features), config.num_classes)
        self.rating_head: nn.Sequential | None = None
        if config.num_ratings:
            self.rating_head = nn.Sequential(
                nn.Linear(head_inputs, max(config.head_hidden, 64)),
                nn.GELU(),
                nn.Dropout(config.dropout),
                nn.Linear(max(config.head_hidden, 64), config.num_ratings),
            )
        rating_inputs = len(set_columns) + len(config.source_features)
        self.source_scaling: SourceScaling | None = None
        if config.source_features:
            self.source_scaling = SourceScaling(len(config.source_features))
        self.metric_rating: nn.Linear | None = None
        if config.num_ratings and config.rating_from_metrics:
            self.metric_rating = nn.Linear(rating_inputs, config.num_ratings)
        self.ridge_rating: nn.Linear | None = None
        if config.num_ratings and config.rating_mix:
            self.ridge_rating = nn.Linear(rating_inputs, config.num_ratings)
            self.ridge_rating.requires_grad_(False)  # set once, from the training ratings
            # per criterion, the share of the learned rating (the rest: the ridge fit)
            self.register_buffer("learned_share", torch.ones(config.num_ratings))
        self.mismatch_rating: nn.Linear | None = None
        if config.num_ratings and config.rating_from_mismatch:
            self.mismatch_rating = nn.Linear(config.num_classes, config.num_ratings)
        self.span_tagger: SpanTagger | None = None
        if config.span_dim:
            self.span_tagger = SpanTagger(config.embedding_dim, config.span_dim, config.dropout)

    @classmethod
    def with_pretrained_encoder(cls, config: MismatchConfig) -> MismatchModel:
        """Build for training: in trainable mode start from the named encoder's pretrained weights."""
        if not (config.use_text and config.encoder_mode == "trainable"):
            return cls(config)
        from mismatch_core.resources import load_encoder

        _, encoder = load_encoder(config.encoder)
        return cls(config, encoder=copy.deepcopy(encoder).train())

    def embed(self, text: Tensor | Mapping[str, Tensor]) -> Tensor:
        """Mean-pooled text embedding: passed through when frozen, computed by the encoder otherwise."""
        if self.encoder is None:
            if (
                not isinstance(text, Tensor)
                or text.dim() != 2
                or text.shape[1] != self.config.embedding_dim
            ):
                raise ValueError(
                    f"frozen mode expects precomputed embeddings of shape (batch, {self.config.embedding_dim})"
                )
            return text
        if not isinstance(text, Mapping):
            raise ValueError(
                "trainable mode expects tokenizer output with input_ids and attention_mask"
            )
        output = self.encoder(input_ids=text["input_ids"], attention_mask=text["attention_mask"])
        return mean_pool(output.last_hidden_state, text["attention_mask"])

    def represent(
        self,
        features: Tensor | None = None,
        ref: Tensor | Mapping[str, Tensor] | None = None,
        gen: Tensor | Mapping[str, Tensor] | None = None,
        feature_mask: Tensor | None = None,
        metric_ids: Tensor | None = None,
        alignment: Tensor | None = None,
        tokens: Mapping[str, Tensor] | None = None,
    ) -> Tensor:
        """The joint pair representation both heads read (batch, head inputs).

        features: scaled metric scores (batch, metrics), columns in ``config.feature_names`` order
        unless ``metric_ids`` says which metric each column is; feature_mask: True = present.
        ref / gen: embeddings (frozen) or tokenizer output (trainable); alignment: the pair's
        alignment vectors (batch, 2 * embedding_dim) when ``use_alignment``; tokens: the token
        states when ``use_tokens``, ``{"ref", "ref_mask", "gen", "gen_mask"}`` with states
        (batch, tokens, embedding_dim) and masks (batch, tokens), True = a token.
        """
        parts = []
        if self.ref_projection is not None and self.gen_projection is not None:
            if ref is None or gen is None:
                raise ValueError("the text branch needs both ref and gen")
            ref_vector = self.ref_projection(self.embed(ref))
            gen_vector = self.gen_projection(self.embed(gen))
            parts += [ref_vector, gen_vector]
            if self.config.text_interactions:
                parts += [(ref_vector - gen_vector).abs(), ref_vector * gen_vector]
        if self.alignment_projection is not None:
            if alignment is None:
                raise ValueError("this model reads alignment vectors; pass alignment=")
            parts.append(self.alignment_projection(alignment))
        if self.token_interaction is not None:
            if tokens is None:
                raise ValueError("this model compares token states; pass tokens=")
            parts.append(
                self.token_interaction(
                    tokens["ref"], tokens["ref_mask"], tokens["gen"], tokens["gen_mask"]
                )
            )
        if self.metric_set is not None:
            if features is None:
                raise ValueError("the metric branch needs features")
            if self.set_columns is not None:
                if metric_ids is not None:
                    raise ValueError("metric_ids cannot be combined with head_only_features")
                features = features[:, self.set_columns]
                if feature_mask is not None:
                    feature_mask = feature_mask[:, self.set_columns]
            parts.append(self.metric_set(features, feature_mask, metric_ids))
        return self.dropout(torch.cat(parts, dim=-1))

    def forward(self, features: Tensor | None = None, **kwargs) -> Tensor:
        """Mismatch-class logits (batch, num_classes); arguments as for ``represent``."""
        return self.logits(self.represent(features, **kwargs), features)

    def logits(self, representation: Tensor, features: Tensor | None = None) -> Tensor:
        """Mismatch-class logits from ``represent``'s output; features: the scaled metric
        scores given to ``represent``, needed with ``head_only_features``."""
        return self.add_head_only_term(self.head(representation), features)

    def read_heads(
        self,
        representation: Tensor,
        features: Tensor | None,
        rating_features: Tensor | None,
        source: Tensor | None = None,
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """What prediction reads from one pass of the heads (``evaluator.inference``,
        ``evaluator.finetune.outputs``): the mismatch-class logits (``logits``), the likeliness
        by which a pair's scoring reading is picked (``inference.reading_rows``: the head's
        own P(NoContr), without the ``head_only_features`` term) and the ratings (``rate`` on
        ``rating_features``; None without a rating head; ``source`` as for ``rate``)."""
        head_logits = self.head(representation)
        closeness = score_from_logits(head_logits.float())
        ratings = (
            None
            if self.rating_head is None
            else self.rate(representation, rating_features, head_logits=head_logits, source=source)
        )
        return self.add_head_only_term(head_logits, features), closeness, ratings

    def add_head_only_term(self, head_logits: Tensor, features: Tensor | None) -> Tensor:
        """The head's logits plus the term of ``head_only_features`` (a missing value adds
        nothing); unchanged for a model without such columns."""
        if self.feature_logits is None:
            return head_logits
        if features is None:
            raise ValueError("this model's head also reads metric columns; pass features=")
        head_only = features[:, self.head_only_columns]
        return head_logits + self.feature_logits(torch.nan_to_num(head_only))

    def rating_columns(self, features: Tensor, source: Tensor | None = None) -> Tensor:
        """What the ratings' metric maps read: the columns of scaled metric scores they read,
        then, with ``source_features``, the scaled source scores (``source``: the raw ones,
        (batch, len(source_features)), required then)."""
        columns = features if self.set_columns is None else features[..., self.set_columns]
        if self.source_scaling is None:
            return columns
        if source is None:
            raise ValueError("this model's ratings also read the source; pass source=")
        return torch.cat([columns, self.source_scaling(source.to(columns.dtype))], dim=-1)

    def rate(
        self,
        representation: Tensor,
        features: Tensor | None = None,
        head_logits: Tensor | None = None,
        source: Tensor | None = None,
    ) -> Tensor:
        """Task rating outputs (batch, num_ratings) from ``represent``'s output.

        Regression tasks: criteria on the normalised [0, 1] scale; classification tasks: logits.
        features: the scaled metric scores the ratings read, needed when
        ``rating_from_metrics``. With ``rating_from_mismatch`` the ratings also read the
        mismatch head's log-probabilities for the same representation, floored at
        ``MISMATCH_LOG_FLOOR``: how sure the head is that a class is absent stops mattering
        below a probability of 1e-4, so a confident head cannot swing a rating without bound.
        They read the head without its ``head_only_features`` term: those columns refine the
        errors the model names and nothing else (read by the ratings, the disfluency column
        made one summarization stress test fail in every fit seed,
        docs/experiments/2026-11-26-head-only-disfluency); nor do they choose the closest
        reference (``evaluator.inference``).
        With ``rating_mix`` the rating head and the metric map count ``learned_share`` per
        criterion, the frozen ridge fit of the metrics the rest; the mismatch map is outside
        the mix, so a named error lowers a rating by the same amount whatever the share.
        head_logits: ``head(representation)`` when the caller has computed it already.
        source: the raw source metric scores, needed with ``source_features``.
        """
        if self.rating_head is None:
            raise ValueError(
                "this model has no rating head (num_ratings is 0); fine-tune it on a task"
            )
        ratings = self.rating_head(representation)
        if self.metric_rating is not None:
            if features is None:
                raise ValueError("this model's ratings also read the metric scores; pass features=")
            features = torch.nan_to_num(self.rating_columns(features, source))
            ratings = ratings + self.metric_rating(features)
        if self.ridge_rating is not None:
            assert features is not None  # rating_mix needs rating_from_metrics, checked above
            ridge = self.ridge_rating(features)
            ratings = self.learned_share * ratings + (1 - self.learned_share) * ridge
        if self.mismatch_rating is not None:
            if head_logits is None:
                head_logits = self.head(representation)
            log_probs = head_logits.log_softmax(-1).clamp(min=MISMATCH_LOG_FLOOR)
            ratings = ratings + self.mismatch_rating(log_probs)
        return ratings

    def tag(self, tokens: Mapping[str, Tensor]) -> tuple[Tensor, Tensor]:
        """Per-token error logits of gen and missing logits of ref, from the token states
        (``represent``'s ``tokens`` input); ValueError when the model has no span tagger."""
        if self.span_tagger is None:
            raise ValueError("this model has no span tagger (span_dim is 0)")
        return self.span_tagger(
            tokens["ref"], tokens["ref_mask"], tokens["gen"], tokens["gen_mask"]
        )


def score_from_logits(logits: Tensor) -> Tensor:
    """The scalar quality: probability that gen does not contradict ref (class NoContr)."""
    return logits.softmax(dim=-1)[..., NO_CONTRADICTION]
