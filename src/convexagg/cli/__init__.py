"""The ``convexagg`` command line.

::

    convexagg demo
    convexagg reproduce [--datasets ...] [--data-dir DIR] [--out DIR]   (the paper's tables)
    convexagg figures [--data-dir DIR] [--out DIR]                       (the paper's figures)
    convexagg fit TRAIN.csv --target COLUMN [--id COLUMN] [--drop COL,COL | --features COL,COL]
                  [--categorical COL,COL] [--no-preprocess]
                  [--code CODE] [--entry-weight-shrinkage S[,S...]|none]
                  [--zero-entry-penalty C|auto] --out MODEL.skops [-v]
    convexagg predict MODEL.skops DATA.csv [--out PRED.csv] [--id COLUMN]
    convexagg --version                                (also: python -m convexagg ...)

``fit`` trains a model on the feature columns of ``TRAIN.csv`` -- every column
but the target, the ``--id`` and the ``--drop`` columns, or the ``--features``
-- and saves it with :func:`convexagg.io.save`, together with the feature
names, which of them are categories, the target's name, the id columns and the
other columns it left out; it reports a held-out estimate (accuracy and
log-loss of a model fitted without ``--holdout`` of the rows) before refitting
on all rows. The model is a scikit-learn ``Pipeline``: a preprocessing step
(numbers scaled by their largest magnitude, missing ones imputed with the mean
and flagged; text columns one-hot encoded, a category unseen in training
encoded as none; ``--no-preprocess``: the scaling alone, every feature a
number in every row) and a :class:`~convexagg.ConvexAggregationClassifier`
whose binary learner is ``StandardScaler`` + ``LogisticRegression``. A column
is a category when ``--categorical`` names it or when at most half of its
values are numbers; a column of numbers with a few texts, or a text column
with more distinct values than 20 and than half the rows (an identifier), is
an error that names the way out. The options that set an estimator parameter
(``--code``, ``--alpha``, ``--loss``, ``--entry-weight-shrinkage``,
``--zero-entry-penalty``, ``--cv``) take the estimator's default when not
given. ``-v`` prints a line per stage on standard error (with the estimator's
own ``verbose`` lines; ``-vv`` passes ``verbose=2``). Target labels go through
:func:`convexagg.io.parse_labels` and the estimators' own checks: a continuous
target or a missing label is refused. ``predict`` writes, for every row of
``DATA.csv``, the ``--id`` columns, the predicted label (``prediction``) and the
class probabilities (``proba_<class>``, ``%.6g`` unless ``--float-format``), as
CSV to standard output unless ``--out`` names a file (``-`` is standard
output); ``DATA.csv`` must have the training features, matched by name in any
order, and may also have the target and the columns ``fit`` left out, which are
ignored (the training ``--id`` columns are copied). A model saved from Python
that records feature names gets the file's columns as they are (numbers, texts,
missing values as NaN); one that records none is applied by position, with a
warning.

Input files must be regular files (not a device or a pipe) of text, at most
:data:`convexagg.io.MAX_CSV_BYTES`; they may be gzip-compressed (recognised by
content); the separator is detected from the header (comma, semicolon, tab,
vertical bar) unless ``--sep`` gives it, and ``--decimal ,`` reads
decimal-comma numbers. An output is never an input, a directory or a device
node replaced by a file (:mod:`convexagg.io`).

User errors (a missing file or column, a text among numbers, a bad target,
columns that differ from training, an untrusted or crafted model file, an
unknown data set or method, an invalid number, a missing optional dependency)
end with a one-line ``convexagg: error: ...`` on standard error and exit status
1, in every subcommand, after any warnings; a malformed command line exits
with status 2 (argparse); SIGTERM, SIGHUP and Ctrl-C end with the same line and
status 128 + the signal's number. Nothing is written on failure or
interruption: outputs are written atomically once everything has succeeded.

The heavy modules (NumPy, pandas, scikit-learn, skops, the estimators) are
imported inside the commands, so ``convexagg --help`` starts at once; ``fit
--help`` reads the estimator's defaults from its source. The
paper's commands (``demo``, ``reproduce``, ``figures``) live with the
experiments they run, in :mod:`convexagg.experiments.commands`; this package
holds ``fit``, ``predict`` and ``export``: the argument parser
(:mod:`~convexagg.cli.parser`), how a CSV's columns become the model's features
(:mod:`~convexagg.cli.tables`), the file ``fit`` saves
(:mod:`~convexagg.cli.bundle`) and the commands (:mod:`~convexagg.cli.handlers`);
this module dispatches and turns errors and signals into one line.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import warnings

from .._optional import MissingDependencyError
from ..experiments import commands
from .handlers import export_command, fit_command, one_line, predict_command
from .parser import build_parser

__all__ = ["HANDLERS", "build_parser", "main"]


def _error_message(exc):
    if isinstance(exc, FileNotFoundError) and exc.filename is not None:
        return f"file not found: {exc.filename}"
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.strerror}: {exc.filename}"
    return one_line(exc)


# the library's commands here; the paper's with the experiments they run
HANDLERS = {
    "fit": fit_command,
    "predict": predict_command,
    "export": export_command,
    **commands.HANDLERS,
}


class _Signal(BaseException):
    """Raised by a termination signal, so cleanups run (``atomic_write`` removes its
    temporary file) as they do on an error; a BaseException, as KeyboardInterrupt is,
    so that no ``except Exception`` swallows it."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _raise_signal(signum, frame):
    raise _Signal(signum)


@contextlib.contextmanager
def _signals_raise():
    """SIGTERM and SIGHUP raise :class:`_Signal` (their default kills the process
    before any cleanup, leaving a temporary file behind); restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return
    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    previous = {n: signal.signal(getattr(signal, n), _raise_signal) for n in names}
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)


def main(argv=None):
    """Run the ``convexagg`` command line (also ``python -m convexagg``).

    Parameters
    ----------
    argv : list of str, default=None
        The arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    status : int
        0 on success; after a one-line ``convexagg: error: ...`` message (the
        last line on standard error), 1 for an error, 128 + the signal's number
        when interrupted (130 for Ctrl-C, 143 for SIGTERM).
    """
    args = build_parser().parse_args(argv)
    handler = HANDLERS[args.command]
    quiet = args.command in ("fit", "predict", "export")  # warnings: one line each, at the end
    error = None
    with warnings.catch_warnings(record=quiet) as caught:
        try:
            with _signals_raise():
                status = handler(args)
        except (ValueError, OSError, MissingDependencyError) as exc:
            error, status = _error_message(exc), 1
        except KeyboardInterrupt:
            error, status = "interrupted (SIGINT); no file was left half-written", 130
        except _Signal as exc:
            name = signal.Signals(exc.signum).name
            error = f"terminated by {name}; no file was left half-written"
            status = 128 + exc.signum
    seen = set()
    for w in caught or ():  # one line per distinct warning, not the source line
        line = f"convexagg: warning: {w.category.__name__}: {one_line(w.message)}"
        if line not in seen:
            seen.add(line)
            print(line, file=sys.stderr)
    if error is not None:  # last, so that the final line says what happened
        print(f"convexagg: error: {error}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
