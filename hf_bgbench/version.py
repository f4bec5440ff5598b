"""The package version, at the bottom layer so the results format can record it."""

__version__ = "0.1.0"
