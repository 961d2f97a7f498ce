"""``python -m mavend.models pull|list|verify``: the model commands without the full CLI."""

import sys

from mavend.cli.models import main

sys.exit(main(["models", *sys.argv[1:]]))
