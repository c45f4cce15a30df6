"""Run configuration: the nested frozen dataclasses, one per group, each field checked on construction.

This module imports neither torch nor any UI library, so `grok presets` and `grok --help` stay fast.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from engine.config.numbers import is_prime
from engine.errors import ConfigError as ConfigError  # defined apart, so engine/config/param_sets.py can raise it

OPS = ("add", "sub", "mul", "div", "poly")
SPLITS = ("random", "uniform", "skewed", "skewed_test", "block", "strip")
SKEW_ON = ("a", "both")
SKEW_ORDERS = ("value", "random")
STARVE_POSITIONS = ("any", "same", "mixed")
TARGET_DRAWS = ("", "own", "all")  # train.target_draws_as
MODEL_KINDS = ("mlp_raw", "mlp_embed", "mlp_onehot", "transformer")
FORMATS = ("a_op_b_eq", "a_b_eq", "a_b")  # token sequences, see DataConfig.vocab_size
SCHEDULES = ("constant", "cosine")
ACTIVATIONS = ("relu", "gelu")
LAYERNORMS = ("none", "pre_attn", "pre_mlp", "pre", "post", "qk", "v")
OPTIMIZERS = ("adam", "adamw", "sgd")
SAMPLERS = ("shuffle", "balanced", "gradient", "replacement", "balanced_epochs", "tail")
FOURIER_ORDERS = ("token", "dlog")
HESSIAN_W = ("first", "all")  # probe.hessian_w: W = the first layer reading E, or all downstream parameters
DTYPES = ("float32", "float64")
LOSSES = ("ce", "stablemax")
NOT_STOP_METRICS = ("step", "epoch", "wall_s")  # metrics.csv bookkeeping columns: a stop rule on them is a budget


MAX_P = 2**16  # every one of the p^2 pairs is materialized (§3.3); 2^32 pairs fit no machine this runs on
MAX_SEED = 2**63 - 1  # torch.manual_seed takes a signed 64-bit seed


def _check(cond: bool, name: str, msg: str) -> None:
    if not cond:
        raise ConfigError(f"{name}: {msg}")


def _one_of(value: str, name: str, choices: tuple[str, ...]) -> None:
    _check(value in choices, name, f"must be one of {', '.join(choices)} (got {value!r})")


@dataclass(frozen=True)
class DataConfig:
    """[data]: the modular-arithmetic task and how its pairs split into train and test (§3.3, §4.2, §5.1)."""

    op: str = "mul"  # (a op b) mod p; "poly" is a^2 + ab + b^2 (docs/references/beyond-progress-measures.md)
    p: int = 97  # modulus; the paper's P (§3.3)
    frac_test: float = 0.2  # held out at random first (§5.1)
    frac_train: float = 0.3  # of all p^2 pairs, drawn from the rest by `split` (§5.1)
    split: str = "random"  # random | uniform | skewed (§4.2, Fig. 8) | skewed_test | block | strip
    skew: float = 3.0  # skewed splits: training pair (a, b) drawn with weight exp(-skew * a / (p-1))
    skew_on: str = "a"  # a: weight exp(-skew·r(a)/(p-1)); both: exp(-skew·(r(a)+r(b))/(p-1)), token-level
    skew_order: str = "value"  # rank r(t): value = t; random = a permutation of 0..p-1 seeded by train.seed
    starve_k: int = 0  # random split: k operand tokens chosen by the seed ...
    starve_m: int = 0  # ... keep at most m training pairs each (-1: no cap); the rest of the training set is random
    # Where a target's kept pairs hold it (the operand-position control, issue 33): any = as drawn; same = all
    # in one position, a or b, chosen per target by the seed; mixed = half as a, half as b (m >= 2). The MLP
    # reads [e_a, e_b] through separate blocks of W, so a token seen only as a trains W's a-block alone.
    starve_position: str = "any"  # any | same | mixed
    split_k: int = 0  # block/strip size k; 0 = the k that holds out about frac_test of the pairs
    format: str = "a_op_b_eq"  # [a, op, b, =], op = p, '=' = p+1 (§3.3) | a_b_eq: [a, b, =], '=' = p | a_b: [a, b]

    def __post_init__(self) -> None:
        _one_of(self.op, "data.op", OPS)
        _one_of(self.format, "data.format", FORMATS)
        _one_of(self.split, "data.split", SPLITS)
        _one_of(self.starve_position, "data.starve_position", STARVE_POSITIONS)
        _check(
            self.starve_position != "mixed" or self.starve_m >= 2,
            "data.starve_position",
            f"mixed needs data.starve_m >= 2, one pair per position at least (got m = {self.starve_m})",
        )
        _check(self.p >= 3, "data.p", f"must be >= 3 (got {self.p})")
        _check(self.p <= MAX_P, "data.p", f"must be <= {MAX_P}: all p^2 pairs are built (got {self.p})")
        if self.op in ("mul", "div"):
            _check(is_prime(self.p), "data.p", f"must be prime for op={self.op} (got {self.p})")
        _check(0 < self.frac_test < 1, "data.frac_test", f"must be in (0, 1) (got {self.frac_test})")
        _check(0 < self.frac_train < 1, "data.frac_train", f"must be in (0, 1) (got {self.frac_train})")
        _check(
            self.frac_train + self.frac_test <= 1,
            "data.frac_train",
            f"frac_train + frac_test must be <= 1 (got {self.frac_train} + {self.frac_test})",
        )
        _check(self.skew >= 0, "data.skew", f"must be >= 0 (got {self.skew})")
        n = self.p * self.p
        _check(
            round(self.frac_train * n) >= 1,
            "data.frac_train",
            f"gives an empty training set ({self.frac_train} of {n} pairs at p={self.p})",
        )
        if self.split not in ("block", "strip"):  # those hold out split_k rows/columns instead
            _check(
                round(self.frac_test * n) >= 1,
                "data.frac_test",
                f"gives an empty test set ({self.frac_test} of {n} pairs at p={self.p})",
            )
        _check(0 <= self.split_k < self.p, "data.split_k", f"must be in [0, p) (got {self.split_k})")
        _one_of(self.skew_on, "data.skew_on", SKEW_ON)
        _one_of(self.skew_order, "data.skew_order", SKEW_ORDERS)
        _check(0 <= self.starve_k <= self.p, "data.starve_k", f"must be in [0, p] (got {self.starve_k})")
        _check(self.starve_m >= -1, "data.starve_m", f"must be >= 0, or -1 for no cap (got {self.starve_m})")
        _check(
            self.starve_k == 0 or self.split == "random",
            "data.starve_k",
            f"starving tokens needs split = random (got split = {self.split!r})",
        )

    @property
    def vocab_size(self) -> int:
        """Operands 0..p-1, then op = p and '=' = p+1 (§3.3); a_b_eq has '=' = p, a_b no extra token."""
        return self.p + {"a_op_b_eq": 2, "a_b_eq": 1, "a_b": 0}[self.format]

    @property
    def op_token(self) -> bool:
        """Whether the sequence holds the op token ([a, op, b, =])."""
        return self.format == "a_op_b_eq"

    @property
    def seq_len(self) -> int:
        return {"a_op_b_eq": 4, "a_b_eq": 3, "a_b": 2}[self.format]


@dataclass(frozen=True)
class ModelConfig:
    """[model]: the network, the MLPs of eq. 1 and eq. 2 or a one-layer transformer, and its widths."""

    kind: str = "mlp_embed"  # mlp_raw (eq. 1), mlp_embed (eq. 2), mlp_onehot (one-hot tokens, no E) or transformer
    bias: bool = True  # biases in every Linear of the MLPs (false: the grokking-at-the-edge MLP)
    d_embed: int = 128  # d in E ∈ R^{V×d} (§5)
    d_hidden: int = 0  # MLP hidden width; 0 = seq_len * d_embed (4d = 512, §5)
    n_hidden: int = 1  # hidden layers of the MLP (the paper: 1; Grokking-Insight: 2)
    activation: str = "relu"  # relu | gelu
    freeze_embedding: bool = False  # §4.3: frozen embeddings converge slowly
    embed_init_scale: float = 1.0  # E ~ N(0, scale^2); §4.3: small init converges faster
    n_heads: int = 4  # transformer heads
    d_mlp: int = 512  # transformer MLP width
    layernorm: str = "none"  # transformer LN placement (docs/references/inductive-bias-layernorm.md)
    readout_scale: float = 1.0  # transformer readout multiplier α (lazy/rich control)
    w_params: str = ""  # comma-separated name patterns of "W" (the first matrices reading E); "" = default

    def __post_init__(self) -> None:
        _one_of(self.kind, "model.kind", MODEL_KINDS)
        _one_of(self.activation, "model.activation", ACTIVATIONS)
        _one_of(self.layernorm, "model.layernorm", LAYERNORMS)
        _check(self.d_embed >= 1, "model.d_embed", f"must be >= 1 (got {self.d_embed})")
        _check(self.d_hidden >= 0, "model.d_hidden", f"must be >= 0 (got {self.d_hidden})")
        _check(self.n_hidden >= 1, "model.n_hidden", f"must be >= 1 (got {self.n_hidden})")
        _check(self.embed_init_scale > 0, "model.embed_init_scale", f"must be > 0 (got {self.embed_init_scale})")
        _check(self.n_heads >= 1, "model.n_heads", f"must be >= 1 (got {self.n_heads})")
        _check(self.d_mlp >= 1, "model.d_mlp", f"must be >= 1 (got {self.d_mlp})")
        _check(self.readout_scale > 0, "model.readout_scale", f"must be > 0 (got {self.readout_scale})")
        if self.kind == "transformer":
            _check(
                self.d_embed % self.n_heads == 0,
                "model.n_heads",
                f"must divide d_embed={self.d_embed} (got {self.n_heads})",
            )


@dataclass(frozen=True)
class OptimConfig:
    """[optim]: the optimizer, its lr and weight decay, Adam-LR's c (§4.3, Prop. 4.1) and gradient filters."""

    name: str = "adam"  # adam (coupled L2, as in the paper) | adamw | sgd
    lr: float = 1e-3  # lr of every group but the embedding
    weight_decay: float = 1e-3  # the paper's 0.001 (§5)
    lr_ratio: float = 1.0  # c = lr_E / lr (Adam-LR, §4.3); 1 = plain optimizer
    adaptive: bool = False  # adaptive c (Prop. 4.1, engine/train/adaptive.py), set at step 0 ...
    adaptive_every: int = 100  # ... and recomputed every adaptive_every steps
    adaptive_once: bool = False  # the paper's other reading: c computed at step 0 only, then fixed
    kappa: float = 0.5  # c = kappa * σmax(E)/σmax(W) * f_W/f_E (eq. 24), clamped below
    # A guard against a degenerate σ, not a floor: at 1 the recomputed c sat on it from step 400 on
    # (lr 1e-3), which made the arm plain Adam. c_raw (metrics.csv) shows where a clamp binds.
    ratio_min: float = 0.01  # adaptive c is clamped to [ratio_min, ratio_max]
    ratio_max: float = 100.0
    betas: tuple[float, float] = (0.9, 0.999)  # Adam's (β1, β2)
    momentum: float = 0.9  # sgd only
    eps: float = 1e-8  # Adam's ε in the denominator
    grokfast_alpha: float = 0.0  # Grokfast-EMA filter decay; 0 = off
    grokfast_lambda: float = 0.0  # Grokfast-EMA amplification
    orthogonal: bool = False  # ⊥Grad: drop the gradient component parallel to the weights
    warmup_steps: int = 0  # lr rises linearly from 0: step t (0-based) uses lr·t/warmup_steps; 0 = off
    schedule: str = "constant"  # after warm-up: constant | cosine (half a cosine to 0 at train.max_steps)
    # Weight decay per parameter set (§4.2: a rarely drawn row of E is shrunk by decay between its updates):
    # SET=WD items, commas outside brackets, sets as in train.frozen (E, E[tokens], W, rest, all, a name);
    # a set not named keeps weight_decay, and where sets overlap the most specific wins (E[targets] over E
    # over rest/W over all). Coupled L2 under adam and sgd, decoupled under adamw (engine/train/decay.py).
    decay_sets: str = ""  # e.g. "E[targets]=0" or "E=0,W=1e-3"; empty = weight_decay everywhere
    # Lazy rows (TensorFlow's LazyAdam, torch's SparseAdam): a row of E whose token is not in the batch
    # gets no decay, no moment update and no step; it moves only on the steps that draw it.
    lazy_rows: bool = False  # rows of E outside the batch stay as they are, optimizer moments included
    # Decay only when drawn: lazy rows' decay part alone. A row of E outside the batch gets no decay (coupled
    # L2: a zero gradient, so its moments decay and it still steps on them; adamw: no decoupled shrink).
    lazy_decay: bool = False  # rows of E outside the batch skip weight decay; moments and step go on
    # Row-norm equalization: after each step, each row of E on the task's group axis is moved along its
    # direction from the ring's centre to the mean distance of those rows (engine/train/row_norms.py).
    equal_rows: bool = False  # operand rows of E held at one distance from the ring's centre; no oracle

    def __post_init__(self) -> None:
        _one_of(self.name, "optim.name", OPTIMIZERS)
        _check(self.lr > 0, "optim.lr", f"must be > 0 (got {self.lr})")
        _check(self.weight_decay >= 0, "optim.weight_decay", f"must be >= 0 (got {self.weight_decay})")
        _check(self.lr_ratio > 0, "optim.lr_ratio", f"must be > 0 (got {self.lr_ratio})")
        _check(self.adaptive_every >= 1, "optim.adaptive_every", f"must be >= 1 (got {self.adaptive_every})")
        _check(self.kappa > 0, "optim.kappa", f"must be > 0 (got {self.kappa})")
        _check(0 < self.ratio_min <= self.ratio_max, "optim.ratio_min", "need 0 < ratio_min <= ratio_max")
        _check(
            len(self.betas) == 2 and all(0 <= b < 1 for b in self.betas),
            "optim.betas",
            f"must be two numbers in [0, 1) (got {self.betas})",
        )
        _check(0 <= self.momentum < 1, "optim.momentum", f"must be in [0, 1) (got {self.momentum})")
        _check(self.eps > 0, "optim.eps", f"must be > 0 (got {self.eps})")
        _check(0 <= self.grokfast_alpha < 1, "optim.grokfast_alpha", f"must be in [0, 1) (got {self.grokfast_alpha})")
        _check(self.grokfast_lambda >= 0, "optim.grokfast_lambda", f"must be >= 0 (got {self.grokfast_lambda})")
        _check(self.warmup_steps >= 0, "optim.warmup_steps", f"must be >= 0 (got {self.warmup_steps})")
        _one_of(self.schedule, "optim.schedule", SCHEDULES)
        from engine.config.param_sets import parse_decay_sets  # torch-free; param_sets imports errors only

        parse_decay_sets(self.decay_sets, "optim.decay_sets")


@dataclass(frozen=True)
class TrainConfig:
    """[train]: the loop: batches, budget, evaluation cadence, sampler, seed, device, early stop, checkpoints."""

    batch_size: int = 512  # 0 = full batch
    max_steps: int = 20_000  # optimizer steps in the budget
    eval_every: int = 100  # full train and test sets are evaluated every eval_every steps
    # balanced_epochs: eq. 10's weights without replacement, epochs balanced by token (engine/task/samplers.py)
    sampler: str = "shuffle"  # shuffle | balanced (eq. 10) | gradient (eq. 19) | replacement | balanced_epochs | tail
    # The paper leaves gamma open. In sampler_compare (skewed mul split, 2k steps, 3 seeds) gamma 1
    # never fit the training set (a few tokens took almost every draw); 4 and 16 generalized 3/3.
    # (Measured with L_i the raw row norm of the gradient, before it was taken per occurrence.)
    gamma: float = 4.0  # gradient sampler temperature, p_i ∝ exp(L_i^2 / gamma) with L normalised to mean 1
    # A frequency tail (sampler = tail): a training pair (a, b) is drawn with weight w(a)·w(b), w(t) = rank(t)^(-s),
    # rank 1..p in data.skew_order (random: a permutation seeded by train.seed), with replacement.
    tail_s: float = 1.0  # s: the tail's exponent; a token's share of draws then follows rank^(-s)
    # The decoupling knob (with data.starve_k/starve_m setting the data): r multiplies the draw probability
    # of every training pair that holds one of the starve_k target tokens, under every sampler. r < 1 starves
    # their updates with the data intact, r > 1 raises them. 0 = "matched": r is solved so that a target
    # token's expected share of draws equals the median share of the other tokens (engine/task/samplers.py).
    target_rate: float = 1.0  # r: draw weight of pairs holding a data.starve_k target; 1 = off; 0 = matched
    # The draws factor of a fork study apart from the pairs factor: r is re-solved on this training set so that
    # a target's expected occurrences per batch equal what target_rate gives on the split's own training
    # pairs ("own") or on them with all the targets' held-out-free pairs added ("all", train.add_pairs's).
    target_draws_as: str = ""  # "" = r as given | own | all (engine/task/samplers.py target_draws)
    seed: int = 0  # sets the split, the init and the batch order
    device: str = "auto"  # auto = cuda, then mps, then cpu
    # The early-stop rule: stop once the logged column stop_metric is >= target_val_acc for `patience`
    # evaluations in a row. A stop rule must not decide the outcome a study measures (a member stopped on
    # overall val_acc has its target tokens' accuracy capped by construction): such presets run a fixed
    # budget (patience 0), or stop on a column that is not the outcome.
    target_val_acc: float = 0.99  # the threshold on stop_metric ...
    patience: int = 0  # ... held for this many evaluations in a row; 0 = never stop early
    stop_metric: str = "val_acc"  # a metrics.csv column (engine/rundir/columns.py, or a probe's)
    dtype: str = "float32"  # float32 | float64 for parameters and activations
    loss: str = "ce"  # ce | stablemax
    checkpoint_every: int = 2000  # steps between checkpoints (also written on every exit)
    threads: int = 0  # torch intra-op threads; 0 = auto: idle cores, or OMP_NUM_THREADS (engine/train/threads.py)
    # On a GPU the step is recorded once as a CUDA graph and replayed (engine/train/gpu/cuda_graph.py) for Adam
    # and AdamW without a gradient filter; the lr schedule and adaptive c reach it as device tensors.
    cuda_graph: bool = True  # false: every step launches its kernels one by one
    # TF32 rounds a float32 matmul's inputs to a 10-bit mantissa on the tensor cores (CUDA, Ampere on):
    # a higher matmul ceiling, other rounding than the CPU's, so runs part from fp32 ones (docs/PERFORMANCE.md).
    tf32: bool = False  # CUDA float32 matmuls in TF32; a no-op on the CPU (summary.json says so)
    # Kept checkpoints for `grok fork` (engine/rundir/checkpoints.py, docs/FORK.md), under checkpoints/.
    keep_every: int = 0  # keep a checkpoint every N steps and at each phase logged (M, C, G); 0 = off
    keep_budget_mb: float = 0.0  # past this total size the oldest kept checkpoints go; 0 = no cap
    # Frozen entries are written back after every optimizer step: bit-identical under decay and moments.
    frozen: str = ""  # parameter sets held fixed: E, E[tokens], W, rest, all or a name, comma separated
    trainable: str = ""  # if set, only these parameter sets train (E[targets]: those rows of E alone)
    add_pairs: str = ""  # token set (targets, rare, absent, ids) whose pairs outside the test set join training
    add_pairs_m: int = -1  # ... until each holds m training pairs: -1 = all of them, 0 = the median token's count

    def __post_init__(self) -> None:
        _check(self.batch_size >= 0, "train.batch_size", f"must be >= 1, or 0 for full batch (got {self.batch_size})")
        _check(self.max_steps >= 1, "train.max_steps", f"must be >= 1 (got {self.max_steps})")
        _check(
            not (self.tf32 and self.dtype == "float64"),
            "train.tf32",
            "TF32 rounds float32 matmuls: set train.dtype = float32",
        )
        _check(self.eval_every >= 1, "train.eval_every", f"must be >= 1 (got {self.eval_every})")
        _one_of(self.sampler, "train.sampler", SAMPLERS)
        _one_of(self.target_draws_as, "train.target_draws_as", TARGET_DRAWS)
        _one_of(self.dtype, "train.dtype", DTYPES)
        _one_of(self.loss, "train.loss", LOSSES)
        _check(self.gamma > 0, "train.gamma", f"must be > 0 (got {self.gamma})")
        _check(self.tail_s >= 0, "train.tail_s", f"must be >= 0 (got {self.tail_s})")
        _check(self.target_rate >= 0, "train.target_rate", f"must be >= 0, 0 = matched (got {self.target_rate})")
        _check(0 <= self.target_val_acc <= 1, "train.target_val_acc", f"must be in [0, 1] (got {self.target_val_acc})")
        _check(self.patience >= 0, "train.patience", f"must be >= 0 (got {self.patience})")
        _check(
            self.stop_metric not in NOT_STOP_METRICS and self.stop_metric.isidentifier(),
            "train.stop_metric",
            f"must be a logged metric column such as val_acc or train_acc (got {self.stop_metric!r})",
        )
        _check(self.checkpoint_every >= 1, "train.checkpoint_every", f"must be >= 1 (got {self.checkpoint_every})")
        _check(self.threads >= 0, "train.threads", f"must be >= 0 (got {self.threads})")
        _check(self.keep_every >= 0, "train.keep_every", f"must be >= 0 (got {self.keep_every})")
        _check(self.keep_budget_mb >= 0, "train.keep_budget_mb", f"must be >= 0 (got {self.keep_budget_mb})")
        from engine.config.param_sets import parse_param_sets, parse_tokens

        parse_param_sets(self.frozen, "train.frozen")  # the names are checked against the model when it is built
        parse_param_sets(self.trainable, "train.trainable")
        if self.add_pairs.strip():
            parse_tokens(self.add_pairs, "train.add_pairs")
        _check(self.add_pairs_m >= -1, "train.add_pairs_m", f"must be >= 0, or -1 for all (got {self.add_pairs_m})")
        _check(0 <= self.seed <= MAX_SEED, "train.seed", f"must be in [0, 2^63) (got {self.seed})")
        dev = self.device
        index = dev.removeprefix("cuda:")
        _check(
            dev in ("auto", "cpu", "mps", "cuda") or (dev.startswith("cuda:") and index.isdigit() and index.isascii()),
            "train.device",
            f"must be auto, cpu, cuda, cuda:N or mps (got {dev!r})",
        )


@dataclass(frozen=True)
class ProbeConfig:
    """Cadences in steps (0 = off); a probe runs at the first evaluation at or after each multiple."""

    hessian_every: int = 0  # λmax of the loss Hessian on E and W blocks (Figs. 7, 9)
    hessian_all: bool = False  # also λmax over all parameters
    hessian_l2: bool = False  # add the L2 term's wd·I (optim.weight_decay) to H; columns get _l2
    hessian_abs: bool = False  # report the dominant λ (largest |λ|, the paper's power method); columns get _abs
    hessian_w: str = "first"  # the W block: first (the matrices reading E) | all (every parameter but E: hess_Wall)
    hessian_batch: int = 256  # fixed probe batch, drawn once per run; 0 = whole training set (docs/PROBES.md)
    hessian_iters: int = 20  # power-iteration cap
    hessian_tol: float = 1e-3  # relative tolerance on λ between iterations
    rank_every: int = 0  # σmax, numerical and effective rank of E, W, EW (Fig. 10)
    rank_tol: float = 1e-3  # numerical rank counts σ_i > rank_tol · σmax (docs/PROBES.md)
    grad_every: int = 0  # per-token embedding gradient norms into tokens.csv (Fig. 3)
    fourier_every: int = 0  # DFT of E over the token axis into fourier.csv (Fig. 11)
    fourier_top_k: int = 5  # fourier_top = energy share of the top-k frequencies
    fourier_order: str = "token"  # token axis order: token = 0..p-1; dlog = 1, g, g^2, ... (mul, div; prime p)
    med_every: int = 0  # main embedding difference (docs/references/beyond-progress-measures.md)
    norm_every: int = 0  # ‖E‖, ‖W‖, ‖θ‖
    update_every: int = 0  # ‖ΔE‖/‖ΔW‖ between evaluations (App. B, eq. 23)
    progress_every: int = 0  # progress measures: key frequencies, restricted/excluded loss, ring (docs/PROBES.md)
    # Nanda et al. fix the key frequencies from the final model; by default they are re-picked at each
    # measurement. To fix them, rerun the seed (bit-identical on one machine) with the keys of the first
    # run's last measurement (keyfreq.csv, key = 1), e.g. "14,35,41" (docs/PROBES.md).
    progress_keys: str = ""  # comma-separated key frequencies held fixed; empty = re-picked at each measurement
    targets_every: int = 0  # the data.starve_k targets: accuracy by operand position seen, row norm and ring place
    # A row's balance between evaluations (§4.2, eqs. 3-6): the loss gradient and the decay term along each
    # row of E, its occurrences in batches and its norm change; the targets' mean and the others' median.
    balance: bool = False  # target_/other_ grad_step, decay_step, occurrences, norm_change (engine/probes/balance.py)
    rare_k: int = 10  # val_acc_rare: test pairs holding one of the k least-trained present tokens, ties all in (Fig. 4)

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if isinstance(v, int) and not isinstance(v, bool):
                _check(v >= 0, f"probe.{f.name}", f"must be >= 0 (got {v})")
        _one_of(self.hessian_w, "probe.hessian_w", HESSIAN_W)
        _check(self.hessian_iters >= 1, "probe.hessian_iters", f"must be >= 1 (got {self.hessian_iters})")
        _check(self.hessian_tol > 0, "probe.hessian_tol", f"must be > 0 (got {self.hessian_tol})")
        _check(0 < self.rank_tol < 1, "probe.rank_tol", f"must be in (0, 1) (got {self.rank_tol})")
        _check(self.fourier_top_k >= 1, "probe.fourier_top_k", f"must be >= 1 (got {self.fourier_top_k})")
        _one_of(self.fourier_order, "probe.fourier_order", FOURIER_ORDERS)
        _check(
            all(k.strip().isdigit() and int(k) >= 1 for k in self.progress_keys.split(",")) or not self.progress_keys,
            "probe.progress_keys",
            f"must be comma-separated frequencies >= 1, e.g. 14,35,41 (got {self.progress_keys!r})",
        )

    @property
    def fixed_keys(self) -> list[int]:
        """probe.progress_keys as frequencies; [] = re-picked at each measurement."""
        return [int(k) for k in self.progress_keys.split(",")] if self.progress_keys else []


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines a run: one group per TOML table, plus where it came from."""

    data: DataConfig = field(default_factory=DataConfig)  # [data]
    model: ModelConfig = field(default_factory=ModelConfig)  # [model]
    optim: OptimConfig = field(default_factory=OptimConfig)  # [optim]
    train: TrainConfig = field(default_factory=TrainConfig)  # [train]
    probe: ProbeConfig = field(default_factory=ProbeConfig)  # [probe]
    preset: str = ""  # the preset this run came from, if any
    description: str = ""  # the preset's one-line description

    def __post_init__(self) -> None:
        if self.train.target_rate != 1:
            _check(self.data.starve_k > 0, "train.target_rate", "weights the target tokens: needs data.starve_k > 0")
            _check(self.train.batch_size > 0, "train.target_rate", "weights draws: needs train.batch_size > 0")

    @property
    def d_hidden(self) -> int:
        """The MLP's hidden width: model.d_hidden, or seq_len·d_embed where that is 0 (4d = 512, §5)."""
        return self.model.d_hidden or self.data.seq_len * self.model.d_embed

    def to_dict(self) -> dict[str, Any]:
        """The nested dict config.json holds (tuples as tuples; json writes them as lists)."""
        return dataclasses.asdict(self)


GROUPS: dict[str, type] = {
    "data": DataConfig,
    "model": ModelConfig,
    "optim": OptimConfig,
    "train": TrainConfig,
    "probe": ProbeConfig,
}
