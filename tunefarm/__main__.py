"""``python -m tunefarm``: the ``tunefarm`` command."""
import sys

from tunefarm.cli import main

sys.exit(main())
