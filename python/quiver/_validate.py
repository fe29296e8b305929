"""quiver.validate: the verdict of ``quiver validate`` from the same library
call (quiver/validate.h)."""

from . import _quiver

__all__ = ["validate"]


def validate(source, threads=None):
    """Validates an Arrow stream or file in full, as ``quiver validate`` does
    (every batch and dictionary; the tensor and sparse extension columns cell
    by cell; Tensor and SparseTensor messages in full), and returns the CLI's
    verdict after its ``PATH: ``, e.g. ``"valid Arrow file (2 record batches,
    6 rows)"``. An invalid input raises InvalidError and a valid one quiver
    cannot read NotSupportedError, whose message is the CLI's
    (``"invalid: record batch 0: ..."``). ``source``: a path, bytes-like or
    binary file object. ``threads``: as ``--threads`` (default: one)."""
    from . import _source
    return _quiver._validate(_source(source), threads or 0)
