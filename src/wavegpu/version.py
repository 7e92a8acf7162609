"""The package's version, below every layer: the facade exports it (`wavegpu.__version__`) and
the compiled engine's disk cache keys on it, without importing the facade."""

__version__ = "0.1.0"
