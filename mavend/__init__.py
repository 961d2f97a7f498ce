"""mavend: a local, private voice assistant daemon."""

__version__ = "0.1.0"
