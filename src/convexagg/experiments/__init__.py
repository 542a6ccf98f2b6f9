"""Experiments: the demo and (later) the paper's reproduction, kept apart from the library."""
