"""``python -m synthguard ...`` is the ``synthguard`` command."""

from .cli import main

if __name__ == "__main__":
    main()
