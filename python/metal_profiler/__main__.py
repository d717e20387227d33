"""``python -m metal_profiler``: the same as ``metal-profile``."""

import sys

from .metal_profile import main

sys.exit(main())
