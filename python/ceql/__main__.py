"""``python -m ceql``: the command-line tool, as the ``ceql`` command."""

import sys

from .cli import main

sys.exit(main())
