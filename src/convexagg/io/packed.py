"""The fitted binaries of a convexagg classifier, stored compactly in a model file.

A fitted classifier holds one scikit-learn estimator per code column and ensemble
member (``estimators_``: a list of members, each a list of binaries), all of the
same structure: the same classes, parameters and attribute names, with arrays of
the same shapes. skops writes one node of its object tree per attribute of each,
so that a file's size and loading time grow with their number. :func:`pack` keeps
one of them as a *template* and stacks each numeric attribute that the others
hold (an ``ndarray``, or a scalar that differs between them) into one array,
binary after binary; :class:`PackedEstimators` holds the result in place of
``estimators_`` in the file and rebuilds the lists when skops loads it: a copy of
the template per binary (a deep copy), with its stacked values set back, bit for bit.

The template is a fitted estimator stored by skops like any other, so its types
go through skops' trust checks; the rebuilding only writes values into
attributes that the template has, of the same type, dtype and shape, and refuses
anything else in the file (:meth:`PackedEstimators.__setstate__`).

Only what can be rebuilt this way is grouped: scikit-learn estimators whose
state is their ``__dict__`` (``BaseEstimator``'s own ``__getstate__`` and
``__setstate__``), with values that are lists, tuples, dictionaries with string
keys, strings, None, numbers and NumPy arrays of numbers (arrays of names are
compared, not stacked). A binary holding anything else, or alone of its
structure, is stored as it is.
"""

from __future__ import annotations

import json

import numpy as np

__all__ = ["PackedEstimators", "pack"]

# deepest nesting of a binary that is grouped (a pipeline of a scaler and a model: 5)
_MAX_DEPTH = 12
_FORMAT = 1
# Python numbers: stacked as these dtypes, given back as the Python type
_SCALAR_DTYPES = {bool: np.dtype(np.bool_), int: np.dtype(np.int64), float: np.dtype(np.float64)}


class _Ungrouped(Exception):
    """A binary holds something that :func:`pack` does not stack or compare."""


def _rebuilt_by_dict(obj):
    """Whether ``obj`` is a scikit-learn estimator whose state is its ``__dict__``."""
    from sklearn.base import BaseEstimator

    cls = type(obj)
    return (
        isinstance(obj, BaseEstimator)
        and cls.__getstate__ is BaseEstimator.__getstate__
        and cls.__setstate__ is BaseEstimator.__setstate__
        and cls.__reduce_ex__ is object.__reduce_ex__
        and getattr(cls, "__deepcopy__", None) is None
    )


def _is_numeric_array(value):
    return type(value) is np.ndarray and value.dtype.kind in "biufc" and value.dtype.fields is None


def _order(array):
    """The memory order a loaded copy of ``array`` has (as ``numpy.save`` writes it)."""
    return "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"


def _structure(obj, path, leaves, depth, active):
    """A hashable description of ``obj`` (types, names, fixed values, array shapes)
    that binaries of one group share; the numeric leaves are appended to ``leaves``
    as ``(path, value)``. Raises :class:`_Ungrouped` for anything else."""
    if depth > _MAX_DEPTH:
        raise _Ungrouped
    kind = type(obj)
    if obj is None or kind is str:
        return obj
    if kind in _SCALAR_DTYPES or (isinstance(obj, np.generic) and obj.dtype.kind in "biuf"):
        leaves.append((path, obj))
        return ("scalar", kind)
    if kind is np.ndarray:
        if _is_numeric_array(obj):
            leaves.append((path, obj))
            return ("array", obj.dtype.str, obj.shape, _order(obj))
        if obj.dtype.kind in "OU" and obj.ndim == 1 and all(type(v) is str for v in obj.tolist()):
            return ("names", obj.dtype.str, tuple(obj.tolist()))  # feature names: compared
        raise _Ungrouped
    if id(obj) in active:  # a cycle
        raise _Ungrouped
    active.add(id(obj))
    try:
        if kind is tuple:  # immutable: its items are compared, never set
            items = [_fixed_item(v, path, i, leaves, depth, active) for i, v in enumerate(obj)]
            return ("tuple", tuple(items))
        if kind is list:
            children = [(("i", i), v) for i, v in enumerate(obj)]
        elif kind is dict and all(type(k) is str for k in obj):
            children = [(("k", k), v) for k, v in obj.items()]
        elif _rebuilt_by_dict(obj):
            children = [(("a", k), v) for k, v in vars(obj).items()]
        else:
            raise _Ungrouped
        items = [
            (step[1], _structure(v, (*path, step), leaves, depth + 1, active))
            for step, v in children
        ]
        return (kind, tuple(items))
    finally:
        active.discard(id(obj))


def _fixed_item(value, path, index, leaves, depth, active):
    """A tuple's item: numbers by value (a tuple cannot be written into), the rest as
    :func:`_structure` describes it."""
    if type(value) in _SCALAR_DTYPES or isinstance(value, np.generic):
        return ("value", type(value), repr(value))
    if type(value) is np.ndarray:
        raise _Ungrouped
    return _structure(value, (*path, ("i", index)), leaves, depth + 1, active)


def _stacked(values):
    """One array of the values of a leaf across a group's binaries, or None when they
    are all the same scalar (the template keeps it)."""
    first = values[0]
    if type(first) is np.ndarray:
        return np.stack(values)
    if all(repr(v) == repr(first) for v in values[1:]):  # repr: -0.0 and nan are told apart
        return None
    if isinstance(first, np.generic):
        return np.array(values, dtype=first.dtype)
    # an int beyond 64 bits: OverflowError
    return np.array(values, dtype=_SCALAR_DTYPES[type(first)])


def pack(members):
    """The fitted binaries ``members`` (a list of lists of estimators), packed.

    Parameters
    ----------
    members : list of list of estimators
        A convexagg classifier's ``estimators_``.

    Returns
    -------
    packed : PackedEstimators or None
        None when no two binaries share a structure (nothing to gain), or when
        one binary appears twice (a rebuilt copy would lose that identity).
    """
    flat = [est for member in members for est in member]
    if len({id(est) for est in flat}) != len(flat):
        return None
    groups = {}
    for index, est in enumerate(flat):
        if not _rebuilt_by_dict(est):
            continue
        leaves = []
        try:
            key = _structure(est, (), leaves, 0, set())
        except _Ungrouped:
            continue
        groups.setdefault(key, []).append((index, leaves))
    grouped, packed = set(), []
    for items in groups.values():
        if len(items) < 2:
            continue
        paths, values = [], []
        try:
            for j, (path, _) in enumerate(items[0][1]):
                stack = _stacked([leaves[j][1] for _, leaves in items])
                if stack is not None:
                    paths.append([list(step) for step in path])
                    values.append(stack)
        except OverflowError:  # an integer beyond 64 bits: stored as it is
            continue
        indices = [index for index, _ in items]
        grouped.update(indices)
        packed.append(
            {
                "template": flat[indices[0]],
                "members": np.array(indices, dtype=np.int64),
                "paths": json.dumps(paths),
                "values": values,
            }
        )
    if not packed:
        return None
    loose = [index for index in range(len(flat)) if index not in grouped]
    sizes = [len(member) for member in members]
    numbers = np.array(loose, dtype=np.int64)
    return PackedEstimators(sizes, numbers, [flat[i] for i in loose], packed)


def _crafted(message):
    return ValueError(f"packed binaries: {message}; the file is damaged or crafted.")


def _step(parent, step, last):
    """``parent``'s child named by ``step`` (``[kind, key]``), as :func:`_structure`
    walks: an attribute of an estimator rebuilt from its ``__dict__``, a key of a
    dictionary, an item of a list (or, but for the last step, of a tuple)."""
    if not (isinstance(step, list) and len(step) == 2):
        raise _crafted(f"a path step {step!r} is not [kind, key]")
    kind, key = step
    if kind == "a" and type(key) is str and _rebuilt_by_dict(parent) and key in vars(parent):
        return vars(parent)[key]
    if kind == "k" and type(key) is str and type(parent) is dict and key in parent:
        return parent[key]
    sequence = (list,) if last else (list, tuple)
    if kind == "i" and type(key) is int and type(parent) in sequence and 0 <= key < len(parent):
        return parent[key]
    raise _crafted(f"the template has no {step!r} here")


def _resolve(template, path):
    """``(parent, step, leaf)``: where ``path`` ends in ``template``."""
    if not (isinstance(path, list) and path):
        raise _crafted("a path is not a non-empty list")
    parent = template
    for step in path[:-1]:
        parent = _step(parent, step, last=False)
    return parent, path[-1], _step(parent, path[-1], last=True)


def _setter(leaf, values, n):
    """``take(k)``: binary ``k``'s value of ``leaf`` from its stacked ``values``, checked
    against the template's ``leaf`` (type, dtype and shape)."""
    if not (type(values) is np.ndarray and values.ndim >= 1 and values.shape[0] == n):
        raise _crafted(f"a stacked value is not an array of {n} rows")
    if _is_numeric_array(leaf):
        if values.dtype != leaf.dtype or values.shape[1:] != leaf.shape:
            raise _crafted("a stacked array differs in dtype or shape from the template's")
        if _order(leaf) == "F":
            return lambda k: np.asfortranarray(values[k, ...])
        return lambda k: values[k, ...]  # a view; an array even when 0-d
    if values.ndim == 1 and isinstance(leaf, np.generic) and values.dtype == leaf.dtype:
        return lambda k: values[k]
    expected = _SCALAR_DTYPES.get(type(leaf))
    if values.ndim == 1 and expected is not None and values.dtype == expected:
        return lambda k: type(leaf)(values[k])
    raise _crafted(f"a stacked {values.dtype} value replaces a {type(leaf).__name__}")


def _copy(value):
    """A deep copy of a template's ``value`` -- what ``copy.deepcopy`` makes of the
    structures :func:`_structure` accepts, without its per-object protocol: estimators
    rebuilt from their ``__dict__``, containers rebuilt, arrays copied in their memory
    order, immutable values shared."""
    kind = type(value)
    if kind is list:
        return [_copy(v) for v in value]
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is tuple:
        return tuple(_copy(v) for v in value)
    if kind is np.ndarray:
        return value.copy(order="K")
    if value is None or kind in (str, *_SCALAR_DTYPES) or isinstance(value, np.generic):
        return value
    new = kind.__new__(kind)  # an estimator rebuilt from its __dict__ (checked by the caller)
    vars(new).update((k, _copy(v)) for k, v in vars(value).items())
    return new


def _child(parent, step):
    kind, key = step
    return vars(parent)[key] if kind == "a" else parent[key]


def _assign(copy_of_template, path, value):
    """Write ``value`` where ``path`` (checked on the template) ends in its copy."""
    parent = copy_of_template
    for step in path[:-1]:
        parent = _child(parent, step)
    kind, key = path[-1]
    if kind == "a":
        vars(parent)[key] = value
    else:  # a dictionary's key or a list's item
        parent[key] = value


def _indices(indices, n, taken):
    """``indices`` (an array of binaries' positions below ``n``) as a list, checked to
    name no binary of ``taken``, which they join."""
    if not (
        type(indices) is np.ndarray
        and indices.ndim == 1
        and indices.dtype.kind == "i"
        and (indices.size == 0 or (indices.min() >= 0 and indices.max() < n))
    ):
        raise _crafted("members are not positions of binaries")
    indices = [int(i) for i in indices]
    if taken.intersection(indices) or len(set(indices)) != len(indices):
        raise _crafted("a binary is stored twice")
    taken.update(indices)
    return indices


def _group(group, n, taken):
    """``(indices, binaries)`` of one group of the file, checked and rebuilt."""
    keys = ("template", "members", "paths", "values")
    if not (isinstance(group, dict) and set(group) == set(keys)):
        raise _crafted(f"a group is not a dictionary of {list(keys)}")
    template, indices, paths, values = (group[k] for k in keys)
    indices = _indices(indices, n, taken)
    if not indices:
        raise _crafted("a group has no members")
    if type(paths) is not str or type(values) is not list:
        raise _crafted("a group's paths are not text or its values not a list")
    try:
        paths = json.loads(paths)
    except ValueError:
        raise _crafted("a group's paths are not JSON") from None
    if not isinstance(paths, list) or len(paths) != len(values):
        raise _crafted("a group's paths and values differ in number")
    try:  # an estimator holding only what a copy rebuilds (as pack groups binaries)
        if not _rebuilt_by_dict(template):
            raise _Ungrouped
        _structure(template, (), [], 0, set())
    except _Ungrouped:
        raise _crafted(f"a template of type {type(template).__name__} cannot be rebuilt") from None
    plan = []
    for path, stack in zip(paths, values):
        _, _, leaf = _resolve(template, path)
        plan.append((path, _setter(leaf, stack, len(indices))))
    binaries = []
    for k in range(len(indices)):
        binary = _copy(template)
        for path, take in plan:
            _assign(binary, path, take(k))
        binaries.append(binary)
    return indices, binaries


class PackedEstimators:
    """A convexagg classifier's fitted binaries as a model file stores them.

    Made by :func:`pack` when saving (:func:`convexagg.io.save`); in the file,
    it stands where the classifier's ``estimators_`` list was, and
    :func:`convexagg.io.load` puts back the lists it rebuilds (:meth:`unpack`).

    Parameters
    ----------
    sizes : list of int
        The number of binaries of each ensemble member; the binaries are
        numbered member after member.
    loose_members : ndarray of int
        The numbers of the binaries stored as they are.
    loose : list of estimators
        Those binaries.
    groups : list of dict
        Per group of binaries of one structure: ``template`` (one of them),
        ``members`` (their numbers), ``paths`` (JSON: where each stacked value
        goes in a binary) and ``values`` (the stacked values, one row per binary).
    """

    _KEYS = ("format", "sizes", "loose_members", "loose", "groups")

    def __init__(self, sizes, loose_members, loose, groups):
        self._state = dict(zip(self._KEYS, (_FORMAT, sizes, loose_members, loose, groups)))

    def __getstate__(self):
        return dict(self._state)

    def __setstate__(self, state):
        """Check what a file holds and rebuild the binaries; a ``ValueError`` for
        anything :func:`pack` does not write."""
        if not (isinstance(state, dict) and set(state) == set(self._KEYS)):
            raise _crafted(f"the state is not a dictionary of {list(self._KEYS)}")
        if state["format"] != _FORMAT:
            raise _crafted(f"format {state['format']!r} is not {_FORMAT}")
        sizes, loose, groups = state["sizes"], state["loose"], state["groups"]
        if not (
            type(sizes) is list
            and all(type(s) is int and s >= 0 for s in sizes)
            and type(loose) is list
            and type(groups) is list
        ):
            raise _crafted("sizes, loose binaries or groups are not lists")
        n, taken = sum(sizes), set()
        flat = [None] * n
        loose_members = _indices(state["loose_members"], n, taken)
        if len(loose_members) != len(loose):
            raise _crafted("the loose binaries and their numbers differ in length")
        for index, binary in zip(loose_members, loose):
            flat[index] = binary
        for group in groups:
            for index, binary in zip(*_group(group, n, taken)):
                flat[index] = binary
        if len(taken) != n:
            raise _crafted(f"{n - len(taken)} of the {n} binaries are missing")
        self._state = dict(state)
        self._members, start = [], 0
        for size in sizes:
            self._members.append(flat[start : start + size])
            start += size

    def unpack(self):
        """The binaries, as the classifier's ``estimators_`` holds them.

        Returns
        -------
        members : list of list of estimators
            One list per ensemble member; each binary its own object.
        """
        members = getattr(self, "_members", None)
        if members is None:  # made by pack, not loaded: the same state, rebuilt
            rebuilt = PackedEstimators.__new__(PackedEstimators)
            rebuilt.__setstate__(self._state)
            members = rebuilt._members
        return [list(member) for member in members]
