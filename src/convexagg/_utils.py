"""Small helpers shared by the estimators and decoders."""

from __future__ import annotations

import functools
import sys
import time

__all__ = ["Reporter", "progress", "restore_on_failure"]


def progress(iterable, total, desc, verbose):
    """``iterable`` with a progress bar when ``verbose`` and tqdm is installed (the
    ``experiments`` extra) and standard error is a terminal; ``iterable`` itself
    otherwise (the callers then print their ``verbose`` lines). With ``iterable``
    None: a bar of ``total`` steps to ``update`` by hand, or None."""
    if not verbose or not sys.stderr.isatty():
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc=desc, leave=False)


class Reporter:
    """Progress of a fit at scikit-learn's verbosity levels.

    ``verbose=0``: silent. ``>= 1``: ``reporter(message)`` prints a line
    ``[name] message`` on standard output, and :meth:`tasks` reports a stage of
    parallel tasks (the binaries) by one line per group of tasks (a fold) with
    the time elapsed since the reporter was made, and by a tqdm bar over the
    tasks where standard error is a terminal and tqdm is installed (the
    ``experiments`` extra). Level 2 and above is for the solvers' iteration
    lines, which their owners print.
    """

    def __init__(self, name, verbose):
        self.name = name
        self.verbose = verbose
        self.start = time.perf_counter()

    def __call__(self, message):
        if self.verbose:
            print(f"[{self.name}] {message}", flush=True)

    def elapsed(self):
        """Seconds since the reporter was made, formatted for a line."""
        return f"{time.perf_counter() - self.start:.1f} s elapsed"

    def tasks(self, total, group, describe):
        """A callback to call once per finished task (None when silent).

        At ``verbose=1`` a line ``describe(done)`` is printed, with the time
        elapsed, each time ``group`` more tasks are done (a fold of binaries);
        at ``verbose >= 2`` after every task.
        """
        if not self.verbose:
            return None
        bar = progress(None, total, "binaries", self.verbose)
        every = 1 if self.verbose >= 2 else group
        done = [0]

        def finished():
            done[0] += 1
            if bar is not None:
                bar.update()
                if done[0] == total:
                    bar.close()
            if done[0] % every == 0 or done[0] == total:
                self(f"{describe(done[0])}, {self.elapsed()}")

        return finished


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
