"""AES (FIPS-197) cores, their building blocks and a reference model."""

from .core import AES


__all__ = ["AES"]
