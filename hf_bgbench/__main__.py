"""``python -m hf_bgbench`` = the ``bgbench`` command."""

import sys

from hf_bgbench.cli import main

sys.exit(main())
