"""``python -m zero_lab``: the same command line as ``zero-lab``."""

import sys

from zero_lab.cli import main

sys.exit(main())
