"""``python -m tunefarm.cli``: the ``tunefarm`` command."""
import sys

from . import main

sys.exit(main())
