"""Small helpers shared by the estimators and decoders."""

from __future__ import annotations

import functools
import sys

__all__ = ["progress", "restore_on_failure"]


def progress(iterable, total, desc, verbose):
    """``iterable`` with a progress bar when ``verbose`` and tqdm is installed (the
    ``experiments`` extra) and standard error is a terminal; ``iterable`` itself
    otherwise (the callers then print their ``verbose`` lines)."""
    if not verbose or not sys.stderr.isatty():
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False)


def restore_on_failure(fit):
    """Make ``fit`` all-or-nothing: if it raises, the object is left as it was.

    ``fit`` may set attributes early (scikit-learn's ``validate_data`` sets
    ``n_features_in_`` before anything is trained, a decoder records its code
    before solving). On failure those would leave a half-fitted object that
    ``check_is_fitted`` accepts and that then fails later, far from the cause.
    The wrapper snapshots the instance ``__dict__`` and restores it when ``fit``
    raises: an unfitted object stays unfitted, a fitted one keeps its previous,
    consistent fit. ``fit`` must replace fitted attributes, not mutate them in
    place (every ``fit`` in convexagg does).
    """

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        saved = dict(self.__dict__)
        try:
            return fit(self, *args, **kwargs)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(saved)
            raise

    wrapper.__restore_on_failure__ = True
    return wrapper
