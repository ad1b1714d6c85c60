"""``python -m synthguard ...`` is the ``synthguard`` command."""

from .cli import program

if __name__ == "__main__":
    program()
