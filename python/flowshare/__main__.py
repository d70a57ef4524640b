"""``python -m flowshare``: the same command line as ``flowshare``."""

import sys

from .cli import main

sys.exit(main())
