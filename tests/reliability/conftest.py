"""Reliability tests: fuzzing, limits, abuse of the language server, no code execution, bad settings.

`gs_fuzz.py` and `gs_lsp.py` are shared helpers (also used by scripts/fuzz_campaign.py); this directory
is put on sys.path so the tests can import them whatever pytest's import mode.

Scale: GRADSIGHT_FUZZ_SCALE (default 1) multiplies the number of examples, mutants and messages of the
randomised tests; GRADSIGHT_RELIABILITY_FULL=1 also runs the full-size limit cases (minutes).
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

