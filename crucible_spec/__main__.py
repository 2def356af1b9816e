"""`python -m crucible_spec` is `crucible-spec`."""

import sys

from .cli import main

sys.exit(main())
