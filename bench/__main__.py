"""``python3 -m bench``: see :mod:`bench.driver`."""

import sys

from .driver import main

sys.exit(main())
