"""What every objective of the model shares."""

from __future__ import annotations

__all__ = ["ObjectiveBase"]


class ObjectiveBase:
    """Variable counts, a penalty swap and ``value`` for the objectives of this package.

    Subclasses set ``n_weights``, ``n_intercepts`` and ``penalty`` and define
    ``evaluate``; ``_fresh`` clears what a copy must not share (work buffers).
    """

    @property
    def n_variables(self):
        """Weights, then intercepts."""
        return self.n_weights + self.n_intercepts

    @property
    def n_nonnegative(self):
        """Weights held ``>= 0``, first: all but the penalty's free weights (the zero
        entries' sides, free in sign, after them)."""
        return self.n_weights - self.penalty.n_free

    def with_penalty(self, penalty):
        """The same data under another penalty (shares the stored losses)."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.penalty = penalty
        new._fresh()
        return new

    def _fresh(self):
        """Clear per-object state after a shallow copy (nothing by default)."""

    def value(self, x):
        """``f(x)``."""
        return self.evaluate(x).value
