"""The version of zero-rewards, in one place (read by pyproject.toml and every package)."""

__version__ = "0.1.0"
