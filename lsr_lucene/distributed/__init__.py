"""Distributed encode, index and search on a Ray cluster, with outputs identical to the one-machine commands."""
