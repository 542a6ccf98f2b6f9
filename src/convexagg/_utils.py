"""Small helpers shared by the estimators and decoders."""

from __future__ import annotations

import functools

__all__ = ["restore_on_failure"]


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
