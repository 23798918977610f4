"""plankit: plans that AI agents write, check, run and show.

The package is one foundation (:mod:`plankit.markdown`, :mod:`plankit.textio`,
:mod:`plankit.errors`) under four plan systems; TeDDy action plans live in
:mod:`plankit.teddy`.
"""

__version__ = "0.1.0"
