"""``python -m synthguard ...`` is the ``synthguard`` command."""

from .cli import run

if __name__ == "__main__":
    run()
