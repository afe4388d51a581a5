"""Every error message of both twins, written once.

``TypeError`` messages: the wrong kind of object or dtype.  ``ValueError``
messages: shapes, empty batches, values and hyper-parameters out of range.  The
value messages (``UNIT``, ``FINITE``, ...) are raised eagerly by zero_torch and by
zero_jax under ``zero_jax.checked``; the texts are identical, and so are those of a
hyper-parameter out of range (``OUT_OF_RANGE``, ``ORDER``), whether it was a Python
value (checked eagerly by both twins) or a traced one (checked by ``checked``, which
formats the traced value into the same text).
"""

from __future__ import annotations

# ----------------------------------------------------------------------- kinds
NOT_ARRAY = "{name} must be an array, got {got}"
NOT_TENSOR = "{name} must be a torch.Tensor, got {got}"
NOT_FLOAT = "{name} must be a floating-point array, got dtype {dtype}"
NOT_INT = "{name} must be an integer array, got dtype {dtype}"
NOT_BOOL = "{name} must be a bool array, got dtype {dtype}"

# ---------------------------------------------------------------------- shapes
RANK = "{name} must have shape {shape}, got shape {got}"
EMPTY = "{name} must be non-empty with shape {shape}, got shape {got}"
SAME_SHAPE = "{name} must have the same shape as {ref} {ref_shape}, got {got}"
SAME_AXIS = (
    "{name} {shape} must have {axis} = {size} like {ref} {ref_shape} (shape {ref_got}), "
    "got shape {got}"
)
DEVICE = "{name} must be on the device of {ref} ({ref_device}), got {got}"
META = "{name} is on the meta device (no values): the torch twin validates and computes values"

# ---------------------------------------------------------------------- values
UNIT = "{name} must lie in [0, 1]"
UNIT_WHERE = "{name} must lie in [0, 1] where {where}"
FINITE = "{name} must be finite"
FINITE_WHERE = "{name} must be finite where {where}"
NONNEG = "{name} must be >= 0"
NONNEG_WHERE = "{name} must be >= 0 where {where}"
IDS = "{name} must lie in [0, {bound}={count})"
WIDE_IDS = (
    "{name} has values outside the {dtype} range, which JAX truncates with x64 "
    "disabled (distinct ids would merge): enable x64 "
    "(jax.config.update('jax_enable_x64', True)) or map the ids to dense ids first "
    "(np.unique(x, return_inverse=True))"
)
WIDE_VALUES = (
    "{name} has values outside the {dtype} range, which JAX truncates with x64 "
    "disabled (a length or value would wrap around to another number): enable x64 "
    "(jax.config.update('jax_enable_x64', True)) or pass values that fit {dtype}"
)
WIDE_TRACED_IDS = (
    "{name} ({dtype}) is traced by a jit or vmap while x64 is disabled: JAX "
    "truncates its values to 32 bits and they cannot be checked there; give the "
    "transform 32-bit ids (check their range, then x.astype(jnp.int32)), or enable x64 "
    "(jax.config.update('jax_enable_x64', True))"
)
WIDE_ARGUMENT = (
    "{name} has values outside the {dtype} range, which jax.jit truncates with x64 "
    "disabled (distinct ids would merge, lengths and values would wrap around): enable x64 "
    "(jax.config.update('jax_enable_x64', True)) or narrow the values first"
)
WIDE_REAL = (
    "{name}={value!r} is beyond the float32 range, in which JAX computes with x64 "
    "disabled (it would become inf): use a value of magnitude <= 3.4028234663852886e+38 "
    "or enable x64 (jax.config.update('jax_enable_x64', True))"
)
WIDE_LABELS = (
    "num_answers={count} allows labels beyond the range of the {dtype} labels "
    "{library} returns: use answer ids below {limit}{hint}"
)

# ------------------------------------------------------------ hyper-parameters
NOT_SCALAR = "{name} must be a real scalar, got {got}"
NOT_SCALAR_SHAPE = "{name} must be a real scalar, got shape {got}"
NOT_SCALAR_TENSOR = "{name} must be a real scalar, got a tensor of shape {got}"
OUT_OF_RANGE = "{name} must be {expected}, got {value:.7g}"
TOO_LARGE = "{name} must be <= {limit}, got {value}"
NOT_STATIC_INT = "{name} must be a Python int (static, not traced), got {got}"
NOT_INT_PARAM = "{name} must be a Python int, got {got}"
TOO_SMALL = "{name} must be >= {low}, got {value}"
CHOICE = "{name} must be one of {allowed}, got {value!r}"
ORDER = "need {low} <= {high}, got {low}={low_value:.7g} > {high}={high_value:.7g}"
K_TOO_LARGE = "k must be <= the number of samples N={n}, got k={k}"
TRAINED_TOO_LARGE = "trained must be <= the number of answers K={k}, got trained={trained}"
TABLE_TOO_LARGE = (
    "method={method!r} counts into a [B, num_answers] table of {size} entries (more "
    "than {limit}): use method='pairwise' (or 'auto'), whose cost does not depend on "
    "num_answers"
)
ROLES_SHAPE = "baselines must have num_roles={count} entries [R], got shape {got}"

# ------------------------------------------------------------ random controls
KEY_SHAPE = "{name} must be a single PRNG key or an integer seed, got shape {got}"
