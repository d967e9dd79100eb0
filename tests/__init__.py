"""Spotforge's tests.

Triton kernels run on the CPU through Triton's interpreter, which triton selects when it is
first imported; this package is imported before any test module, so it is set here.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")
