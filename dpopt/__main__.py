"""``python -m dpopt``: the ``dpopt`` command (:func:`dpopt.cli.main.main`)."""

import sys

from dpopt.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
