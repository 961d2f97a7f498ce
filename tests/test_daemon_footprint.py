"""The daemon does not carry what only `mavend models pull` needs.

`onnx` is installed for the e5 conversion at pull time. onnxruntime-extensions' package
`__init__` imports it whenever it is there, which cost the daemon about 14 MiB of RSS
(measured: a USE embedder opened the old way, 246.8 vs 231.2 MiB). The embedder finds the
custom-op library instead of importing the package (mavend/router/embedder.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import require_model

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys
from pathlib import Path
from mavend.router.embedder import UseEmbedder
vectors = UseEmbedder(Path(sys.argv[1])).embed(["turn on the kitchen light"])
print(json.dumps({"shape": list(vectors.shape),
                  "loaded": sorted(m for m in ("onnx", "onnxruntime_extensions", "ml_dtypes")
                                   if m in sys.modules)}))
"""


def test_the_use_embedder_runs_without_importing_the_onnx_package() -> None:
    model = require_model("use-multilingual-int8")
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(model)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["shape"][0] == 1 and seen["shape"][1] > 100
    assert seen["loaded"] == []
