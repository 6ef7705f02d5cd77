"""Evaluations: each module scores one engine on a data set and registers an ``intently eval`` command."""
